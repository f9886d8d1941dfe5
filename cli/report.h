/* report.h - mfmt report's parts (cmd_report.c: the page, summary, types,
 * layers, scan; report_more.c: the memory estimate and the error against
 * an original). */
#ifndef MF_REPORT_H
#define MF_REPORT_H
#include "cli.h"

enum { REPORT_MAX_TYPES = 64, REPORT_MAX_CTX = 5, REPORT_N_KV = 2 };

/* The KV cache types the memory table shows (estimate --kv-type). */
extern const char *const report_kv_types[REPORT_N_KV];

typedef struct report_mem_row {
    int64_t ctx;
    uint64_t kv[REPORT_N_KV], total[REPORT_N_KV]; /* by report_kv_types */
} report_mem_row;

/* The memory to run the model (mf_estimate_path) at a few context lengths. */
typedef struct report_mem {
    bool done;             /* else why: no_estimate */
    char no_estimate[1024];
    uint64_t weight_bytes;
    char weight_type[64];
    int64_t ctx_train;
    report_mem_row rows[REPORT_MAX_CTX];
    size_t n_rows;
} report_mem;

/* --against ORIGINAL: mf_diff(ORIGINAL, MODEL) summed (mf_error_against). */
typedef struct report_against {
    const char *path;
    const char *arch_file; /* --arch-file: the GGUF's names through this file */
    mf_error_report *r;
} report_against;

/* Fills mem for PATH; a model the estimate cannot read is no error (the
 * page says why). -1 only when out of memory. */
int report_memory(const char *path, report_mem *mem);
/* Compares MODEL (at path) with a->path; the exit status. */
int report_against_run(const char *path, report_against *a);
void report_against_free(report_against *a);

/* HTML sections and their JSON (put_text: character data / attribute). */
void report_put_text(FILE *f, const char *s);
void report_memory_html(FILE *f, const report_mem *mem);
json_t *report_memory_json(const report_mem *mem);
void report_against_html(FILE *f, const report_against *a);
json_t *report_against_json(const report_against *a);

#endif
