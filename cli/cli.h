/* cli.h - shared by the subcommands: argument helpers, exit codes, output. */
#ifndef MF_CLI_H
#define MF_CLI_H
#include "core/core.h"

#include <jansson.h>

/* Exit codes (DESIGN.md): 0 fine, 1 bad or unsafe input, 2 usage or I/O. */
enum { EXIT_FINE = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

typedef struct cli_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage; /* one line: "inspect [--json] [--tensors] PATH" */
    const char *help;  /* one line of what it does */
} cli_cmd;

/* Prints every message of st on stderr ("mfmt: ..."), returns the exit code. */
int cli_report(const mf_status *st);
int cli_exit_code(mf_code c);
int cli_usage_error(const char *cmd, const char *fmt, ...) MF_PRINTF(2, 3);
/* true if argv[i] is "--name" (and, with val, takes the next argument or
 * the part after '='). Advances *i over a consumed value. */
bool cli_flag(int argc, char **argv, int *i, const char *name, const char **val);

/* JSON helpers */
json_t *cli_json_string(const char *s, size_t n); /* lossy on invalid UTF-8 */
json_t *cli_json_value(const mf_value *v);
json_t *cli_json_shape(const int64_t *shape, int ndim, bool reversed);
void cli_print_json(json_t *j); /* prints, newline, decref */
/* A value as short text: arrays summarized ("151936 strings"). */
void cli_fprint_value(FILE *f, const mf_value *v, size_t max_str);
/* Human-readable sizes: "1.5 GiB", counts "7.24B". */
void cli_fmt_bytes(char *buf, size_t n, uint64_t bytes);
void cli_fmt_count(char *buf, size_t n, uint64_t count);
/* A progress bar on stderr, only when it is a terminal. */
typedef struct cli_progress {
    bool on;
    uint64_t total, done;
    const char *label;
    double last;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *label, uint64_t total);
void cli_progress_add(cli_progress *p, uint64_t n);
void cli_progress_end(cli_progress *p);
/* Progress callbacks for the library's options (ctx: a cli_progress):
 * _by adds n bytes; _to sets done of total (total may grow). */
void cli_progress_by(void *ctx, uint64_t n);
void cli_progress_to(void *ctx, uint64_t done, uint64_t total);
/* The bytes of a model's tensors (0 when it cannot be opened): the total a
 * progress bar over its tensors counts to. */
uint64_t cli_input_bytes(const char *path);
/* Opens a model, or reports why (the exit status); *m on success. */
int cli_open_model(const char *path, mf_model **m);
#endif
