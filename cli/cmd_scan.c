/* cmd_scan.c - mfmt scan [--json] [--all] [--format sarif] PATH...: is each
 * file safe to load? Exit 0 only when every file is safe. */
#include "cli.h"
#include "scan_sarif.h"

typedef struct scan_run {
    bool json, jsonl, all, quiet;
    json_t *files;
    cli_sarif *sarif; /* --format sarif */
    mf_verdict worst;
    size_t n_files;
} scan_run;

static json_t *finding_json(const mf_finding *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "severity", json_string(mf_verdict_name(f->severity)));
    if (f->member[0])
        json_object_set_new(o, "member", cli_json_string(f->member, strlen(f->member)));
    if (f->offset >= 0)
        json_object_set_new(o, "offset", json_integer(f->offset));
    if (f->file_offset >= 0)
        json_object_set_new(o, "file_offset", json_integer(f->file_offset));
    if (f->opcode)
        json_object_set_new(o, "opcode", json_string(f->opcode));
    if (f->global)
        json_object_set_new(o, "global", cli_json_string(f->global, strlen(f->global)));
    json_object_set_new(o, "message", cli_json_string(f->message, strlen(f->message)));
    return o;
}

static json_t *report_json(const mf_scan_report *r)
{
    json_t *o = json_object(), *fs = json_array(), *gs = json_array();
    char buf[4200];
    const char *p = cli_shown_path(r->path, buf, sizeof(buf));
    json_object_set_new(o, "path", cli_json_string(p, strlen(p)));
    json_object_set_new(o, "verdict", json_string(mf_verdict_name(r->verdict)));
    json_object_set_new(o, "pickles", json_integer((json_int_t)r->n_pickles));
    for (size_t i = 0; i < r->n_globals; i++) {
        json_t *g = json_object();
        json_object_set_new(g, "name", cli_json_string(r->globals[i].name, strlen(r->globals[i].name)));
        json_object_set_new(g, "class", json_string(mf_verdict_name(r->globals[i].cls)));
        json_array_append_new(gs, g);
    }
    json_object_set_new(o, "globals", gs);
    for (size_t i = 0; i < r->n_findings; i++)
        json_array_append_new(fs, finding_json(&r->findings[i]));
    json_object_set_new(o, "findings", fs);
    if (r->dropped_findings)
        json_object_set_new(o, "findings_omitted", json_integer((json_int_t)r->dropped_findings));
    return o;
}

static void print_finding(const mf_finding *f)
{
    printf("  %-9s ", mf_verdict_name(f->severity));
    if (f->member[0])
        printf("%s: ", f->member);
    if (f->offset >= 0)
        printf("byte %lld", (long long)f->offset);
    if (f->file_offset >= 0 && (f->member[0] || f->file_offset != f->offset))
        printf(" (file byte %lld)", (long long)f->file_offset);
    if (f->offset >= 0)
        printf(": ");
    if (f->opcode || f->global)
        printf("%s%s%s: ", f->opcode ? f->opcode : "", f->opcode && f->global ? " " : "",
               f->global ? f->global : "");
    printf("%s\n", f->message);
}

static void print_report(const scan_run *run, const mf_scan_report *r)
{
    char buf[4200];
    printf("%s: %s\n", cli_shown_path(r->path, buf, sizeof(buf)), mf_verdict_name(r->verdict));
    for (size_t i = 0; i < r->n_findings; i++)
        if (run->all || r->findings[i].severity != MF_VERDICT_SAFE)
            print_finding(&r->findings[i]);
    if (r->dropped_findings)
        printf("  ... %zu more findings\n", r->dropped_findings);
}

static int on_report(void *ctx, const mf_scan_report *r)
{
    scan_run *run = ctx;
    run->n_files++;
    if (r->verdict > run->worst)
        run->worst = r->verdict;
    if (run->sarif) {
        cli_sarif_add(run->sarif, r);
    } else if (run->json || run->jsonl) {
        cli_json_emit(run->jsonl ? CLI_JSONL : CLI_JSON, run->files, report_json(r));
    } else if (!run->quiet || r->verdict != MF_VERDICT_SAFE) {
        print_report(run, r);
    }
    return 0;
}

static int run_scan(const cli_args *a)
{
    scan_run run = {0};
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    run.json = mode == CLI_JSON;
    run.jsonl = mode == CLI_JSONL;
    run.all = cli_has(a, "--all");
    run.quiet = cli_has(a, "--quiet");
    const char *format = cli_get(a, "--format");
    if (format && strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "sarif"))
        return cli_usage_error("scan", "--format takes text, json or sarif");
    if (format && !strcmp(format, "json"))
        run.json = true;
    if (format && !strcmp(format, "sarif")) {
        if (run.json || run.jsonl)
            return cli_usage_error("scan", "--format sarif and --json/--jsonl exclude each other");
        if (!(run.sarif = cli_sarif_new()))
            return EXIT_USAGE;
    }
    if (a->n_pos == 0) {
        free(run.sarif);
        return cli_usage_error("scan", "no path given");
    }
    run.files = json_array();
    int rc = EXIT_FINE;
    for (int i = 0; i < a->n_pos; i++) {
        mf_status st;
        mf_status_init(&st);
        const char *path = cli_input_path(a->pos[i], &st);
        if (!path || mf_scan_path(path, on_report, &run, &st)) {
            int e = cli_report(&st);
            if (e > rc)
                rc = e;
        }
        mf_status_clear(&st);
    }
    if (run.worst != MF_VERDICT_SAFE && rc == EXIT_FINE)
        rc = EXIT_BAD_INPUT;
    if (run.sarif) {
        json_decref(run.files);
        cli_sarif_print(run.sarif); /* the exit status is the same as in text */
    } else if (run.json) {
        json_t *root = json_object();
        json_object_set_new(root, "verdict", json_string(mf_verdict_name(run.worst)));
        json_object_set_new(root, "files", run.files);
        cli_print_json(root);
    } else {
        json_decref(run.files);
        if (run.n_files > 1 && !run.jsonl && !run.quiet)
            printf("%zu files: %s\n", run.n_files, mf_verdict_name(run.worst));
    }
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: verdict, files (the contract in doc/DESIGN.md)"},
    {"--jsonl", NULL, NULL, "one JSON object a line, one line per file scanned"},
    {"--all", NULL, NULL, "also the findings judged safe"},
    {"--quiet", "-q", NULL, "print only files that are not safe; the exit status says the rest"},
    {"--format", NULL, "FORMAT", "text (default), json (as --json) or sarif: one SARIF 2.1.0 log, a "
                                 "result per finding (CI code scanning); same exit status"},
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_scan = {"scan", run_scan, "PATH...",
                              "pickle safety: safe, unknown or dangerous; exit 0 only if all safe",
                              opts, "A PATH of - reads standard input (spooled to a temporary file: "
                                    "the readers map their input)."};
