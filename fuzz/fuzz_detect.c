/* fuzz_detect.c - libFuzzer harness: mf_detect on arbitrary bytes. Every
 * probe must stay inside the file and always produce a printable detail. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, "");
    mf_detection d;
    mf_status st;
    mf_status_init(&st);
    memset(&d, 0xa5, sizeof(d)); /* a probe that forgets to fill it shows */
    if (mf_detect(path, &d, &st) == 0) {
        if ((unsigned)d.format >= MF_FMT_COUNT || memchr(d.detail, 0, sizeof(d.detail)) == NULL)
            abort();
        volatile size_t n = strlen(mf_format_name(d.format)) + strlen(d.detail);
        (void)n;
    } else if (st.code == MF_OK || !st.msg[0]) {
        abort();
    }
    fuzz_walk_status(&st);
    mf_status_clear(&st);
    return 0;
}
