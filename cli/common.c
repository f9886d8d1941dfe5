/* common.c - helpers shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int cli_exit_code(mf_code c)
{
    switch (c) {
    case MF_OK: return EXIT_FINE;
    case MF_ERR_FORMAT:
    case MF_ERR_UNSAFE:
    case MF_ERR_UNSUPPORTED: return EXIT_BAD_INPUT;
    default: return EXIT_USAGE;
    }
}

/* A message with the temporary copy of standard input named "-". */
static void print_message(FILE *f, const char *msg);

int cli_report_to(FILE *f, const mf_status *st)
{
    for (size_t i = 0; i < mf_status_count(st); i++)
        print_message(f, mf_status_message(st, i));
    return cli_exit_code(st->code);
}

int cli_report(const mf_status *st)
{
    return cli_report_to(stderr, st);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mfmt %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'mfmt %s --help')\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

json_t *cli_json_string(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    if (j)
        return j;
    /* not valid UTF-8: keep valid runs, replace each bad byte by U+FFFD */
    size_t cap = n * 3 + 1, k = 0;
    char *out = malloc(cap);
    if (!out)
        return json_null();
    size_t i = 0;
    while (i < n) {
        int64_t bad = mf_utf8_check((const uint8_t *)s + i, n - i);
        size_t good = bad < 0 ? n - i : (size_t)bad;
        memcpy(out + k, s + i, good);
        k += good;
        i += good;
        if (i < n) {
            memcpy(out + k, "\xef\xbf\xbd", 3);
            k += 3;
            i++;
        }
    }
    j = json_stringn(out, k);
    free(out);
    return j ? j : json_null();
}

json_t *cli_json_value(const mf_value *v)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        if (v->as.u > INT64_MAX)
            return json_real((double)v->as.u);
        return json_integer((json_int_t)v->as.u);
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        return json_integer(v->as.i);
    case MF_V_F32: case MF_V_F64:
        if (!isfinite(v->as.f)) /* JSON has no NaN/inf: give them as text */
            return json_string(isnan(v->as.f) ? "nan" : v->as.f > 0 ? "inf" : "-inf");
        return json_real(v->as.f);
    case MF_V_BOOL: return json_boolean(v->as.b);
    case MF_V_STR: return cli_json_string(v->as.s.ptr, v->as.s.len);
    case MF_V_ARR: {
        json_t *a = json_array();
        for (size_t i = 0; i < v->as.arr.n; i++)
            json_array_append_new(a, cli_json_value(&v->as.arr.items[i]));
        return a;
    }
    default: return json_null();
    }
}

json_t *cli_json_shape(const int64_t *shape, int ndim, bool reversed)
{
    json_t *a = json_array();
    for (int i = 0; i < ndim; i++)
        json_array_append_new(a, json_integer(shape[reversed ? ndim - 1 - i : i]));
    return a;
}

void cli_print_json(json_t *j)
{
    /* JSON_REAL_PRECISION(17) would print 0.1f as 0.10000000149011612:
     * exact; the default shortest form is also exact for doubles. */
    const size_t flags = JSON_INDENT(2) | JSON_ENSURE_ASCII * 0;
    /* Dumped into one buffer and written at once: json_dumpf calls fwrite
     * once per token (a third of `inspect --json`'s time on a 100k-token
     * vocabulary); the bytes are the same. */
    char *s = json_dumps(j, flags);
    if (s) {
        fputs(s, stdout);
        free(s);
    } else {
        json_dumpf(j, stdout, flags);
    }
    fputc('\n', stdout);
    json_decref(j);
}

void cli_fmt_float(char *buf, size_t n, double x, bool is_f32)
{
    /* the fewest significant digits that read back to the same value
     * (9 always do for a float, 17 for a double) */
    int max = is_f32 ? 9 : 17;
    for (int p = 1; p <= max; p++) {
        snprintf(buf, n, "%.*g", p, x);
        double back = strtod(buf, NULL);
        if (!(is_f32 ? (float)back == (float)x : back == x))
            continue;
        /* as Python's repr: plain digits from 1e-4 to 1e16 (10000, not 1e+04) */
        double ax = fabs(x);
        if (strchr(buf, 'e') && ax >= 1e-4 && ax < 1e16) {
            int e10 = (int)floor(log10(ax));
            snprintf(buf, n, "%.*f", p - 1 - e10 > 0 ? p - 1 - e10 : 0, x);
        }
        return;
    }
    snprintf(buf, n, "%.*g", max, x); /* NaN, and anything the loop missed */
}

void cli_print_jsonl(json_t *j)
{
    if (cli_batch_input && json_is_object(j) && !json_object_get(j, "input"))
        json_object_set_new(j, "input", json_string(cli_batch_input)); /* batch.c's key */
    json_dumpf(j, stdout, JSON_COMPACT);
    fputc('\n', stdout);
    json_decref(j);
}

const char *cli_vtype_name(mf_vtype t)
{
    static const char *const n[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                    "bool", "string", "array", "u64", "i64", "f64"};
    return (unsigned)t < 13 ? n[t] : "null";
}

void cli_fprint_value(FILE *f, const mf_value *v, size_t max_str)
{
    switch (v->type) {
    case MF_V_U8: case MF_V_U16: case MF_V_U32: case MF_V_U64:
        fprintf(f, "%llu", (unsigned long long)v->as.u);
        break;
    case MF_V_I8: case MF_V_I16: case MF_V_I32: case MF_V_I64:
        fprintf(f, "%lld", (long long)v->as.i);
        break;
    case MF_V_F32:
    case MF_V_F64: {
        char buf[40];
        cli_fmt_float(buf, sizeof(buf), v->as.f, v->type == MF_V_F32);
        fputs(buf, f);
        break;
    }
    case MF_V_BOOL: fputs(v->as.b ? "true" : "false", f); break;
    case MF_V_STR: {
        size_t n = v->as.s.len < max_str ? v->as.s.len : max_str;
        fputc('"', f);
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)v->as.s.ptr[i];
            if (c == '\n') fputs("\\n", f);
            else if (c == '"') fputs("\\\"", f);
            else if (c < 32) fprintf(f, "\\x%02x", c);
            else fputc(c, f);
        }
        fputc('"', f);
        if (n < v->as.s.len)
            fprintf(f, "... (%zu bytes)", v->as.s.len);
        break;
    }
    case MF_V_ARR:
        if (v->as.arr.n <= 8 && v->as.arr.elem != MF_V_ARR) {
            fputc('[', f);
            for (size_t i = 0; i < v->as.arr.n; i++) {
                if (i)
                    fputs(", ", f);
                cli_fprint_value(f, &v->as.arr.items[i], 40);
            }
            fputc(']', f);
        } else {
            fprintf(f, "%zu %s%s", v->as.arr.n,
                    v->as.arr.elem == MF_V_STR ? "string" : cli_vtype_name(v->as.arr.elem),
                    v->as.arr.n == 1 ? "" : "s");
        }
        break;
    default: fputs("null", f);
    }
}

void cli_fmt_bytes(char *buf, size_t n, uint64_t b)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 5) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, n, "%.2f %s", v, u[i]);
}

void cli_fmt_count(char *buf, size_t n, uint64_t c)
{
    if (c >= 1000000000ull)
        snprintf(buf, n, "%.2fB", (double)c / 1e9);
    else if (c >= 1000000ull)
        snprintf(buf, n, "%.2fM", (double)c / 1e6);
    else if (c >= 1000ull)
        snprintf(buf, n, "%.1fK", (double)c / 1e3);
    else
        snprintf(buf, n, "%llu", (unsigned long long)c);
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

bool cli_quiet;

/* ------------------------------------------------------ standard input */

static char stdin_copy[4096]; /* "" until "-" is first read */

static void remove_stdin_copy(void)
{
    if (stdin_copy[0])
        unlink(stdin_copy);
}

/* Ctrl-C, kill, a closed terminal: the copy goes too (unlink is
 * async-signal-safe), then the signal does what it would have done. */
static void remove_stdin_copy_on_signal(int sig)
{
    if (stdin_copy[0])
        unlink(stdin_copy);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_stdin_copy_at_exit(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    atexit(remove_stdin_copy);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = remove_stdin_copy_on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

/* in copied to out, at most `limit` bytes: 0, -1 (errno set) or -2 when
 * in holds more than limit (an endless pipe would fill the disk). */
static int copy_fd(int in, int out, uint64_t limit)
{
    static char buf[1 << 20];
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));
        if (n == 0)
            return 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if ((uint64_t)n > limit - total)
            return -2;
        total += (uint64_t)n;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            off += w;
        }
    }
}

/* Hub names resolved so far: kept for the whole run (the paths are used
 * until exit), reachable from here. */
static char **hub_paths;
static size_t n_hub_paths;

/* ORG/NAME[@REV] and hf://... -> the cache's file or snapshot folder (or
 * the https URL of a file not in the cache); anything else as it is. */
/* Remote repos read in place: their folders, removed at exit. */
static char **remote_folders;
static size_t n_remote_folders;

static void close_remote_folders(void)
{
    for (size_t i = 0; i < n_remote_folders; i++)
        mf_hub_remote_repo_close(remote_folders[i]);
    free(remote_folders);
    remote_folders = NULL;
    n_remote_folders = 0;
}

/* The commands that open a whole model (mf_open) may take a remote repo:
 * its folder holds aliases that only mf_open's readers see. scan and hash
 * walk files, and would not see the weights: they are not among these. */
static bool reads_remote_repos(const cli_cmd *c)
{
    static const char *const ok[] = {"inspect", "validate", "estimate", "plan", "detect", NULL};
    for (const char *const *n = ok; *n; n++)
        if (!strcmp(c->name, *n))
            return true;
    return false;
}

static const cli_cmd *hub_cmd;

/* hf://ORG/NAME[@REV], not in the cache: the repo read in place. */
static const char *remote_repo_path(const char *path, mf_status *st)
{
    char *folder;
    char **grown = realloc(remote_folders, (n_remote_folders + 1) * sizeof(char *));
    if (!grown) {
        mf_status_fail(st, MF_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    remote_folders = grown;
    if (mf_hub_remote_repo(path, &folder, st))
        return NULL;
    if (n_remote_folders == 0)
        atexit(close_remote_folders);
    remote_folders[n_remote_folders++] = folder;
    return folder;
}

const char *cli_hub_path(const char *path, mf_status *st)
{
    mf_hub_target t;
    if (mf_hub_resolve(path, NULL, cli_hub_remote, &t, st)) {
        /* a whole repo that is not in the cache, named hf://... (a bare
         * ORG/NAME may be a mistyped path: it never goes to the network) */
        if (!cli_hub_remote || !hub_cmd || !reads_remote_repos(hub_cmd) || strncmp(path, "hf://", 5))
            return NULL;
        mf_status sub;
        mf_status_init(&sub);
        const char *p = remote_repo_path(path, &sub);
        if (p || sub.code != MF_ERR_USAGE) { /* else: the cache's reason says it best */
            mf_status_clear(st);
            *st = sub; /* its messages move over */
        } else
            mf_status_clear(&sub);
        return p;
    }
    if (t.kind == MF_HUB_NONE) {
        mf_hub_target_free(&t);
        return path;
    }
    char **grown = realloc(hub_paths, (n_hub_paths + 1) * sizeof(char *));
    if (!grown) {
        mf_hub_target_free(&t);
        mf_status_fail(st, MF_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    hub_paths = grown;
    hub_paths[n_hub_paths++] = t.path;
    t.path = NULL;
    mf_hub_target_free(&t);
    return hub_paths[n_hub_paths - 1];
}

bool cli_hub_remote = false;
static uint64_t remote_budget;

static bool has_option(const cli_cmd *c, const char *name)
{
    for (const cli_opt *o = c->opts; o && o->name; o++)
        if (!strcmp(o->name, name))
            return true;
    return false;
}

int cli_remote_setup(const cli_args *a)
{
    if (!has_option(a->cmd, "--max-bytes"))
        return EXIT_FINE;
    mf_remote_opts o;
    mf_remote_opts_init(&o);
    /* reads stop at a budget by default; a download's size is the user's choice */
    o.max_bytes = strcmp(a->cmd->name, "download") ? 128u << 20 : 0;
    const char *v;
    if ((v = cli_get(a, "--max-bytes")) && mf_parse_size(v, &o.max_bytes))
        return cli_usage_error(a->cmd->name, "--max-bytes takes a size (1000000, 64MiB, 0)");
    if ((v = cli_get(a, "--timeout"))) {
        char *end;
        unsigned long s = strtoul(v, &end, 10);
        if (*end || s == 0 || s > 3600)
            return cli_usage_error(a->cmd->name, "--timeout takes seconds, 1 to 3600");
        o.timeout_s = (unsigned)s;
    }
    o.token = cli_get(a, "--token");
    mf_status st;
    mf_status_init(&st);
    int rc = mf_remote_configure(&o, &st) ? cli_report(&st) : EXIT_FINE;
    mf_status_clear(&st);
    remote_budget = o.max_bytes;
    cli_hub_remote = true;
    hub_cmd = a->cmd;
    return rc;
}

void cli_remote_report(void)
{
    uint64_t n = mf_remote_bytes_read();
    fflush(stdout); /* the report follows the command's output */
    if (n && !cli_quiet)
        fprintf(stderr, "mfmt: %llu bytes fetched over HTTP (budget %llu)\n",
                (unsigned long long)n, (unsigned long long)remote_budget);
}

static uint64_t cli_max_read(void);

const char *cli_input_path(const char *path, mf_status *st)
{
    if (strcmp(path, "-") != 0)
        return cli_hub_path(path, st);
    if (stdin_copy[0]) /* standard input is read once; "-" again is the same bytes */
        return stdin_copy;
    const char *dir = getenv("TMPDIR");
    snprintf(stdin_copy, sizeof(stdin_copy), "%s/mfmt-stdin-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(stdin_copy);
    if (fd < 0) {
        mf_status_fail(st, MF_ERR_IO, "-: cannot make a temporary file %s for standard input: %s",
                       stdin_copy, strerror(errno));
        stdin_copy[0] = 0;
        return NULL;
    }
    remove_stdin_copy_at_exit();
    uint64_t limit = cli_max_read();
    int rc = copy_fd(0, fd, limit);
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == -2) {
        unlink(stdin_copy); /* nothing half-copied is left */
        mf_status_fail(st, MF_ERR_USAGE, "-: standard input holds more than %llu bytes, the most mfmt copies "
                       "to a temporary file (MFMT_MAX_READ): give the file's path instead",
                       (unsigned long long)limit);
        stdin_copy[0] = 0;
        return NULL;
    }
    if (rc) {
        mf_status_fail(st, MF_ERR_IO, "-: copying standard input to %s failed: %s", stdin_copy,
                       strerror(err));
        return NULL;
    }
    return stdin_copy;
}

/* ---- standard input read into memory (cli_open's "-": mf_open_buffer) */

static uint8_t *stdin_buf;
static size_t stdin_len;
static bool stdin_read;
static bool stdin_broken; /* reading it into memory failed part way: bytes are gone */

/* The most bytes "-" may hold in memory: MFMT_MAX_READ (bytes, or with a
 * K/M/G suffix), else the library's default for mf_open_fd. */
static uint64_t cli_max_read(void)
{
    const char *v = getenv("MFMT_MAX_READ");
    char *end;
    errno = 0;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || errno || end == v || n == 0)
        return MF_OPEN_MAX_READ_DEFAULT;
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if ((shift && end[1]) || (!shift && *end) || n > (UINT64_MAX >> shift))
        return MF_OPEN_MAX_READ_DEFAULT; /* not a size: the default */
    return (uint64_t)n << shift;
}

/* Standard input, read once into memory (later calls: the same bytes). */
int cli_stdin_bytes(const uint8_t **b, size_t *n, mf_status *st)
{
    const uint64_t STDIN_LIMIT = cli_max_read();
    if (!stdin_read) {
        size_t cap = 0;
        for (;;) {
            if (stdin_len == cap) {
                size_t grown = cap ? cap * 2 : (1u << 20);
                if (grown > STDIN_LIMIT)
                    grown = STDIN_LIMIT;
                if (cap == grown) {
                    char one;
                    if (read(0, &one, 1) == 1)
                        return stdin_broken = true, mf_status_fail(st, MF_ERR_USAGE, "-: standard input holds more "
                                              "than %llu bytes, the most mfmt reads into memory "
                                              "(MFMT_MAX_READ): give the file's path instead",
                                              (unsigned long long)STDIN_LIMIT);
                    break;
                }
                uint8_t *p = realloc(stdin_buf, grown);
                if (!p)
                    return stdin_broken = true, mf_status_fail(st, MF_ERR_NOMEM, "-: out of memory reading standard input");
                stdin_buf = p, cap = grown;
            }
            ssize_t k = read(0, stdin_buf + stdin_len, cap - stdin_len);
            if (k == 0)
                break;
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return stdin_broken = true, mf_status_fail(st, MF_ERR_IO, "-: reading standard input failed: %s",
                                      strerror(errno));
            stdin_len += (size_t)k;
        }
        stdin_read = true;
    }
    *b = stdin_buf;
    *n = stdin_len;
    return 0;
}

bool cli_stdin_in_memory(void)
{
    return stdin_read;
}

bool cli_stdin_broken(void)
{
    return stdin_broken;
}

/* The length of "mem:DIGITS/" at p (mf_open_buffer's names), or 0. */
static size_t mem_prefix(const char *p)
{
    if (strncmp(p, "mem:", 4) != 0)
        return 0;
    size_t k = 4;
    while (p[k] >= '0' && p[k] <= '9')
        k++;
    return k > 4 && p[k] == '/' ? k + 1 : 0;
}

const char *cli_unspooled(const char *msg, char *buf, size_t n)
{
    if (stdin_read && strstr(msg, "mem:")) { /* standard input in memory: "mem:ID/-" is "-" */
        size_t used = 0;
        bool sibling = false;
        buf[0] = 0;
        for (const char *p = msg; *p && used + 1 < n;) {
            size_t k = mem_prefix(p);
            if (k && p[k] == '-' && (p[k + 1] == 0 || p[k + 1] == ':' || p[k + 1] == ' ')) {
                p += k; /* "-" itself follows */
            } else if (k) {
                sibling = true; /* a file beside it: there is none */
                used += (size_t)snprintf(buf + used, n - used, "-/");
                p += k;
            } else {
                buf[used++] = *p++;
                buf[used] = 0;
            }
        }
        if (sibling && used < n)
            snprintf(buf + used, n - used, " (standard input holds one file: a model that spans "
                                           "several files must be given by its path)");
        return buf;
    }
    size_t k = strlen(stdin_copy), used = 0;
    const char *at;
    if (!k || !strstr(msg, stdin_copy))
        return msg;
    buf[0] = 0;
    while ((at = strstr(msg, stdin_copy)) != NULL && used < n) {
        used += (size_t)snprintf(buf + used, n - used, "%.*s-", (int)(at - msg), msg);
        msg = at + k;
    }
    if (used < n)
        snprintf(buf + used, n - used, "%s", msg);
    return buf;
}

static void print_message(FILE *f, const char *msg)
{
    char buf[4200];
    fprintf(f, "mfmt: %s\n", cli_unspooled(msg, buf, sizeof(buf)));
}

int cli_spool_input(const char **path)
{
    mf_status st;
    mf_status_init(&st);
    const char *file = cli_input_path(*path, &st);
    int rc = file ? EXIT_FINE : cli_report(&st);
    mf_status_clear(&st);
    if (file)
        *path = file;
    return rc;
}

const char *cli_shown_path(const char *p, char *buf, size_t n)
{
    size_t m = mem_prefix(p);
    if (m && stdin_read && p[m] == '-') /* standard input in memory */
        return p + m;
    size_t k = strlen(stdin_copy);
    if (!stdin_copy[0] || strncmp(p, stdin_copy, k) != 0 || (p[k] && p[k] != ':'))
        return p;
    snprintf(buf, n, "-%s", p + k);
    return buf;
}

void cli_progress_start(cli_progress *p, const char *label, uint64_t total)
{
    memset(p, 0, sizeof(*p));
    p->on = !cli_quiet && isatty(2) && !getenv("MFMT_NO_PROGRESS");
    p->total = total;
    p->label = label;
    p->start = now_sec();
}

/* "12.5 MiB/s, 0:42 left": the rate so far and the time the rest takes at it */
static void rate_text(char *buf, size_t n, const cli_progress *p, double t)
{
    double el = t - p->start;
    if (el < 0.2 || p->done == 0) {
        buf[0] = 0;
        return;
    }
    char r[32];
    double rate = (double)p->done / el;
    cli_fmt_bytes(r, sizeof(r), (uint64_t)rate);
    if (p->total > p->done) {
        unsigned left = (unsigned)((double)(p->total - p->done) / rate + 0.5);
        snprintf(buf, n, " %s/s, %u:%02u left", r, left / 60, left % 60);
    } else {
        snprintf(buf, n, " %s/s", r);
    }
}

void cli_progress_add(cli_progress *p, uint64_t n)
{
    p->done += n;
    if (!p->on)
        return;
    double t = now_sec();
    if (t - p->last < 0.1 && p->done < p->total)
        return;
    p->last = t;
    int pct = p->total ? (int)(100.0 * (double)p->done / (double)p->total) : 100;
    if (pct > 100)
        pct = 100;
    int bar = pct * 30 / 100;
    char rate[64];
    rate_text(rate, sizeof(rate), p, t);
    fprintf(stderr, "\r%s [%.*s%*s] %3d%%%-28s", p->label, bar, "==============================",
            30 - bar, "", pct, rate);
}

void cli_progress_end(cli_progress *p)
{
    if (p->on)
        fprintf(stderr, "\r%*s\r", 80, "");
}

int cli_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *p = ctx;
    if (total)
        p->total = total; /* the library knows best (outputs can outgrow inputs) */
    cli_progress_add(p, done > p->done ? done - p->done : 0);
    return 0;
}

int cli_open(const char *path, unsigned flags, bool scan, mf_model **m, mf_status *st)
{
    return cli_open_cfg(path, flags, NULL, scan, m, st);
}

int cli_open_cfg(const char *path, unsigned flags, const char *config, bool scan, mf_model **m,
                 mf_status *st)
{
    mf_open_opts o;
    mf_open_opts_init(&o);
    o.flags = flags | (scan ? 0 : MF_OPEN_NO_SCAN);
    o.config = config;
    if (strcmp(path, "-") == 0 && !stdin_copy[0]) { /* read into memory, opened in place */
        const uint8_t *b;
        size_t n;
        return cli_stdin_bytes(&b, &n, st) ? -1 : mf_open_buffer(b, n, "-", &o, m, st);
    }
    const char *file = cli_input_path(path, st); /* a Hub name, or "-" spooled before */
    return file ? mf_open(file, &o, m, st) : -1;
}

int cli_stdout_sink(void *ctx, const void *buf, size_t n, mf_status *st)
{
    (void)ctx;
    if (fwrite(buf, 1, n, stdout) != n)
        return mf_status_fail(st, MF_ERR_IO, "stdout: write failed");
    return 0;
}

int cli_open_model(const char *path, mf_model **m)
{
    mf_status st;
    mf_status_init(&st);
    int rc = cli_open(path, 0, false, m, &st) ? cli_report(&st) : EXIT_FINE;
    mf_status_clear(&st);
    return rc;
}

const char *cli_version_text(const mf_model *m)
{
    const char *v = mf_model_version(m);
    /* "safetensors, version safetensors": a version that only repeats the
     * format's name says nothing */
    return strcmp(v, mf_format_name(mf_model_format(m))) == 0 ? "" : v;
}

/* A per-tensor alignment note (safetensors.c: note_alignment and the
 * zero-copy check). */
static bool is_alignment_note(const char *n)
{
    return strncmp(n, "tensor \"", 8) == 0 && strstr(n, "aligned") != NULL;
}

size_t cli_warning_count(const mf_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < mf_model_note_count(m); i++)
        n += !mf_model_note_is_info(m, i);
    return n;
}

/* The notes of one level; per-tensor alignment notes collapse to a line. */
static void print_notes_of(FILE *f, const mf_model *m, bool info, const char *prefix, bool verbose)
{
    size_t n_align = 0;
    const char *first = NULL;
    for (size_t i = 0; i < mf_model_note_count(m); i++) {
        const char *n = mf_model_note_at(m, i);
        if (mf_model_note_is_info(m, i) != info)
            continue;
        if (!verbose && is_alignment_note(n)) {
            if (!n_align++)
                first = n;
            continue;
        }
        fprintf(f, "%s%s\n", prefix, n);
    }
    if (n_align == 1)
        fprintf(f, "%s%s\n", prefix, first);
    else if (n_align > 1)
        fprintf(f, "%s%zu tensors are not aligned (first: %s); --verbose lists them\n", prefix,
                n_align, first);
}

void cli_print_notes(FILE *f, const mf_model *m, const char *warn_prefix, const char *info_prefix,
                     bool verbose)
{
    print_notes_of(f, m, false, warn_prefix, verbose);
    print_notes_of(f, m, true, info_prefix, verbose);
}
