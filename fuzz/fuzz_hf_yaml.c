/* fuzz_hf_yaml.c - libFuzzer harness: arbitrary bytes as a model card
 * (README.md) whose YAML front matter is read (lib/formats/hf/hf_yaml.c, on libyaml: link -lyaml). */
#include "formats/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mf_status st;
    mf_status_init(&st);
    json_t *j = mf_hf_front_matter((const char *)data, size, &st);
    if (!j && st.code == MF_OK) /* a refusal always says why */
        __builtin_trap();
    json_decref(j);
    mf_status_clear(&st);
    return 0;
}
