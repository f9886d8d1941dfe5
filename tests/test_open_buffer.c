/* test_open_buffer.c - mf_open_buffer gives what mf_open gives for the same
 * bytes: every single-file fixture of tests/data/api and tests/data/scan_benign
 * (format, tensor content hash, metadata, notes, verdict), opened from a
 * copy in memory; a format spanning several files fails (its other files are
 * looked for beside "mem:ID/name", where there are none);
 * the buffer is read in place (no copy: tensor data points into it). */
#include "testlib.h"
#include "model_desc.h"
#include <mfmt.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int compared;

static int count_dangerous(void *ctx, const mf_scan_report *r)
{
    *(int *)ctx += r->verdict == MF_VERDICT_DANGEROUS;
    return 0;
}

static void same_as_path(const char *path)
{
    uint8_t *buf;
    size_t len;
    if (!md_read_all(path, &buf, &len)) {
        CHECKF(false, "cannot read %s", path);
        return;
    }
    mf_model *a = NULL, *b = NULL;
    mf_status sa, sb;
    mf_status_init(&sa);
    mf_status_init(&sb);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int ra = mf_open(path, NULL, &a, &sa);
    int rb = mf_open_buffer(buf, len, base, NULL, &b, &sb);
    CHECKF(ra == rb, "%s: mf_open %d (%s), mf_open_buffer %d (%s)", path, ra, sa.msg, rb, sb.msg);
    if (ra == 0 && rb == 0) {
        static char da[1 << 16], db[1 << 16];
        md_describe(a, da, sizeof(da));
        md_describe(b, db, sizeof(db));
        CHECKF(strcmp(da, db) == 0, "%s: by path %s\n  from memory %s", path, da, db);
        const char *p = mf_model_path(b);
        CHECKF(strncmp(p, "mem:", 4) == 0 && strstr(p, base), "%s: named %s", path, p);
        for (size_t i = 0; i < mf_model_tensor_count(b); i++) {
            const void *d = mf_tensor_mapped(b, mf_model_tensor_at(b, i));
            CHECKF(!d || ((const uint8_t *)d >= buf && (const uint8_t *)d <= buf + len),
                   "%s: tensor %zu is not read in place", path, i);
        }
        compared++;
    } else if (ra != 0) {
        CHECKF(sa.code == sb.code, "%s: codes %s / %s", path, mf_code_name(sa.code), mf_code_name(sb.code));
    }
    mf_close(a);
    mf_close(b);
    mf_status_clear(&sa);
    mf_status_clear(&sb);
    free(buf);
}

static void each_file(const char *dir)
{
    DIR *d = opendir(dir);
    CHECKF(d != NULL, "cannot list %s", dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (strcmp(e->d_name, "external_data") != 0) /* several files: below */
                each_file(p);
        } else if (S_ISREG(sb.st_mode) && !strstr(e->d_name, ".md") && !strstr(e->d_name, ".py") &&
                   !strstr(e->d_name, ".json")) {
            same_as_path(p);
        }
    }
    if (d)
        closedir(d);
}

/* The number in "mem:ID/name", the name mf_open_buffer gave m. */
static unsigned long mem_id(const mf_model *m)
{
    const char *p = mf_model_path(m);
    return p && strncmp(p, "mem:", 4) == 0 ? strtoul(p + 4, NULL, 10) : 0;
}

/* The tensor count of path opened from memory as `name`. */
static size_t count_from_memory(const char *path, const char *name, unsigned flags,
                                unsigned long *id)
{
    uint8_t *buf;
    size_t len, n = 0;
    CHECK(md_read_all(path, &buf, &len));
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = flags;
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECKF(mf_open_buffer(buf, len, name, &o, &m, &st) == 0, "%s: %s", path, st.msg);
    n = m ? mf_model_tensor_count(m) : 0;
    *id = m ? mem_id(m) : 0;
    mf_close(m);
    mf_status_clear(&st);
    free(buf);
    return n;
}

/* A buffer's name is no path. A file whose path reads "mem:ID/name" while
 * the buffer of that name is open is the file (before: the buffer); and
 * files on disk at "mem:ID/..." are never taken as the buffer's neighbours
 * (before: a config.json planted there turned off the packing inference
 * of a lone pre-quantized safetensors opened from memory). */
static void names_are_not_paths(void)
{
    char tmp[256], cwd[1024], dir[64], cmd[4096];
    if (!tl_make_tmpdir(tmp, sizeof(tmp), "open-buffer-ns") || !getcwd(cwd, sizeof(cwd)))
        return;
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/gguf/dtypes.gguf", &buf, &len));
    mf_model *b = NULL, *f = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open_buffer(buf, len, "x.gguf", NULL, &b, &st) == 0);
    unsigned long id = b ? mem_id(b) : 0;
    CHECK(id > 0);
    /* a real file at the buffer's name, relative to the working folder */
    snprintf(dir, sizeof(dir), "mem:%lu", id);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s' && cp '%s/tests/data/api/onnx/mlp_raw_data.onnx' "
             "'%s/%s/x.gguf'", tmp, dir, cwd, tmp, dir);
    CHECK(system(cmd) == 0);
    CHECK(chdir(tmp) == 0);
    char name[96];
    snprintf(name, sizeof(name), "%s/x.gguf", dir);
    CHECKF(b && strcmp(mf_model_path(b), name) == 0, "buffer named %s", b ? mf_model_path(b) : "?");
    CHECKF(mf_open(name, NULL, &f, &st) == 0, "%s: %s", name, st.msg);
    CHECKF(f && mf_model_format(f) == MF_FMT_ONNX, "%s opened as %s, not as the ONNX file there",
           name, f ? mf_format_name(mf_model_format(f)) : "nothing");
    mf_close(f);
    mf_status_clear(&st);
    CHECK(chdir(cwd) == 0);
    mf_close(b);
    free(buf);

    /* neighbours: the lone GPTQ file's logical tensors are inferred (no
     * config.json beside it); a config.json planted where the next
     * buffer's folder would be must not change that */
    char gptq[1100];
    snprintf(gptq, sizeof(gptq), "%s/tests/data/prequant/gptq-4bit-g32-sym/model.safetensors", cwd);
    unsigned long next;
    size_t want = count_from_memory(gptq, "model.safetensors", MF_OPEN_LOGICAL, &next);
    for (unsigned long k = next + 1; k <= next + 3; k++) { /* the next ids, planted */
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/mem:%lu' && echo '{}' > '%s/mem:%lu/config.json'",
                 tmp, k, tmp, k);
        CHECK(system(cmd) == 0);
    }
    CHECK(chdir(tmp) == 0);
    unsigned long got_id;
    size_t got = count_from_memory(gptq, "model.safetensors", MF_OPEN_LOGICAL, &got_id);
    CHECK(chdir(cwd) == 0);
    CHECKF(got_id > next && got_id <= next + 3, "buffer id %lu, planted %lu..%lu", got_id,
           next + 1, next + 3);
    CHECKF(got == want && want > 0, "lone GPTQ from memory: %zu tensors, %zu with a config.json "
           "planted at mem:%lu/ on disk", want, got, got_id);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

/* A model opened from memory is scanned again after its open returned
 * (mf_model_scan names it by its "mem:ID/name", resolved in its scope). */
static void scan_after_open(void)
{
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/pickle/malicious/os_system.pkl", &buf, &len));
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open_buffer(buf, len, "evil.pkl", NULL, &m, &st) == 0);
    CHECK(m && mf_model_verdict(m) == MF_VERDICT_DANGEROUS);
    int dangerous = 0;
    CHECKF(m && mf_model_scan(m, count_dangerous, &dangerous, &st) == 0, "%s", st.msg);
    CHECKF(dangerous > 0, "mf_model_scan of a buffer: %d dangerous reports", dangerous);
    mf_close(m);
    mf_status_clear(&st);
    free(buf);
}

int main(void)
{
    each_file("tests/data/api");
    each_file("tests/data/scan_benign");
    printf("open_buffer: %d files opened alike by path and from memory\n", compared);
    CHECK(compared > 50);

    /* ONNX with external data: the weights file beside it cannot be found */
    uint8_t *buf;
    size_t len;
    CHECK(md_read_all("tests/data/api/onnx/external_data/model.onnx", &buf, &len));
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_open_buffer(buf, len, "model.onnx", NULL, &m, &st) == -1 && m == NULL);
    /* the reader looks for the file beside the buffer ("mem:ID/weights.bin"):
     * there is none, and nothing on disk is consulted */
    CHECKF(strstr(st.msg, "weights.bin") && strstr(st.msg, "mem:"), "external data: %s", st.msg);
    mf_status_clear(&st);
    free(buf);

    /* a malicious pickle is judged from memory as from its file */
    CHECK(md_read_all("tests/data/api/pickle/malicious/os_system.pkl", &buf, &len));
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = MF_OPEN_REFUSE_UNSAFE;
    CHECK(mf_open_buffer(buf, len, NULL, &o, &m, &st) == -1 && st.code == MF_ERR_UNSAFE);
    mf_status_clear(&st);
    free(buf);

    /* the usual conventions */
    CHECK(mf_open_buffer("x", 1, NULL, NULL, NULL, NULL) == -1);
    CHECK(mf_open_buffer(NULL, 5, NULL, NULL, &m, &st) == -1 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    mf_open_opts bad = {0};
    CHECK(mf_open_buffer("x", 1, NULL, &bad, &m, &st) == -1 && st.code == MF_ERR_USAGE);
    mf_status_clear(&st);
    CHECK(mf_open_buffer("", 0, "empty", NULL, &m, &st) == -1 && m == NULL);
    mf_status_clear(&st);
    names_are_not_paths();
    scan_after_open();
    return tl_report("open_buffer");
}
