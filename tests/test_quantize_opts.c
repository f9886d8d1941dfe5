/* test_quantize_opts.c - llama-quantize's --override-kv and
 * --include-weights / --exclude-weights: `mfmt quantize` with the same
 * arguments writes the bytes llama-quantize wrote (their sha256 recorded in
 * tests/data/quantize_llama_opts.json from the oracle, c392e50), and
 * malformed overrides are refused with llama.cpp's reasons. */
#include "core/core.h"
#include "testlib.h"

#include <jansson.h>
#include <unistd.h>

static char tmp[64];

static void run_case(const char *mfmt, const char *mix, const char *args, const char *want)
{
    char a[1024], out[200], log[200], *cmd = NULL;
    /* IMATRIX stands for "imatrix.dat", a link in the run's directory to
     * the reference imatrix (the path given is written into the output) */
    const char *p = strstr(args, "IMATRIX");
    if (p)
        snprintf(a, sizeof(a), "%.*simatrix.dat%s", (int)(p - args), args, p + 7);
    else
        snprintf(a, sizeof(a), "%s", args);
    snprintf(out, sizeof(out), "%s/q.gguf", tmp);
    snprintf(log, sizeof(log), "%s/log", tmp);
    unlink(out);
    if (asprintf(&cmd, "cd %s && %s quantize %s %s/model-F16.gguf %s Q4_K_M 2", tmp, mfmt, a, mix,
                 out) < 0)
        cmd = NULL;
    static char text[1 << 16];
    int rc = cmd ? tl_run_cmd(cmd, log, text, sizeof(text)) : -1;
    free(cmd);
    CHECKF(rc == 0, "%s: exit %d: %s", args, rc, text);
    char hex[129] = "";
    mf_status st;
    mf_status_init(&st);
    if (rc == 0)
        mf_hash_file(out, MF_SHA256, hex, &st);
    mf_status_clear(&st);
    CHECKF(!strcmp(hex, want), "%s: sha256 %s, llama-quantize wrote %s", args, hex, want);
}

static void refused(const char *mfmt, const char *mix, const char *arg, const char *why)
{
    char cmd[2048], log[200];
    static char text[1 << 16];
    snprintf(log, sizeof(log), "%s/log", tmp);
    snprintf(cmd, sizeof(cmd), "%s quantize %s %s/model-F16.gguf %s/r.gguf Q4_K_M", mfmt, arg, mix, tmp);
    CHECKF(tl_run_cmd(cmd, log, text, sizeof(text)) == 2 && strstr(text, why), "%s: %s", arg, text);
    snprintf(cmd, sizeof(cmd), "%s/r.gguf", tmp);
    CHECK(access(cmd, F_OK) != 0);
}

int main(void)
{
    const char *shared = tl_shared_dir(), *mfmt = getenv("MFMT");
    snprintf(tmp, sizeof(tmp), "/tmp/mfmt-qopts-XXXXXX");
    if (!shared || !mfmt || !mkdtemp(tmp)) {
        TL_SKIP("quantize_opts: needs ../shared, MFMT and a temp dir");
        return tl_report("quantize_opts");
    }
    char mix[512], link[600], abs_mix[4096], abs_mfmt[4096];
    snprintf(mix, sizeof(mix), "%s/quant-ref/mix", shared);
    /* the commands run in tmp: absolute paths */
    if (!realpath(mix, abs_mix) || !realpath(mfmt, abs_mfmt)) {
        CHECKF(0, "cannot resolve %s or %s", mix, mfmt);
        return tl_report("quantize_opts");
    }
    snprintf(link, sizeof(link), "%s/imatrix.dat", tmp);
    char target[4200];
    snprintf(target, sizeof(target), "%s/imatrix.dat", abs_mix);
    CHECK(symlink(target, link) == 0);
    mfmt = abs_mfmt;
    snprintf(mix, sizeof(mix), "%.*s", (int)sizeof(mix) - 1, abs_mix);
    json_t *doc = json_load_file("tests/data/quantize_llama_opts.json", 0, NULL);
    json_t *cases = json_object_get(doc, "cases");
    CHECK(json_array_size(cases) >= 4);
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        run_case(mfmt, mix, json_string_value(json_object_get(c, "args")),
                 json_string_value(json_object_get(c, "sha256")));
    }
    json_decref(doc);
    refused(mfmt, mix, "--override-kv nokey", "malformed KV override");
    refused(mfmt, mix, "--override-kv k=bool:maybe", "invalid boolean");
    refused(mfmt, mix, "--override-kv k=list:1", "invalid type");
    refused(mfmt, mix, "--imatrix x --include-weights a --exclude-weights b", "");
    tl_remove_tmpdir(tmp);
    return tl_report("quantize_opts");
}
