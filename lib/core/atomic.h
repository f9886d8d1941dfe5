/* atomic.h - atomic output beyond the public mf_atomic (include/mfmt/write.h):
 * temporaries, sets of files, the output-is-an-input check. */
#ifndef MF_CORE_ATOMIC_H
#define MF_CORE_ATOMIC_H

#include "core/model.h"

/* ------------------------------------------------- atomic output (atomic.c)
 * Temporaries are NAME.mfmt-tmp-XXXXXX (files, or a set's staging
 * directory) and PREFIX.mfmt-commit-XXXXXX (a set being renamed into
 * place), each locked (flock) by its living writer. */
bool mf_atomic_is_temp_name(const char *name);
/* Tests only: SIGKILL the process at a point of atomic.c ("write": after a
 * buffer reached the temporary; "link": named, not yet renamed; "stage": a
 * set fully staged, before its commit point; "commit": after the commit
 * point and the first rename), and force named temporaries. */
extern const char *mf_atomic_kill_point;
extern bool mf_atomic_named_only;
/* Removes the temporaries of dead runs in dir; finishes committed sets. */
void mf_atomic_sweep(const char *dir);
/* A set of files that appears together: each file is written (mf_atomic,
 * or any writer taking a path) to the staging path mf_atomic_set_add
 * returns for its final path (same directory as PREFIX); commit moves them
 * all into place (see atomic.c for the guarantee); abort removes them. */
typedef struct mf_atomic_set mf_atomic_set;
int mf_atomic_set_begin(const char *prefix, mf_atomic_set **out, mf_status *st);
const char *mf_atomic_set_add(mf_atomic_set *s, const char *final_path, mf_status *st);
int mf_atomic_set_commit(mf_atomic_set *s, mf_status *st); /* frees s */
void mf_atomic_set_abort(mf_atomic_set *s);                /* frees s */

/* Every writing command refuses an output that is one of its inputs: the
 * same inode as the model's path, any file it maps (every shard of a split
 * set, every weights file of a directory, through tensor owners), or a
 * file a model directory's reader reads (its *.json, *.model, *.txt,
 * *.jinja). A path that does not exist yet passes. */
int mf_output_check(const mf_model *m, const char *out, mf_status *st);
/* The same, for a command that may replace the input file `self` in place
 * (edit): out == self passes, any other input is refused. */
int mf_output_check_replacing(const mf_model *m, const char *self, const char *out, mf_status *st);
/* The same for one more input path (an imatrix file, a model directory). */
int mf_output_check_path(const char *input, const char *out, mf_status *st);

/* Appends len bytes of in_fd from off to w (in the kernel where it can). */
int mf_atomic_copy_from(mf_atomic *w, int in_fd, uint64_t off, uint64_t len, mf_status *st);
/* Appends the runs (len bytes of fd from off each, in order) to w, split
 * over up to `threads` threads by bytes, each copying in the kernel where
 * it can (copy_file_range, else pread + pwrite) at its own output offsets:
 * the file is the same byte for byte whatever the thread count. */
typedef struct mf_copy_run {
    int fd;
    uint64_t off, len;
} mf_copy_run;
int mf_atomic_copy_runs(mf_atomic *w, const mf_copy_run *runs, size_t n, int threads,
                        mf_status *st);
/* The fewest bytes a copy thread is given (4 MiB; tests lower it). */
extern uint64_t mf_atomic_share_min;
/* Copies the file `from` to `to` (whole or not at all). */
int mf_atomic_copy_file(const char *from, const char *to, mf_status *st);

#endif /* MF_CORE_ATOMIC_H */
