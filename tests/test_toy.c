/* test_toy.c - the toy format of the scratch commit: found by its probe,
 * named by the registry, opened, converted by lib/ops untouched. */
#include "core/core.h"
#include "ops/convert_st.h"
#include "testlib.h"

#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    char dir[] = "/tmp/mfmt_toy_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char in[64], out[64];
    snprintf(in, sizeof(in), "%s/m.bin", dir); /* no .toy: the bytes decide */
    snprintf(out, sizeof(out), "%s/o.safetensors", dir);
    static const uint8_t toy[] = {'T', 'O', 'Y', '1', 1, 0, 0, 0, 1, 'w', 2, 0, 0, 0,
                                  0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
    FILE *f = fopen(in, "wb");
    CHECK(f && fwrite(toy, 1, sizeof(toy), f) == sizeof(toy));
    if (f)
        fclose(f);
    mf_status st;
    mf_status_init(&st);
    mf_detection d;
    CHECK(mf_detect(in, &d, &st) == 0 && d.format == MF_FMT_TOY);
    CHECK(strcmp(mf_format_name(MF_FMT_TOY), "toy") == 0);
    mf_model *m = NULL;
    CHECKF(mf_open(in, NULL, &m, &st) == 0, "%s", st.msg);
    if (m) {
        CHECK(m->n_tensors == 1 && m->tensors[0].shape[0] == 2);
        mf_convert_st_opts o = {0};
        CHECKF(mf_convert_to_safetensors(m, out, &o, &st) == 0, "%s", st.msg);
        CHECK(mf_model_print_graph(m, stdout, &st) != 0 && st.code == MF_ERR_USAGE);
        mf_close(m);
    }
    mf_status_clear(&st);
    mf_model *s = NULL;
    CHECK(mf_open(out, NULL, &s, &st) == 0 && s->n_tensors == 1 &&
          memcmp(s->tensors[0].data, toy + 14, 8) == 0);
    mf_close(s);
    mf_status_clear(&st);
    unlink(in);
    unlink(out);
    rmdir(dir);
    return tl_report("toy");
}
