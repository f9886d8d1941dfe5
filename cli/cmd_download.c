/* cmd_download.c - mfmt download ORG/NAME[@REV] [FILE...]: fills the
 * Hugging Face cache as huggingface_hub does (mf_hub_download in
 * lib/ops/hub_download.c), each blob verified against its name. */
#include "cli.h"

#include <stdlib.h>

enum { MAX_PATTERNS = 64 };

/* Every value of a repeatable option, in order; -1 (message printed) when
 * there are too many. */
static int collect(const cli_args *a, const char *name, const char **out, size_t *n)
{
    *n = 0;
    for (int i = 0; i < a->n_opts; i++) {
        if (!cli_is(a, i, name))
            continue;
        if (*n == MAX_PATTERNS)
            return cli_usage_error("download", "at most %d %s patterns", MAX_PATTERNS, name);
        out[(*n)++] = a->opt[i].val;
    }
    return 0;
}

static const char *state_name(mf_hub_download_state s)
{
    return s == MF_DL_PRESENT ? "present" : s == MF_DL_RESUMED ? "resumed" : "downloaded";
}

static json_t *file_json(const mf_hub_download_file *f)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:s}", "path", f->path, "blob", f->blob ? f->blob : "",
                     "size", (json_int_t)f->size, "fetched", (json_int_t)f->fetched, "state",
                     state_name(f->state));
}

static void print_report(const mf_hub_download_report *r, cli_json_mode mode)
{
    if (mode != CLI_TEXT) {
        json_t *files = json_array();
        for (size_t i = 0; i < r->n_files; i++) {
            if (mode == CLI_JSONL)
                cli_print_jsonl(file_json(&r->files[i]));
            else
                json_array_append_new(files, file_json(&r->files[i]));
        }
        if (mode == CLI_JSON)
            cli_print_json(json_pack("{s:s, s:s, s:s, s:s, s:I, s:o}", "repo_id", r->repo_id,
                                     "revision", r->revision, "commit", r->commit, "snapshot",
                                     r->snapshot, "bytes_fetched", (json_int_t)r->bytes_fetched,
                                     "files", files));
        else
            json_decref(files);
        return;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < r->n_files; i++) {
        const mf_hub_download_file *f = &r->files[i];
        char sz[32];
        cli_fmt_bytes(sz, sizeof(sz), f->size);
        total += f->size;
        if (!cli_quiet)
            printf("%-10s %10s  %s\n", state_name(f->state), sz, f->path);
    }
    char t[32], got[32];
    cli_fmt_bytes(t, sizeof(t), total);
    cli_fmt_bytes(got, sizeof(got), r->bytes_fetched);
    if (!cli_quiet)
        printf("%s@%.10s: %zu file%s, %s (%s fetched), every blob verified\n", r->repo_id,
               r->commit, r->n_files, r->n_files == 1 ? "" : "s", t, got);
    printf("%s\n", r->snapshot); /* the path from_pretrained would use, last: for scripts */
}

static int run_download(const cli_args *a)
{
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    if (a->n_pos != 1)
        return cli_usage_error("download", "give one repo: ORG/NAME[@REV] or hf://ORG/NAME[@REV][/FILE]");
    const char *inc[MAX_PATTERNS], *exc[MAX_PATTERNS];
    mf_hub_download_opts o;
    mf_hub_download_opts_init(&o);
    if (collect(a, "--include", inc, &o.n_include) || collect(a, "--exclude", exc, &o.n_exclude))
        return EXIT_USAGE;
    o.include = o.n_include ? inc : NULL;
    o.exclude = o.n_exclude ? exc : NULL;
    o.cache_dir = cli_get(a, "--cache-dir");
    cli_progress bar;
    cli_progress_start(&bar, "download", 0);
    o.progress = cli_progress_cb;
    o.progress_user = &bar;
    mf_status st;
    mf_status_init(&st);
    mf_hub_download_report *r;
    int rc = mf_hub_download(a->pos[0], &o, &r, &st);
    cli_progress_end(&bar);
    if (rc) {
        rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    print_report(r, mode);
    mf_hub_download_report_free(r);
    return EXIT_FINE;
}

static const cli_opt opts[] = {
    {"--include", NULL, "GLOB", "only files matching a pattern (repeatable; \"dir/\" = its files)"},
    {"--exclude", NULL, "GLOB", "skip files matching a pattern (repeatable)"},
    {"--cache-dir", NULL, "DIR", "the cache to fill (default: $HF_HUB_CACHE, $HF_HOME/hub, "
                                 "~/.cache/huggingface/hub, as huggingface_hub)"},
    {"--json", NULL, NULL, "the report as one JSON object"},
    {"--jsonl", NULL, NULL, "one file a line"},
    CLI_OPTS_REMOTE,
    CLI_OPT_QUIET("no progress, no file lines; only the snapshot path"),
    {0},
};

const cli_cmd cli_cmd_download = {
    "download", run_download, "ORG/NAME[@REV] | hf://ORG/NAME[@REV]/FILE",
    "fill the Hugging Face cache with a repo, each blob verified, resumable",
    opts,
    "Lists the revision's files with the Hub's API, then fetches each file that is not in the\n"
    "cache into blobs/HASH.incomplete by HTTP ranges (an interrupted download resumes where it\n"
    "stopped), hashes it as it lands (SHA-256 for LFS files, git's blob SHA-1 for the others)\n"
    "and renames it into place only when the content hashes to its name; then links\n"
    "snapshots/COMMIT/FILE to it and writes refs/REV: the layout huggingface_hub writes, so\n"
    "from_pretrained and `hf` use the files. The last line printed is the snapshot folder.\n"
    "No byte budget unless --max-bytes is given. $HF_ENDPOINT names a mirror.\n"
    "Exit 0 when every file is in place, 1 when a file's content does not hash to its name\n"
    "(corrupted on the way: nothing of it is kept), 2 on a transfer error, a held lock or bad\n"
    "arguments (finished files stay; run again to resume)."};
