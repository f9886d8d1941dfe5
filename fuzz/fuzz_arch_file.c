/* fuzz_arch_file.c - libFuzzer harness: arbitrary bytes as an arch file
 * (`mfmt convert --arch-file`, lib/ops/hfconv/arch_file.c): loaded and
 * checked strictly; a refusal must say why; what loads is walked (every
 * name row and its pattern matched against a few names). */
#include "fuzz_common.h"

#include "ops/hfconv/arch_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".json");
    mf_status st;
    mf_status_init(&st);
    conv_arch_file *f = conv_arch_file_load(path, &st);
    fuzz_walk_status(&st);
    if (!f && !st.msg[0])
        abort(); /* a refusal always says why */
    if (f && st.code != MF_OK)
        abort();
    volatile size_t sink = 0;
    for (size_t i = 0; f && i < f->n_names; i++) {
        const conv_name_row *r = &f->names[i];
        sink += conv_pattern_match(r->hf, "model.layers.12.mlp.experts.3.w1.weight");
        sink += conv_pattern_match(r->hf, "model.embed_tokens.weight");
        sink += strlen(r->hf) + (r->gguf ? strlen(r->gguf) : 0);
    }
    (void)sink;
    conv_arch_file_free(f);
    mf_status_clear(&st);
    return 0;
}
