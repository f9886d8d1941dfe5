/* fuzz_hf_vocab.c - libFuzzer harness: the converter's tokenizer keys
 * (lib/ops/hfconv/hf2gguf_vocab.c) and the hf-dir tokenizer summary
 * (lib/formats/hf/hf_tokenizer.c) over arbitrary tokenizer.json and
 * tokenizer_config.json texts (the input split at its first NUL byte),
 * in a scratch directory with a fixed config.json; the input's length picks
 * the architecture whose vocabulary rules run (every conv_vocab kind). */
#include "ops/hfconv/arch.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[64];

static void put(const char *name, const uint8_t *d, size_t n)
{
    char p[128];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite(d, 1, n, f);
        fclose(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "/tmp/mfmt-fuzz-vocab-XXXXXX");
        if (!mkdtemp(dir))
            abort();
        static const char cfg[] = "{\"vocab_size\": 64, \"bos_token_id\": 1, \"eos_token_id\": [2, 3]}";
        put("config.json", (const uint8_t *)cfg, sizeof(cfg) - 1);
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t n1 = nul ? (size_t)(nul - data) : size;
    put("tokenizer.json", data, n1);
    put("tokenizer_config.json", nul ? nul + 1 : data, nul ? size - n1 - 1 : 0);
    mf_status st;
    mf_status_init(&st);
    json_t *cfg = json_pack("{s:i, s:i}", "vocab_size", 64, "bos_token_id", 1);
    mf_kvlist kv;
    if (cfg && mf_kvlist_init(&kv) == 0) {
        const conv_arch *a = &conv_archs[size % conv_n_archs];
        mf_hf_vocab_keys(dir, cfg, &(mf_hf_vocab_opts){.kind = (int)a->vocab, .arch = a->name}, &kv, &st);
        mf_kvlist_free(&kv);
    }
    json_decref(cfg);
    mf_status_clear(&st);
    mf_model *m = NULL;
    if (mf_open(dir, NULL, &m, &st) == 0)
        mf_close(m);
    mf_status_clear(&st);
    return 0;
}
