/* fuzz_mmproj.c - libFuzzer harness: `convert --mmproj` (lib/ops/hfconv/
 * hf2gguf_mmproj.c, mmproj_table.c) over arbitrary vision configs. The
 * input's first byte picks one of tests/data/mmproj/dirs (its weights and
 * tokenizer_config.json are linked into a scratch folder, found from the
 * harness's own path: build/fuzz/bin/ is three levels below the checkout);
 * the rest is config.json, then after the first NUL byte
 * preprocessor_config.json. The projector is converted (f16, f32 or q8_0
 * by the second byte) into the scratch folder and removed again. A refusal
 * must say why; a success must leave no error in the status. */
#include "fuzz_common.h"

#include <limits.h>
#include <mfmt.h>
#include <sys/stat.h>

static const char *const fixtures[] = {
    "gemma3-vl-tiny", "llama4-vl-tiny", "mistral3-vl-tiny", "qwen25vl-tiny",
    "qwen2vl-tiny",   "qwen35-vl-tiny", "qwen3vl-tiny",     "smolvlm-tiny",
};
static char root[PATH_MAX]; /* tests/data/mmproj/dirs, absolute */

static void find_root(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        abort(); /* the harness cannot run at all: not a finding */
    exe[n] = 0;
    for (int up = 0; up < 4; up++) { /* fuzz_mmproj, bin, fuzz, build */
        char *slash = strrchr(exe, '/');
        if (!slash)
            abort();
        *slash = 0;
    }
    snprintf(root, sizeof(root), "%s/tests/data/mmproj/dirs", exe);
    struct stat sb;
    if (stat(root, &sb) != 0) {
        fprintf(stderr, "mfmt fuzz: no %s\n", root);
        abort();
    }
}

static void put(const char *dir, const char *name, const uint8_t *d, size_t n)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        abort();
    if (n)
        fwrite(d, 1, n, f);
    fclose(f);
}

static void link_from(const char *dir, const char *fixture, const char *name)
{
    char from[PATH_MAX + 300], to[PATH_MAX];
    snprintf(from, sizeof(from), "%s/%s/%s", root, fixture, name);
    snprintf(to, sizeof(to), "%s/%s", dir, name);
    unlink(to);
    if (access(from, R_OK) == 0 && symlink(from, to) != 0)
        abort();
}

static char dir[320];

static void remove_vl(void)
{
    fuzz_remove_dir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    if (!root[0])
        find_root();
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "%s/vl", fuzz_scratch_dir());
        if (mkdir(dir, 0700) != 0)
            abort();
        atexit(remove_vl); /* before fuzz_cleanup, which removes the folder's files only */
    }
    const char *fixture = fixtures[data[0] % (sizeof(fixtures) / sizeof(fixtures[0]))];
    static const char *const types[] = {"f16", "f32", "q8_0"};
    const char *type = types[data[1] % 3];
    data += 2, size -= 2;
    const uint8_t *nul = memchr(data, 0, size);
    size_t cfg_n = nul ? (size_t)(nul - data) : size;
    put(dir, "config.json", data, cfg_n);
    put(dir, "preprocessor_config.json", nul ? nul + 1 : data, nul ? size - cfg_n - 1 : 0);
    link_from(dir, fixture, "model.safetensors");
    link_from(dir, fixture, "tokenizer_config.json");
    char out[400];
    snprintf(out, sizeof(out), "%s/mmproj.gguf", fuzz_scratch_dir());
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.mmproj = true;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_convert_to_gguf(dir, out, &o, &st);
    fuzz_walk_status(&st);
    if (rc != 0 && !st.msg[0])
        abort(); /* a refusal always says why */
    if (rc == 0 && st.code != MF_OK)
        abort();
    mf_status_clear(&st);
    unlink(out);
    return 0;
}
