/* batch.c - batch runs of a read command (doc/batch.md): the paths (or
 * URLs, Hub names) one a line from --from-file FILE or standard input
 * (-@, --from-file -), each run as if it were the only operand; with
 * --jsonl every result line carries "input" (the line as read), and a
 * path that failed gets {"input", "error": true, "exit"}. --skip-done
 * RESULTS.jsonl skips the inputs that already have a result without
 * "error" there, so a killed run is resumed by running it again with its
 * own output appended: idempotent and resumable. */
#include "cli.h"

#include <stdlib.h>

const char *cli_batch_input;

typedef struct done_set {
    char **v;
    size_t n, cap;
} done_set;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void done_free(done_set *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
}

/* The inputs with a good result in RESULTS.jsonl (sorted for bsearch). A
 * missing file is an empty set: the first run of a resumable job. */
static int load_done(const char *path, done_set *d)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        const char *in = json_string_value(json_object_get(j, "input"));
        if (!in)
            in = json_string_value(json_object_get(j, "path"));
        if (in && !json_is_true(json_object_get(j, "error"))) {
            if (d->n == d->cap) {
                size_t nc = d->cap ? d->cap * 2 : 1024;
                char **g = realloc(d->v, nc * sizeof(char *));
                if (!g) {
                    rc = -1;
                    json_decref(j);
                    break;
                }
                d->v = g;
                d->cap = nc;
            }
            if (!(d->v[d->n] = strdup(in))) {
                rc = -1;
                json_decref(j);
                break;
            }
            d->n++;
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    if (d->n)
        qsort(d->v, d->n, sizeof(char *), cmp_str);
    return rc;
}

static bool is_done(const done_set *d, const char *in)
{
    return d->n && bsearch(&in, d->v, d->n, sizeof(char *), cmp_str) != NULL;
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
}

int cli_scan_worst_exit(int a, int b)
{
    static const int rank[4] = {0, 3, 2, 1}; /* by exit status 0..3 */
    int ra = a >= 0 && a <= 3 ? rank[a] : 2, rb = b >= 0 && b <= 3 ? rank[b] : 2;
    return rb > ra ? b : a;
}

int cli_batch_run(const cli_cmd *c, const cli_args *a)
{
    const char *list = cli_has(a, "-@") ? "-" : cli_get(a, "--from-file");
    if (!list)
        return cli_get(a, "--skip-done") ? cli_usage_error(c->name, "--skip-done goes with "
                                                                    "--from-file or -@")
                                         : -1;
    if (a->n_pos)
        return cli_usage_error(c->name, "the paths come from %s: no PATH operands",
                               strcmp(list, "-") ? list : "standard input");
    bool jsonl = cli_has(a, "--jsonl");
    done_set done = {0};
    const char *skip = cli_get(a, "--skip-done");
    if (skip && load_done(skip, &done)) {
        done_free(&done);
        fprintf(stderr, "mfmt: %s: out of memory reading the results\n", skip);
        return EXIT_USAGE;
    }
    FILE *in = strcmp(list, "-") ? fopen(list, "r") : stdin;
    if (!in) {
        done_free(&done);
        fprintf(stderr, "mfmt: %s: cannot open the list of paths\n", list);
        return EXIT_USAGE;
    }
    static cli_args one; /* large: not on the stack */
    char *line = NULL;
    size_t cap = 0;
    int worst = EXIT_FINE;
    while (getline(&line, &cap, in) > 0) {
        chomp(line);
        if (!*line || is_done(&done, line))
            continue;
        one = *a;
        one.n_pos = 1;
        one.pos[0] = line;
        cli_batch_input = line;
        int rc = c->run(&one);
        if (rc && jsonl)
            cli_print_jsonl(json_pack("{s:b, s:i}", "error", 1, "exit", rc));
        cli_batch_input = NULL;
        fflush(stdout); /* each result is out before the next input starts */
        worst = !strcmp(c->name, "scan") ? cli_scan_worst_exit(worst, rc) : rc > worst ? rc : worst;
    }
    free(line);
    if (in != stdin)
        fclose(in);
    done_free(&done);
    return worst;
}
