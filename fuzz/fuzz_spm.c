/* fuzz_spm.c - libFuzzer harness: arbitrary bytes as a SentencePiece
 * tokenizer.model (lib/formats/hf/hf_spm.c). */
#include "formats/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mf_status st;
    mf_status_init(&st);
    mf_spm s;
    if (mf_spm_parse(data, size, "tokenizer.model", &s, &st) == 0)
        mf_spm_free(&s);
    mf_status_clear(&st);
    return 0;
}
