/* fuzz_common.h - shared by the libFuzzer harnesses (fuzz/fuzz_*.c).
 *
 * A harness that opens a model gives its input to mf_open_buffer (read in
 * place, no file; fuzz_open_bytes): a sharded index or a split GGUF in the
 * input can only name files beside "mem:ID/input", which do not exist.
 * Harnesses of path-only entry points (detection, scan, a reader run
 * directly) write the input to a file in a private scratch directory that
 * holds nothing else. After a successful open every tensor is
 * hashed (the canonical byte stream reaches every data byte the reader
 * claims) and every metadata value, note and message is walked, so a reader
 * that records a bad pointer or length is caught by ASan here. */
#ifndef MF_FUZZ_COMMON_H
#define MF_FUZZ_COMMON_H

#include "core/core.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[256];

/* Removes a directory and the files in it (one level). */
__attribute__((unused)) static void fuzz_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[768];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Removes the scratch directory and whatever inputs were written there. */
__attribute__((unused)) static void fuzz_cleanup(void)
{
    fuzz_remove_dir(fuzz_dir);
}

/* A private directory, created once per process (tmpfs when there is one). */
__attribute__((unused)) static const char *fuzz_scratch_dir(void)
{
    if (fuzz_dir[0])
        return fuzz_dir;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/mfmt-fuzz-XXXXXX", base);
    if (!mkdtemp(fuzz_dir)) {
        perror("mfmt fuzz: mkdtemp");
        abort(); /* the harness cannot run at all: not a finding */
    }
    atexit(fuzz_cleanup);
    return fuzz_dir;
}

/* Writes the input to DIR/input<suffix>; returns the path (static). */
__attribute__((unused)) static const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[320];
    snprintf(path, sizeof(path), "%s/input%s", fuzz_scratch_dir(), suffix ? suffix : "");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("mfmt fuzz: open");
        abort();
    }
    size_t off = 0;
    while (off < size) {
        ssize_t k = write(fd, data + off, size - off);
        if (k <= 0) {
            perror("mfmt fuzz: write");
            abort();
        }
        off += (size_t)k;
    }
    close(fd);
    return path;
}

/* Reads every byte of a status: messages must be NUL-terminated. */
__attribute__((unused)) static size_t fuzz_walk_status(const mf_status *st)
{
    size_t n = strlen(st->msg);
    for (size_t i = 0; i < st->n_all; i++)
        n += strlen(st->all[i]);
    return n;
}

__attribute__((unused)) static size_t fuzz_walk_value(const mf_value *v, int depth)
{
    size_t n = 0;
    if (depth > 64) /* readers bound nesting; deeper is itself a finding */
        abort();
    switch (v->type) {
    case MF_V_STR:
        if (v->as.s.ptr) {
            /* the bytes promised by len must be readable, then a NUL */
            volatile uint8_t sum = 0;
            for (size_t i = 0; i < v->as.s.len; i++)
                sum += (uint8_t)v->as.s.ptr[i];
            if (v->as.s.ptr[v->as.s.len] != 0)
                abort();
            n += sum;
        }
        break;
    case MF_V_ARR:
        for (size_t i = 0; i < v->as.arr.n; i++)
            n += fuzz_walk_value(&v->as.arr.items[i], depth + 1);
        break;
    default:
        n += (size_t)v->as.u;
        break;
    }
    return n;
}

/* What `inspect` and `hash --tensors` do with a model, minus the printing. */
__attribute__((unused)) static void fuzz_walk_model(const mf_model *m)
{
    volatile size_t sink = strlen(mf_format_name(m->format)) + strlen(m->version);
    for (size_t i = 0; i < m->n_meta; i++) {
        sink += strlen(m->meta[i].key);
        sink += fuzz_walk_value(&m->meta[i].v, 0);
        sink += mf_meta_get(m, m->meta[i].key) != NULL;
    }
    for (size_t i = 0; i < m->n_notes; i++)
        sink += strlen(m->notes[i]);
    sink += (size_t)mf_model_file_bytes(m);
    mf_status st;
    mf_status_init(&st);
    for (size_t i = 0; i < m->n_tensors; i++) {
        const mf_tensor *t = &m->tensors[i];
        sink += strlen(t->name) + strlen(mf_dtype_name(t->dtype));
        sink += (size_t)mf_tensor_nelems(t);
        if (t->ndim < 0 || t->ndim > MF_MAX_DIMS)
            abort();
        const mf_file *f = mf_tensor_file(m, t);
        /* mapped data must lie inside its file's mapping */
        if (t->data && f &&
            (t->data < f->base || t->offset > f->size || t->nbytes > f->size - t->offset ||
             t->data != f->base + t->offset) &&
            !t->strides)
            abort();
        char hex[129];
        if (mf_hash_tensor(m, t, MF_SHA256, hex, &st) == 0)
            sink += strlen(hex);
        sink += fuzz_walk_status(&st);
        mf_status_clear(&st);
    }
    if (m->n_tensors && m->n_tensors < 64)
        sink += mf_tensor_find(m, m->tensors[m->n_tensors - 1].name) != NULL;
    char hex[129];
    if (mf_hash_tensor_content(m, MF_XXH64, hex, &st) == 0)
        sink += strlen(hex);
    mf_status_clear(&st);
    (void)sink;
}

/* Opens the bytes as a model (plainly, then strictly as validate does),
 * walks what the reader built, closes. Returns 0 when it opened. */
__attribute__((unused)) static int fuzz_open_bytes(const uint8_t *data, size_t size, const char *suffix)
{
    char name[64]; /* the suffix is the extension hint a path would give */
    snprintf(name, sizeof(name), "input%s", suffix ? suffix : "");
    int opened = -1;
    for (int strict = 0; strict <= 1; strict++) {
        /* the readers alone: fuzz_pickle and fuzz_zip drive the scan */
        mf_open_opts o = {.struct_size = sizeof(mf_open_opts),
                          .flags = (strict ? MF_OPEN_STRICT : 0) | MF_OPEN_NO_SCAN};
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL;
        int rc = mf_open_buffer(data, size, name, &o, &m, &st);
        fuzz_walk_status(&st);
        if (rc == 0) {
            if (!m || st.code != MF_OK)
                abort(); /* success must mean a model and a clean status */
            fuzz_walk_model(m);
            mf_close(m);
            opened = 0;
        } else if (m != NULL || st.code == MF_OK || !st.msg[0]) {
            abort(); /* failure must say why and leave nothing open */
        }
        mf_status_clear(&st);
    }
    return opened;
}
#endif
