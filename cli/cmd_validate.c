/* cmd_validate.c - mfmt validate PATH...: every rule of the format. */
#include "cli.h"
#include "hf_cli.h"

typedef struct val_out {
    bool json, jsonl, quiet, verbose;
    json_t *files;
} val_out;

/* A file 2..n of a GGUF split set, opened alone: llama.cpp loads the set
 * from its first file, so its load rules are checked there. */
static bool is_later_shard(const mf_model *m)
{
    const mf_value *v = mf_meta_get(m, "split.no");
    return v && v->type == MF_V_U16 && v->as.u > 0;
}

static void print_problem(void *ctx, const char *msg)
{
    printf("  %s: %s\n", (const char *)ctx, msg);
}

static void add_problem(void *ctx, const char *msg)
{
    json_array_append_new(ctx, json_string(msg));
}

static json_t *strings_json(const mf_status *st)
{
    json_t *arr = json_array();
    char buf[4200]; /* the copy of standard input named "-" */
    for (size_t i = 0; st && i < mf_status_count(st); i++)
        json_array_append_new(arr, json_string(cli_unspooled(mf_status_message(st, i), buf,
                                                             sizeof(buf))));
    return arr;
}

static void emit_json(val_out *o, json_t *j)
{
    cli_json_emit(o->jsonl ? CLI_JSONL : CLI_JSON, o->files, j);
}

static int validate_one(val_out *o, const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m = NULL;
    int rc = EXIT_FINE;
    bool structured = o->json || o->jsonl;
    if (cli_open(path, MF_OPEN_STRICT, false, &m, &st) != 0) {
        size_t n = mf_status_count(&st);
        if (structured) {
            emit_json(o, json_pack("{s:s, s:b, s:o}", "path", path, "valid", 0, "problems",
                                   strings_json(&st)));
            rc = cli_exit_code(st.code);
        } else if (cli_exit_code(st.code) == EXIT_BAD_INPUT) {
            /* the verdict and its reasons on one stream, stdout */
            printf("%s: INVALID, %zu problem%s:\n", path, n, n == 1 ? "" : "s");
            rc = cli_report_to(stdout, &st);
        } else {
            rc = cli_report(&st); /* not a verdict: the file could not be read (I/O, memory) */
        }
        mf_status_clear(&st);
        return rc;
    }
    /* a Hugging Face directory: its config must match its weights */
    FILE *report = stdout;
    if (structured || o->quiet)
        report = fopen("/dev/null", "w"); /* the report's text is not wanted */
    int problems = report ? cli_hf_load_report_text(report, m, "", &st) : 0;
    if (report && report != stdout)
        fclose(report);
    /* a GGUF model: what llama.cpp's loader would refuse */
    size_t refused = 0;
    if (problems == 0 && mf_model_format(m) == MF_FMT_GGUF && !is_later_shard(m))
        refused = mf_llama_load_problems(m, NULL, NULL);
    size_t nt = mf_model_tensor_count(m), nn = mf_model_note_count(m), nw = cli_warning_count(m);
    if (structured) {
        json_t *warn = json_array(), *info = json_array();
        for (size_t k = 0; k < nn; k++)
            json_array_append_new(mf_model_note_is_info(m, k) ? info : warn,
                                  json_string(mf_model_note_at(m, k)));
        json_t *j = json_pack("{s:s, s:b, s:s, s:s, s:I, s:o}", "path", path, "valid", problems == 0,
                              "format", mf_format_name(mf_model_format(m)), "version",
                              mf_model_version(m), "n_tensors", (json_int_t)nt, "warnings", warn);
        json_object_set_new(j, "notes", info);
        if (problems)
            json_object_set_new(j, "problems",
                                problems < 0 ? strings_json(&st)
                                             : json_pack("[s]", "the weights do not match config.json"));
        if (refused) {
            json_t *pr = json_array();
            mf_llama_load_problems(m, add_problem, pr);
            json_object_set_new(j, "valid", json_false());
            json_object_set_new(j, "problems", pr);
        }
        emit_json(o, j);
    } else if (problems != 0) {
        if (problems < 0)
            cli_report_to(stdout, &st);
        printf("%s: INVALID, the weights do not match config.json (load report above)\n", path);
    } else if (refused) {
        const mf_value *arch = mf_meta_get(m, "general.architecture");
        bool clip = arch && arch->type == MF_V_STR && !strcmp(arch->as.s.ptr, "clip"); /* an mmproj file */
        printf("%s: INVALID for llama.cpp (%s), %zu problem%s:\n", path,
               clip ? "libmtmd's clip loader, b10256" : "c392e509", refused, refused == 1 ? "" : "s");
        mf_llama_load_problems(m, print_problem, "llama.cpp would refuse it");
    } else {
        if (!o->quiet) {
            char warn[4200], info[4200];
            snprintf(warn, sizeof(warn), "%s: warning: ", path);
            snprintf(info, sizeof(info), "%s: note: ", path);
            cli_print_notes(stdout, m, warn, info, o->verbose);
        }
        if (!o->quiet)
            printf("%s: OK (%s%s%s, %zu tensor%s%s)\n", path, mf_format_name(mf_model_format(m)),
                   cli_version_text(m)[0] ? " " : "", cli_version_text(m), nt, nt == 1 ? "" : "s",
                   nw ? ", with warnings" : "");
    }
    if (problems != 0 || refused)
        rc = EXIT_BAD_INPUT;
    mf_close(m);
    mf_status_clear(&st);
    return rc;
}

static int run_validate(const cli_args *a)
{
    if (a->n_pos == 0)
        return cli_usage_error("validate", "no path given");
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    val_out o = {mode == CLI_JSON, mode == CLI_JSONL, cli_has(a, "--quiet"), cli_has(a, "--verbose"),
                 NULL};
    if (o.json)
        o.files = json_array();
    int worst = EXIT_FINE;
    for (int i = 0; i < a->n_pos; i++) {
        int e = validate_one(&o, a->pos[i]);
        worst = e > worst ? e : worst;
    }
    if (o.json)
        cli_print_json(json_pack("{s:b, s:o}", "valid", worst == EXIT_FINE, "files", o.files));
    return worst;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: {\"valid\", \"files\": [{path, valid, format, ...}]}"},
    {"--jsonl", NULL, NULL, "one JSON object a line, one line per path"},
    {"--quiet", "-q", NULL, "print only the problems; the exit status says the rest"},
    {"--verbose", "-v", NULL, "every warning (e.g. each misaligned tensor), not a summary"},
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_validate = {"validate", run_validate, "PATH...",
                                  "check every rule of the format; exit 1 on a breach", opts,
                                  "A PATH of - reads standard input (spooled to a temporary file)."};
