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

static int compared;

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
    return tl_report("open_buffer");
}
