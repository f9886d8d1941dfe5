/* cmd_cache.c - mfmt cache scan | verify [REPO]: the local Hugging Face
 * cache (mf_cache_scan, mf_cache_verify in lib/ops/hub_*.c). */
#include "cli.h"

#include <stdlib.h>
#include <time.h>

static const char *cache_dir_opt(const cli_args *a)
{
    return cli_get(a, "--cache-dir");
}

static json_t *repo_json(const mf_cache_repo *r)
{
    json_t *revs = json_array();
    for (size_t i = 0; i < r->n_revisions; i++) {
        const mf_cache_revision *v = &r->revisions[i];
        json_t *refs = json_array();
        for (size_t k = 0; k < v->n_refs; k++)
            json_array_append_new(refs, json_string(v->refs[k]));
        json_array_append_new(revs, json_pack("{s:s, s:o, s:I, s:I}", "commit", v->commit, "refs",
                                              refs, "files", (json_int_t)v->n_files,
                                              "size_on_disk", (json_int_t)v->size_on_disk));
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o}", "repo_type", r->repo_type, "repo_id",
                     r->repo_id, "path", r->path, "size_on_disk", (json_int_t)r->size_on_disk,
                     "blobs", (json_int_t)r->n_blobs, "last_modified",
                     (json_int_t)r->last_modified, "revisions", revs);
}

static void print_scan_text(const mf_cache_report *r)
{
    printf("%-8s %-40s %10s %6s %-10s %s\n", "TYPE", "REPO ID", "SIZE", "FILES", "REVISION",
           "REFS");
    for (size_t i = 0; i < r->n_repos; i++) {
        const mf_cache_repo *p = &r->repos[i];
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), p->size_on_disk);
        printf("%-8s %-40s %10s %6llu", p->repo_type, p->repo_id, sz,
               (unsigned long long)p->n_blobs);
        for (size_t k = 0; k < p->n_revisions; k++) {
            const mf_cache_revision *v = &p->revisions[k];
            printf("%s%.10s ", k ? "\n                                                                        " : " ",
                   v->commit);
            for (size_t j = 0; j < v->n_refs; j++)
                printf("%s%s", j ? "," : "", v->refs[j]);
        }
        printf("\n");
    }
    char total[32];
    cli_fmt_bytes(total, sizeof(total), r->size_on_disk);
    if (!cli_quiet)
        printf("\n%zu repo%s, %s on disk, in %s\n", r->n_repos, r->n_repos == 1 ? "" : "s", total,
               r->cache_dir);
}

static int run_scan(const cli_args *a, cli_json_mode mode)
{
    mf_status st;
    mf_status_init(&st);
    mf_cache_report *r;
    if (mf_cache_scan(cache_dir_opt(a), &r, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    for (size_t i = 0; i < r->n_warnings; i++)
        fprintf(stderr, "mfmt: warning: %s\n", r->warnings[i]);
    if (mode == CLI_TEXT)
        print_scan_text(r);
    else if (mode == CLI_JSONL)
        for (size_t i = 0; i < r->n_repos; i++)
            cli_print_jsonl(repo_json(&r->repos[i]));
    else {
        json_t *repos = json_array();
        for (size_t i = 0; i < r->n_repos; i++)
            json_array_append_new(repos, repo_json(&r->repos[i]));
        cli_print_json(json_pack("{s:s, s:I, s:o}", "cache_dir", r->cache_dir, "size_on_disk",
                                 (json_int_t)r->size_on_disk, "repos", repos));
    }
    mf_cache_report_free(r);
    return EXIT_FINE;
}

/* 0: every blob matches its name and every link leads to one; 1: at least
 * one corrupt, missing, dangling, incomplete or bad-ref entry (unchecked
 * copies alone are not a failure); 2: no cache, no such repo, I/O error. */
static int verify_exit(const mf_cache_verify_report *r)
{
    for (int k = 0; k < MF_CACHE_PROBLEM_KINDS; k++)
        if (k != MF_CACHE_UNCHECKED && r->count[k])
            return EXIT_BAD_INPUT;
    return EXIT_FINE;
}

static json_t *problem_json(const mf_cache_problem *p)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "problem", mf_cache_problem_name(p->kind), "repo_id",
                     p->repo_id, "path", p->path, "detail", p->detail);
}

static void print_verify(const mf_cache_verify_report *r, cli_json_mode mode, bool show_unchecked)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->n_problems; i++) {
        const mf_cache_problem *p = &r->problems[i];
        if (mode == CLI_JSONL)
            cli_print_jsonl(problem_json(p));
        else if (mode == CLI_JSON)
            json_array_append_new(list, problem_json(p));
        else if (p->kind != MF_CACHE_UNCHECKED || show_unchecked)
            printf("%s: %s: %s\n", mf_cache_problem_name(p->kind), p->path, p->detail);
    }
    json_t *counts = json_object();
    for (int k = 0; k < MF_CACHE_PROBLEM_KINDS; k++)
        json_object_set_new(counts, mf_cache_problem_name((mf_cache_problem_kind)k),
                            json_integer((json_int_t)r->count[k]));
    if (mode == CLI_JSON)
        cli_print_json(json_pack("{s:s, s:I, s:I, s:I, s:b, s:o, s:o}", "cache_dir", r->cache_dir,
                                 "repos", (json_int_t)r->n_repos, "blobs_checked",
                                 (json_int_t)r->n_blobs_checked, "bytes_checked",
                                 (json_int_t)r->bytes_checked, "ok", verify_exit(r) == EXIT_FINE,
                                 "counts", counts, "problems", list));
    else {
        json_decref(counts);
        json_decref(list);
    }
    if (mode == CLI_TEXT && !cli_quiet) {
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), r->bytes_checked);
        printf("%zu repo%s, %llu blobs (%s) checked: %zu corrupt, %zu missing, %zu dangling, "
               "%zu incomplete, %zu bad refs, %zu unchecked copies\n",
               r->n_repos, r->n_repos == 1 ? "" : "s", (unsigned long long)r->n_blobs_checked, sz,
               r->count[MF_CACHE_CORRUPT], r->count[MF_CACHE_MISSING], r->count[MF_CACHE_DANGLING],
               r->count[MF_CACHE_INCOMPLETE], r->count[MF_CACHE_BAD_REF],
               r->count[MF_CACHE_UNCHECKED]);
    }
}

static int run_verify(const cli_args *a, cli_json_mode mode)
{
    if (a->n_pos > 2)
        return cli_usage_error("cache", "verify takes at most one REPO");
    mf_status st;
    mf_status_init(&st);
    mf_cache_verify_report *r;
    cli_progress bar;
    cli_progress_start(&bar, "verify", 0);
    int rc = mf_cache_verify(cache_dir_opt(a), a->n_pos == 2 ? a->pos[1] : NULL, cli_progress_cb,
                             &bar, &r, &st);
    cli_progress_end(&bar);
    if (rc) {
        rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    print_verify(r, mode, cli_has(a, "--verbose"));
    rc = verify_exit(r);
    mf_cache_verify_free(r);
    return rc;
}

static int run_cache(const cli_args *a)
{
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    if (a->n_pos == 0)
        return cli_usage_error("cache", "say scan or verify");
    if (!strcmp(a->pos[0], "scan"))
        return a->n_pos == 1 ? run_scan(a, mode)
                             : cli_usage_error("cache", "scan takes no argument");
    if (!strcmp(a->pos[0], "verify"))
        return run_verify(a, mode);
    return cli_usage_error("cache", "unknown action %s: scan or verify", a->pos[0]);
}

static const cli_opt opts[] = {
    {"--cache-dir", NULL, "DIR", "the cache to read (default: $HF_HUB_CACHE, $HF_HOME/hub, "
                                 "~/.cache/huggingface/hub, as huggingface_hub)"},
    {"--json", NULL, NULL, "scan: the repos as one JSON object; verify: counts and problems"},
    {"--jsonl", NULL, NULL, "scan: one repo a line; verify: one problem a line"},
    {"--verbose", "-v", NULL, "verify: also list the plain copies that cannot be checked"},
    CLI_OPT_QUIET("no summary line"),
    {0},
};

const cli_cmd cli_cmd_cache = {
    "cache", run_cache, "scan | verify [REPO]",
    "the local Hugging Face cache: list repos, revisions and sizes; check every blob",
    opts,
    "scan lists each repo, its revisions (commit and refs) and its size on disk, blobs counted\n"
    "once and measured through the links (as `hf cache scan`).\n"
    "verify [REPO] hashes every blob against its name (SHA-256, or git's blob SHA-1 for small\n"
    "files) and checks every snapshot link and ref; REPO is ORG/NAME (hf://ORG/NAME too).\n"
    "verify exits 0 when all is well, 1 when anything is corrupt, missing, dangling, incomplete\n"
    "or a bad ref, 2 when the cache or the repo is not there."};
