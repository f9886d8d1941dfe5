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

/* One option of a command. The table of a command drives its parsing
 * (cli_parse), its --help text and the man page check (tests/check_cli.sh):
 * an option not in the table is an error, never a path. */
typedef struct cli_opt {
    const char *name;  /* the spelling shown first: "--max-size" */
    const char *alias; /* other spellings, space-separated ("-q --silent"), or NULL */
    const char *arg;   /* the value's placeholder ("N", "FILE"); NULL: a flag */
    const char *help;  /* one line */
} cli_opt;

/* The command line after cli_parse: options in the order given (each
 * under its canonical name, with its value), then the positional arguments. */
#define CLI_MAX_ARGS 256
typedef struct cli_args {
    const struct cli_cmd *cmd;
    int n_opts;
    struct {
        const char *name, *val; /* val NULL for a flag */
    } opt[CLI_MAX_ARGS];
    int n_pos;
    const char *pos[CLI_MAX_ARGS];
} cli_args;

typedef struct cli_cmd {
    const char *name;
    int (*run)(const cli_args *a);
    const char *args;   /* the positional arguments: "IN.gguf PREFIX" */
    const char *help;   /* one line of what it does */
    const cli_opt *opts; /* ends with {0}; -h/--help is added to every command */
    const char *more;   /* further paragraphs for --help, or NULL */
} cli_cmd;

/* Which of two exit statuses of scan a run of several paths ends with
 * (batch.c): what a CI acts on first wins, dangerous 1 over error 2 over
 * unknown 3 over safe 0. */
int cli_scan_worst_exit(int a, int b);

/* quantize --help's list of types, made from the library's table */
void cli_quantize_print_types(FILE *f);

/* Parses argv (argv[0] is the command name) against c->opts: "--name VAL",
 * "--name=VAL", aliases, "--" ending options, "-" a positional. Returns 0,
 * or the exit status to end with: EXIT_USAGE after an error message, or
 * -1 when --help was printed (exit 0). */
int cli_parse(const cli_cmd *c, int argc, char **argv, cli_args *a);
void cli_print_help(FILE *f, const cli_cmd *c);
/* The last value of option NAME (canonical spelling), or NULL. */
const char *cli_get(const cli_args *a, const char *name);
bool cli_has(const cli_args *a, const char *name);
/* Whether the i-th parsed option is NAME. */
bool cli_is(const cli_args *a, int i, const char *name);

/* -q/--quiet, given to the command being run (main.c sets it): no
 * progress bar, no summary lines; errors still on stderr. */
extern bool cli_quiet;
/* The option table entry of -q/--quiet, with the command's own help. */
#define CLI_OPT_QUIET(help) {"--quiet", "-q", NULL, help}

/* Prints every message of st on stderr ("mfmt: ..."), returns the exit code. */
int cli_report(const mf_status *st);
/* The same on another stream (validate's verdicts go to stdout). */
int cli_report_to(FILE *f, const mf_status *st);
int cli_exit_code(mf_code c);
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* JSON helpers */
json_t *cli_json_string(const char *s, size_t n); /* lossy on invalid UTF-8 */
json_t *cli_json_value(const mf_value *v);
json_t *cli_json_shape(const int64_t *shape, int ndim, bool reversed);
void cli_print_json(json_t *j); /* prints, newline, decref */
void cli_print_jsonl(json_t *j); /* the same on one line (--jsonl) */
/* --json / --jsonl of a read command that takes several paths (json_out.c). */
typedef enum cli_json_mode { CLI_TEXT, CLI_JSON, CLI_JSONL } cli_json_mode;
/* The mode asked for; EXIT_USAGE (message printed) when both are given. */
int cli_json_mode_of(const cli_args *a, cli_json_mode *m);
/* One path's object (released): CLI_JSONL prints it on a line of its own
 * at once (batch use: one line per path as each is done); CLI_JSON appends
 * it to `all`, printed whole at the end, or prints it indented when all is
 * NULL. */
void cli_json_emit(cli_json_mode m, json_t *all, json_t *obj);
/* --json over several paths is one JSON array of the per-path objects (one
 * path: the object alone). For commands that print an object as they go:
 * cli_json_list_item() before each object ("[" before the first, "," after
 * the others), cli_json_list_end() after the last ("]", or "[]" when no path
 * gave an object). Both do nothing unless `many`. */
void cli_json_list_item(bool many);
void cli_json_list_end(bool many);
/* A value as short text: arrays summarized ("151936 strings"). */
void cli_fprint_value(FILE *f, const mf_value *v, size_t max_str);
/* GGUF's name of a value type: "u32", "string", "array", ... */
const char *cli_vtype_name(mf_vtype t);
/* Human-readable sizes: "1.5 GiB", counts "7.24B". */
void cli_fmt_bytes(char *buf, size_t n, uint64_t bytes);
void cli_fmt_count(char *buf, size_t n, uint64_t count);
/* A progress bar on stderr with the rate and the time left, only when
 * stderr is a terminal (and MFMT_NO_PROGRESS is unset); silent otherwise. */
typedef struct cli_progress {
    bool on;
    uint64_t total, done;
    const char *label;
    double last, start;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *label, uint64_t total);
void cli_progress_add(cli_progress *p, uint64_t n);
void cli_progress_end(cli_progress *p);
/* An mf_progress_fn over a cli_progress (ctx): follows the library's
 * cumulative done/total; never cancels. */
int cli_progress_cb(void *ctx, uint64_t done, uint64_t total);
/* An mf_sink_fn writing to stdout (ctx unused). */
int cli_stdout_sink(void *ctx, const void *buf, size_t n, mf_status *st);
/* Whether a Hub name not in the cache may be read remotely (main.c sets
 * it for the commands that read headers over HTTP). */
extern bool cli_hub_remote;
/* Batch runs (batch.c): the options, for the read commands' tables. */
#define CLI_OPTS_BATCH                                                                        \
    {"--from-file", NULL, "FILE", "batch: the paths, one a line, from FILE ('-': standard "     \
                                  "input); with --jsonl each line carries \"input\""},         \
    {"-@", NULL, NULL, "batch: the paths on standard input (--from-file -)"},                 \
    {"--skip-done", NULL, "RESULTS", "batch: skip the inputs with a result in RESULTS.jsonl "  \
                                     "(resume a run)"}
/* The input being run in a batch (its "input" key in --jsonl), or NULL. */
extern const char *cli_batch_input;
/* Runs a command once per listed path when --from-file / -@ was given
 * (the exit status: the worst); -1 when not a batch run. */
int cli_batch_run(const cli_cmd *c, const cli_args *a);

/* The options of the commands that read remote files (URLs, Hub files
 * not in the cache), for their option tables. */
#define CLI_OPTS_REMOTE                                                                       \
    {"--token", NULL, "TOKEN", "Hub token for gated repos (default: $HF_TOKEN, else the "       \
                               "cache's token file); never printed"},                          \
    {"--max-bytes", NULL, "N", "remote reads: fetch at most N bytes in all (default 128MiB; "   \
                               "0: no limit)"},                                                \
    {"--timeout", NULL, "S", "remote reads: connect timeout and longest stall in seconds "      \
                             "(default 30)"}
/* Applies --token/--max-bytes/--timeout (mf_remote_configure) and allows
 * remote Hub files for the commands that have them; the exit status. */
int cli_remote_setup(const cli_args *a);
/* "mfmt: N bytes fetched over HTTP" on stderr when any were (not -q). */
void cli_remote_report(void);
/* A Hub name (ORG/NAME[@REV], hf://...) -> the cache's path (or URL);
 * any other path, "-" included, as it is. NULL, st filled, when a Hub name
 * cannot be resolved. The result lives until exit. */
const char *cli_hub_path(const char *path, mf_status *st);
/* A PATH operand: a Hub name (ORG/NAME[@REV], hf://...) is resolved in the
 * Hugging Face cache (mf_hub_resolve); "-" is standard input, copied once to a temporary file
 * (removed at exit) for the commands whose readers map their input; any
 * other path as it is. NULL, st filled, when the copy fails. */
const char *cli_input_path(const char *path, mf_status *st);
/* p for output: the temporary copy of standard input (or a member in it,
 * "COPY:member") shown as "-" ("-:member"); buf holds the text when needed. */
const char *cli_shown_path(const char *p, char *buf, size_t n);
/* *path "-": replaced by the spooled copy of standard input (the errors
 * reported, EXIT_* returned, when it cannot be made); else left alone. */
int cli_spool_input(const char **path);
/* Standard input read into memory once (at most 4 GiB; later calls give the
 * same bytes): cli_open's "-" opens it in place (mf_open_buffer), no
 * temporary file. cli_stdin_in_memory: whether it has been read. */
int cli_stdin_bytes(const uint8_t **b, size_t *n, mf_status *st);
bool cli_stdin_in_memory(void);
/* Reading standard input into memory failed part way (past MFMT_MAX_READ,
 * out of memory, a read error): what was read is gone, so nothing else may
 * read the rest as if it were the whole. */
bool cli_stdin_broken(void);
/* msg with the spooled copy's name written "-" (in buf when it changes);
 * standard input in memory ("mem:ID/-") is "-" too. */
const char *cli_unspooled(const char *msg, char *buf, size_t n);
/* Opens a model for a command: no scan unless the command needs it
 * (flags MF_OPEN_*; MF_OPEN_NO_SCAN is added unless `scan`). "-" is standard
 * input read into memory (unless a command spooled it to a file before). */
int cli_open(const char *path, unsigned flags, bool scan, mf_model **m, mf_status *st);
/* The same with a config.json for a training checkpoint (mf_open_opts.config). */
int cli_open_cfg(const char *path, unsigned flags, const char *config, bool scan, mf_model **m,
                 mf_status *st);
/* Opens a model for a command that needs no scan, or reports why (the
 * exit status); *m on success. */
int cli_open_model(const char *path, mf_model **m);
/* The shortest "%g" text that reads back to x (as a float when is_f32):
 * 1e-06, not 9.9999999999999995e-07. */
void cli_fmt_float(char *buf, size_t n, double x, bool is_f32);
/* The model's notes, one a line: warnings after warn_prefix, then the
 * informational ones (mf_model_note_is_info) after info_prefix; the
 * per-tensor alignment notes collapse to one summary line unless verbose. */
void cli_print_notes(FILE *f, const mf_model *m, const char *warn_prefix, const char *info_prefix,
                     bool verbose);
/* How many of the model's notes are warnings (not information). */
size_t cli_warning_count(const mf_model *m);
/* The model's version for text output; "" when it only repeats the format name. */
const char *cli_version_text(const mf_model *m);
#endif
