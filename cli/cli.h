/* cli.h - shared by the subcommands: argument helpers, exit codes, output.
 * The CLI is built on the public API only (include/mfmt.h; compiled with
 * -Iinclude and nothing from lib/), which shows that API is complete. */
#ifndef MF_CLI_H
#define MF_CLI_H
#include <mfmt.h>

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

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
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
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
/* An mf_progress_fn over a cli_progress (ctx): follows the library's
 * cumulative done/total; never cancels. */
int cli_progress_cb(void *ctx, uint64_t done, uint64_t total);
/* An mf_sink_fn writing to stdout (ctx unused). */
int cli_stdout_sink(void *ctx, const void *buf, size_t n, mf_status *st);
/* Opens a model for a command: no scan unless the command needs it
 * (flags MF_OPEN_*; MF_OPEN_NO_SCAN is added unless `scan`). */
int cli_open(const char *path, unsigned flags, bool scan, mf_model **m, mf_status *st);
/* Opens a model for a command that needs no scan, or reports why (the
 * exit status); *m on success. */
int cli_open_model(const char *path, mf_model **m);
#endif
