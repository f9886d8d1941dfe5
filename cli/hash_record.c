/* hash_record.c - mfmt hash --record OUT.json MODEL and mfmt hash
 * --check-record REC.json MODEL (doc/hub.md "Delivery records"): the
 * records are the library's (mf_record_make, mf_record_check); here where
 * they go and what is printed. */
#include "cli.h"
#include "hash_record.h"

static int write_text(const char *out, const char *text, mf_status *st)
{
    if (!strcmp(out, "-"))
        return fputs(text, stdout) < 0 ? mf_status_fail(st, MF_ERR_IO, "stdout: write failed") : 0;
    mf_atomic *w;
    if (mf_atomic_open(out, &w, st))
        return -1;
    if (mf_atomic_write(w, text, strlen(text), st)) {
        mf_atomic_abort(w);
        return -1;
    }
    return mf_atomic_commit(w, st);
}

int cli_hash_record(const char *arg, const char *out, bool per_tensor)
{
    mf_status st;
    mf_status_init(&st);
    char *text = NULL;
    size_t n = 0;
    int rc = mf_record_make(arg, per_tensor, &text, &n, &st) || write_text(out, text, &st)
                 ? cli_report(&st)
                 : EXIT_FINE;
    if (rc == EXIT_FINE && !cli_quiet && strcmp(out, "-"))
        fprintf(stderr, "mfmt: recorded %zu file%s of %s in %s\n", n, n == 1 ? "" : "s", arg, out);
    mf_free(text);
    mf_status_clear(&st);
    return rc;
}

int cli_hash_check_record(const char *arg, const char *record, bool json)
{
    mf_status st;
    mf_status_init(&st);
    mf_record_report *c = NULL;
    if (mf_record_check(arg, record, &c, &st)) {
        int rc = cli_report(&st);
        mf_status_clear(&st);
        return rc;
    }
    mf_status_clear(&st);
    int outcome = c->outcome;
    if (outcome == MF_RECORD_UNREADABLE) {
        fprintf(stderr, "mfmt: %s\n", c->error);
    } else if (json) {
        json_t *list = json_array();
        for (size_t i = 0; i < c->n_files; i++)
            json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "path", c->files[i].path,
                                                  "result", c->files[i].result_name, "meaning",
                                                  c->files[i].meaning));
        cli_print_json(json_pack("{s:s, s:s, s:s?, s:s?, s:b, s:o}", "model", arg, "record", record,
                                 "repo", c->repo, "commit", c->commit, "ok",
                                 outcome == MF_RECORD_OK, "files", list));
    } else {
        size_t bad = 0;
        for (size_t i = 0; i < c->n_files; i++) {
            bad += c->files[i].result != MF_RECORD_OK;
            if (c->files[i].result != MF_RECORD_OK || !cli_quiet)
                printf("%s: %s\n", c->files[i].path, c->files[i].meaning);
        }
        if (!cli_quiet)
            printf("%zu of %zu recorded files match%s%s\n", c->n_files - bad, c->n_files,
                   c->repo ? " " : "", c->repo ? c->repo : "");
    }
    mf_record_report_free(c);
    return outcome;
}
