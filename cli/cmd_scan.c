/* cmd_scan.c - mfmt scan [--json] [--all] [--format sarif] [--allow GLOBAL]
 * PATH...: is each file safe to load? The exit status is the verdict, for
 * CI (doc/scan.md "Exit status"): 0 safe, 1 dangerous, 2 error (a path that
 * cannot be read, usage), 3 unknown. */
#include "cli.h"
#include "scan_sarif.h"

#include <ctype.h>
#include <stdlib.h>

enum { EXIT_SCAN_UNKNOWN = 3 };

/* The names the user trusts (--allow, --allow-file): "module.name", or
 * "module.*" for every name of a module and its submodules. */
typedef struct allowlist {
    char **v;
    size_t n, cap;
} allowlist;

typedef struct scan_run {
    bool json, jsonl, all, quiet;
    json_t *files;
    cli_sarif *sarif; /* --format sarif */
    mf_verdict worst;
    size_t n_files;
    allowlist allow;
} scan_run;

/* ------------------------------------------------------------ allowlist */

static bool allow_matches(const allowlist *al, const char *global)
{
    for (size_t i = 0; i < al->n; i++) {
        const char *e = al->v[i];
        size_t n = strlen(e);
        if (n >= 2 && !strcmp(e + n - 2, ".*")) {
            if (!strncmp(global, e, n - 1)) /* "pkg." prefixes pkg.x and pkg.sub.x */
                return true;
        } else if (!strcmp(global, e)) {
            return true;
        }
    }
    return false;
}

/* An entry is a dotted Python name (or module.*): nothing else can match a
 * GLOBAL, so anything else is a mistake worth stopping for. */
static bool allow_entry_ok(const char *e)
{
    const char *dot = strchr(e, '.');
    if (!dot || dot == e || e[strlen(e) - 1] == '.')
        return false;
    for (const char *p = e; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || (*p == '*' && !p[1])))
            return false;
    return true;
}

static int allow_add(allowlist *al, const char *e, const char *where)
{
    if (!allow_entry_ok(e))
        return cli_usage_error("scan", "%s: '%s' is not a Python name (module.name or module.*)",
                               where, e);
    if (al->n == al->cap) {
        size_t cap = al->cap ? 2 * al->cap : 16;
        char **v = realloc(al->v, cap * sizeof(*v));
        if (!v)
            return cli_usage_error("scan", "out of memory");
        al->v = v;
        al->cap = cap;
    }
    if (!(al->v[al->n] = strdup(e)))
        return cli_usage_error("scan", "out of memory");
    al->n++;
    return 0;
}

/* One name a line; blank lines and '#' comments are skipped. */
static int allow_load_file(allowlist *al, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mfmt: %s: cannot open the allowlist\n", path);
        return EXIT_USAGE;
    }
    char line[1024], where[1200];
    int rc = 0;
    for (unsigned no = 1; !rc && fgets(line, sizeof(line), f); no++) {
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *b = line, *e = line + strlen(line);
        while (*b && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            *--e = 0;
        snprintf(where, sizeof(where), "%s:%u", path, no);
        if (*b)
            rc = allow_add(al, b, where);
    }
    fclose(f);
    return rc;
}

static void allow_free(allowlist *al)
{
    for (size_t i = 0; i < al->n; i++)
        free(al->v[i]);
    free(al->v);
}

/* A finding the user's allowlist lifts: a name the scanner does not know
 * (unknown). A name known to run code stays dangerous whatever the list. */
static bool finding_allowed(const scan_run *run, const mf_finding *f)
{
    return f->global && f->severity == MF_VERDICT_UNKNOWN && allow_matches(&run->allow, f->global);
}

/* The report as the user's allowlist judges it: the lifted findings become
 * notes (safe) and the verdict is the worst of the rest. When findings were
 * dropped (too many to keep) the scanner's verdict stands. The copy owns
 * only its findings array. */
static mf_scan_report *judged_report(const scan_run *run, const mf_scan_report *r,
                                     mf_scan_report *copy)
{
    if (!run->allow.n || !r->n_findings)
        return NULL;
    *copy = *r;
    mf_finding *fs = malloc(r->n_findings * sizeof(*fs));
    if (!fs)
        return NULL;
    memcpy(fs, r->findings, r->n_findings * sizeof(*fs));
    mf_verdict v = MF_VERDICT_SAFE;
    for (size_t i = 0; i < r->n_findings; i++) {
        if (finding_allowed(run, &fs[i]))
            fs[i].severity = MF_VERDICT_SAFE;
        if (fs[i].severity > v)
            v = fs[i].severity;
    }
    copy->findings = fs;
    copy->verdict = r->dropped_findings ? r->verdict : v;
    return copy;
}

/* The names of r the allowlist lifted, each once, as a JSON array. */
static json_t *allowed_names(const scan_run *run, const mf_scan_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_globals; i++)
        if (r->globals[i].cls == MF_VERDICT_UNKNOWN && allow_matches(&run->allow, r->globals[i].name))
            json_array_append_new(a, cli_json_string(r->globals[i].name, strlen(r->globals[i].name)));
    return a;
}

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

static json_t *report_json(const scan_run *run, const mf_scan_report *r)
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
        if (r->globals[i].cls == MF_VERDICT_UNKNOWN && allow_matches(&run->allow, r->globals[i].name))
            json_object_set_new(g, "allowed", json_true());
        json_array_append_new(gs, g);
    }
    json_object_set_new(o, "globals", gs);
    if (run->allow.n)
        json_object_set_new(o, "allowed", allowed_names(run, r));
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
    for (size_t i = 0; i < r->n_globals; i++)
        if (r->globals[i].cls == MF_VERDICT_UNKNOWN && allow_matches(&run->allow, r->globals[i].name))
            printf("  allowed   %s: off mfmt's allowlist, trusted by the user (--allow)\n",
                   r->globals[i].name);
    for (size_t i = 0; i < r->n_findings; i++)
        if (run->all || r->findings[i].severity != MF_VERDICT_SAFE)
            print_finding(&r->findings[i]);
    if (r->dropped_findings)
        printf("  ... %zu more findings\n", r->dropped_findings);
}

static int on_report(void *ctx, const mf_scan_report *scanned)
{
    scan_run *run = ctx;
    mf_scan_report copy;
    const mf_scan_report *judged = judged_report(run, scanned, &copy);
    const mf_scan_report *r = judged ? judged : scanned;
    run->n_files++;
    if (r->verdict > run->worst)
        run->worst = r->verdict;
    if (run->sarif) {
        cli_sarif_add(run->sarif, r);
    } else if (run->json || run->jsonl) {
        cli_json_emit(run->jsonl ? CLI_JSONL : CLI_JSON, run->files, report_json(run, r));
    } else if (!run->quiet || r->verdict != MF_VERDICT_SAFE) {
        print_report(run, r);
    }
    if (judged)
        free(copy.findings);
    return 0;
}

static int exit_of_verdict(mf_verdict v)
{
    return v == MF_VERDICT_DANGEROUS ? EXIT_BAD_INPUT
           : v == MF_VERDICT_UNKNOWN ? EXIT_SCAN_UNKNOWN
                                     : EXIT_FINE;
}

static int load_allowlist(scan_run *run, const cli_args *a)
{
    for (int i = 0; i < a->n_opts; i++) {
        int rc = cli_is(a, i, "--allow")        ? allow_add(&run->allow, a->opt[i].val, "--allow")
                 : cli_is(a, i, "--allow-file") ? allow_load_file(&run->allow, a->opt[i].val)
                                                : 0;
        if (rc)
            return rc;
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
    int rc = load_allowlist(&run, a);
    if (rc) {
        free(run.sarif);
        allow_free(&run.allow);
        return rc;
    }
    run.files = json_array();
    for (int i = 0; i < a->n_pos; i++) {
        mf_status st;
        mf_status_init(&st);
        const char *path = cli_input_path(a->pos[i], &st);
        if (!path || mf_scan_path(path, on_report, &run, &st)) {
            (void)cli_report(&st);
            rc = EXIT_USAGE; /* not scanned: an error, never a verdict */
        }
        mf_status_clear(&st);
    }
    rc = cli_scan_worst_exit(rc, exit_of_verdict(run.worst));
    if (run.sarif) {
        json_decref(run.files);
        cli_sarif_print(run.sarif); /* the exit status is the same as in text */
    } else if (run.json) {
        json_t *root = json_object();
        json_object_set_new(root, "verdict", json_string(mf_verdict_name(run.worst)));
        if (run.allow.n) {
            json_t *al = json_array();
            for (size_t i = 0; i < run.allow.n; i++)
                json_array_append_new(al, json_string(run.allow.v[i]));
            json_object_set_new(root, "allowlist", al);
        }
        json_object_set_new(root, "files", run.files);
        cli_print_json(root);
    } else {
        json_decref(run.files);
        if (run.n_files > 1 && !run.jsonl && !run.quiet)
            printf("%zu files: %s\n", run.n_files, mf_verdict_name(run.worst));
    }
    allow_free(&run.allow);
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: verdict, files (the contract in doc/DESIGN.md)"},
    {"--jsonl", NULL, NULL, "one JSON object a line, one line per file scanned"},
    {"--all", NULL, NULL, "also the findings judged safe"},
    {"--quiet", "-q", NULL, "print only files that are not safe; the exit status says the rest"},
    {"--format", NULL, "FORMAT", "text (default), json (as --json) or sarif: one SARIF 2.1.0 log, a "
                                 "result per finding (CI code scanning); same exit status"},
    {"--allow", NULL, "GLOBAL", "trust a name the scanner calls unknown (module.name, or module.* "
                                "for a module); repeatable; names that run code stay dangerous"},
    {"--allow-file", NULL, "FILE", "the names to trust, one a line ('#' comments), as --allow"},
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_scan = {
    "scan", run_scan, "PATH...",
    "pickle safety: safe, unknown or dangerous; the exit status says which",
    opts,
    "Exit status (for CI): 0 every file safe, 1 a file dangerous, 2 an error (a path not "
    "scanned, a usage error), 3 a file unknown and none dangerous. Several at once: 1 over 2 "
    "over 3. Names trusted by --allow/--allow-file are listed as 'allowed' in the output "
    "(JSON: \"allowed\" per file, \"allowlist\" at the top). A PATH of - reads standard input "
    "(spooled to a temporary file: the readers map their input)."};
