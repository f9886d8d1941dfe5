/* fuzz_train.c - libFuzzer harness: a training-checkpoint folder
 * (lib/formats/train: DCP, DeepSpeed, Megatron torch_dist) written from
 * the input, then read by the reader the first byte picks, leniently and
 * strictly (fuzz_reader.h: every tensor streamed and hashed, so the
 * gathers and the pieces run), its file runs checked against the files
 * they name, and a DCP .metadata's slices (scan's slices_named hook)
 * checked the same way.
 *
 * Input: one byte (reader: 0 DCP, 1 DeepSpeed, 2 Megatron), then records
 * NAME '\n' LEN (4 bytes, little-endian) BYTES, each a file of the folder
 * (NAME of [A-Za-z0-9._-], 64 files at most); fuzz/train_seeds.py turns
 * the test checkpoints of tests/data/train into seeds. */
#include "fuzz_reader.h"

#include <sys/stat.h>

static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
}

static bool name_ok(const uint8_t *s, size_t n)
{
    if (n == 0 || n > 64 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

/* Every run lies inside the file it names. */
static void check_runs(mf_model *m)
{
    for (size_t i = 0; i < m->n_tensors; i++) {
        mf_file_run *runs = NULL;
        size_t n = 0;
        mf_status st;
        mf_status_init(&st);
        if (mf_model_file_runs(m, &m->tensors[i], &runs, &n, &st) == 0) {
            uint64_t total = 0;
            for (size_t k = 0; k < n; k++) {
                struct stat sb;
                if (stat(runs[k].path, &sb) != 0 || runs[k].off > (uint64_t)sb.st_size ||
                    runs[k].len > (uint64_t)sb.st_size - runs[k].off)
                    abort(); /* a copy would read outside the file */
                total += runs[k].len;
            }
            if (total != m->tensors[i].nbytes)
                abort(); /* the runs are the tensor's bytes, no more, no less */
            free(runs);
        }
        fuzz_walk_status(&st);
        mf_status_clear(&st);
    }
}

static void on_slice(void *ctx, const char *file, uint64_t off, uint64_t len)
{
    (void)off;
    (void)len;
    *(size_t *)ctx += strlen(file);
}

static void slices(const char *dir)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/.metadata", dir);
    mf_file f;
    mf_status st;
    mf_status_init(&st);
    if (mf_map_file(p, &f, &st) == 0) {
        const mf_reader *r;
        size_t sink = 0;
        for (size_t i = 0; (r = mf_reader_at(i)) != NULL; i++)
            if (r->scan && r->scan->slices_named)
                r->scan->slices_named(p, f.base, f.size, on_slice, &sink);
        mf_unmap_file(&f);
    }
    mf_status_clear(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const mf_format which[] = {MF_FMT_DCP, MF_FMT_DEEPSPEED, MF_FMT_MEGATRON};
    if (size < 1)
        return 0;
    const char *dir = fuzz_scratch_dir();
    clear_dir(dir);
    mf_format fmt = which[data[0] % 3];
    size_t at = 1, files = 0;
    while (at < size && files < 64) {
        const uint8_t *nl = memchr(data + at, '\n', size - at < 65 ? size - at : 65);
        if (!nl || !name_ok(data + at, (size_t)(nl - (data + at))) || size - (size_t)(nl - data) < 5)
            break;
        char name[80], path[400];
        snprintf(name, sizeof(name), "%.*s", (int)(nl - (data + at)), (const char *)data + at);
        size_t p = (size_t)(nl - data) + 1;
        uint32_t len = (uint32_t)data[p] | (uint32_t)data[p + 1] << 8 |
                       (uint32_t)data[p + 2] << 16 | (uint32_t)data[p + 3] << 24;
        p += 4;
        if (len > size - p)
            len = (uint32_t)(size - p);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (fuzz_write_named(path, data + p, len))
            abort();
        at = p + len;
        files++;
    }
    fuzz_read(dir, fmt, check_runs);
    slices(dir);
    return 0;
}
