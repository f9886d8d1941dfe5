/* mmproj_test.h - what test_mmproj.c (vision projectors) and
 * test_mmaudio.c (audio encoders) share: `convert --mmproj` of a
 * directory, a changed copy of one of DATA's directories, a refusal
 * checked (code, message, nothing written), and validate's clip-loader
 * check of a file without one key. The includer defines DATA (its
 * tests/data directory) first. */
#ifndef MFMT_TESTS_MMPROJ_TEST_H
#define MFMT_TESTS_MMPROJ_TEST_H

#include "testlib.h"

#include "core/core.h"
#include "formats/formats.h"
#include "ops/hfconv/hfconv.h"
#include "ops/hfconv/llama_load.h"

#include <stdlib.h>
#include <unistd.h>

static int convert(const char *dir, const char *out, const char *type, bool vocab_only, mf_status *st)
{
    mf_convert_gguf_opts o;
    mf_convert_gguf_opts_init(&o);
    o.type = type;
    o.mmproj = true;
    o.vocab_only = vocab_only;
    return mf_convert_to_gguf(dir, out, &o, st);
}

static void first_msg(void *ctx, const char *msg)
{
    char *out = ctx;
    if (!out[0])
        snprintf(out, 256, "%s", msg);
}

/* A copy of DATA/dirs/SRC as TMP/NAME with config.json (and, if given,
 * tokenizer_config.json) replaced. */
static void variant(const char *tmp, const char *src, const char *name, const char *config, const char *tok,
                    char *out, size_t cap)
{
    char cmd[2048], p[700];
    snprintf(out, cap, "%s/%s", tmp, name);
    snprintf(cmd, sizeof(cmd), "cp -r " DATA "/dirs/%s %s", src, out);
    CHECK(system(cmd) == 0);
    const char *files[2] = {config, tok}, *names[2] = {"config.json", "tokenizer_config.json"};
    for (int i = 0; i < 2; i++) {
        if (!files[i])
            continue;
        snprintf(p, sizeof(p), "%s/%s", out, names[i]);
        FILE *f = fopen(p, "w");
        CHECK(f != NULL);
        if (f) {
            fputs(files[i], f);
            fclose(f);
        }
    }
}

static void refused(const char *tmp, const char *dir, const char *type, bool vocab_only, mf_code code,
                    const char *needle)
{
    char out[600];
    snprintf(out, sizeof(out), "%s/refused.gguf", tmp);
    mf_status st;
    mf_status_init(&st);
    int rc = convert(dir, out, type, vocab_only, &st);
    CHECKF(rc != 0 && st.code == code && strstr(st.msg, needle), "%s: rc %d code %d \"%s\", wanted \"%s\"", dir, rc,
           (int)st.code, st.msg, needle);
    CHECKF(access(out, F_OK) != 0, "%s: an output was left after the error", dir);
    printf("refused: %s\n", st.msg);
    mf_status_clear(&st);
}

/* validate's check of an mmproj: DATA/dirs/SRC converted (f16) without
 * `key`, a key clip.cpp reads without a default, is refused with the key
 * named (one problem) */
static void without_key_refused(const char *tmp, const char *src, const char *key)
{
    char in[600], out[600], dir[600], msg[256] = "";
    snprintf(in, sizeof(in), "%s/ok.gguf", tmp);
    snprintf(out, sizeof(out), "%s/without.gguf", tmp);
    snprintf(dir, sizeof(dir), DATA "/dirs/%s", src);
    mf_status st;
    mf_status_init(&st);
    CHECK(convert(dir, in, "f16", false, &st) == 0);
    mf_edit_op op = {MF_EDIT_DELETE, key, NULL};
    mf_edit_opts eo = {.struct_size = sizeof(eo), .flags = MF_EDIT_FORCE};
    int rc = mf_edit(in, out, &op, 1, &eo, NULL, &st);
    CHECKF(rc == 0, "%s", st.msg);
    mf_status_clear(&st);
    mf_model *m = NULL;
    if (rc == 0 && mf_open(out, NULL, &m, &st) == 0) {
        size_t np = mf_llama_load_problems(m, first_msg, msg);
        CHECKF(np == 1 && strstr(msg, key), "%zu problems: %s", np, msg);
        printf("validate of an mmproj without %s: %s\n", key, msg);
        mf_close(m);
    }
    mf_status_clear(&st);
    unlink(in);
    unlink(out);
}

#endif
