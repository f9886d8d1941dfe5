/* test_containers.c - archives read as their loaders read them (issue 10,
 * classes 1, 2, 3, 10, 11): the fixtures of tests/data/containers (made by
 * make_containers.py with Python's tarfile/zipfile; `--verify` proved with
 * torch.load/np.load which of them run their payload), and a differential
 * test of mfmt's member lists against Python's zipfile and tarfile (and
 * torch's miniz when torch is importable) on the shared corpus, the real
 * files and generated variants (tests/containers_diff.py). */
#include "testlib.h"

#include "core/tar.h"
#include "core/zip.h"
#include "mfmt.h"
#include "ops/scan.h"

#include <zlib.h>

#define DIR "tests/data/containers/"

static mf_scan_report *scan(const char *path)
{
    mf_scan_report *r = NULL;
    mf_status st;
    mf_status_init(&st);
    if (mf_scan_file(path, &r, &st))
        fprintf(stderr, "scan %s: %s\n", path, st.msg);
    mf_status_clear(&st);
    return r;
}

static bool has(const mf_scan_report *r, mf_verdict v, const char *needle)
{
    for (size_t i = 0; r && i < r->n_findings; i++)
        if (r->findings[i].severity == v &&
            (strstr(r->findings[i].message, needle) ||
             (r->findings[i].global && strstr(r->findings[i].global, needle))))
            return true;
    return false;
}

/* Every hostile fixture ran its payload under the real loader (or is an
 * ambiguity a loader could resolve the other way): never safe. */
static void test_hostile_fixtures(void)
{
    static const struct { const char *file, *why; int v; } cases[] = {
        {"legacy-ustar-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-v7-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-v7-evil-storages.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-ustar-evil-storages.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-type7-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-spaces-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-base256-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-pax-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-paxpath-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-longname-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"legacy-hardlink-evil.tar", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-two-eocd-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-appended-archive-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-prepended-evil.npz", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-dup-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-case-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-case-dup-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-proto0-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-proto0-member-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-localname-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        {"zip-overlap-evil.pt", "os.system", MF_VERDICT_DANGEROUS},
        /* class 10: the archive's own "collections" shadows the allowlisted
         * OrderedDict (PackageImporter ran the payload); TorchScript code */
        {"package-shadow-evil.pt", "archive's own module", MF_VERDICT_DANGEROUS},
        /* benign twins whose archive is still ambiguous */
        {"zip-two-eocd-ok.pt", "describes another archive", MF_VERDICT_UNKNOWN},
        {"zip-prepended-ok.npz", "prepended", MF_VERDICT_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), DIR "%s", cases[i].file);
        mf_scan_report *r = scan(path);
        CHECKF(r && (int)r->verdict == cases[i].v, "%s: verdict %s, want %s", cases[i].file,
               r ? mf_verdict_name(r->verdict) : "(none)", mf_verdict_name((mf_verdict)cases[i].v));
        CHECKF(has(r, (mf_verdict)cases[i].v, cases[i].why), "%s: no %s finding mentions \"%s\"",
               cases[i].file, mf_verdict_name((mf_verdict)cases[i].v), cases[i].why);
        mf_scan_free(r);
    }
    /* TorchScript runs its code/ members: reported, never safe (how its
     * debug pickles' names are classed is the pickle allowlist's business) */
    mf_scan_report *ts = scan(DIR "torchscript.pt");
    CHECK(ts && ts->verdict != MF_VERDICT_SAFE && has(ts, MF_VERDICT_UNKNOWN, "TorchScript archive"));
    mf_scan_free(ts);
    /* a torch.package that ships no code and externs collections: safe */
    mf_scan_report *r = scan(DIR "package-ok.pt");
    CHECKF(r && r->verdict == MF_VERDICT_SAFE && r->n_pickles >= 1, "package-ok.pt: %s",
           r ? mf_verdict_name(r->verdict) : "-");
    mf_scan_free(r);
    /* the ambiguity itself is reported, not only the payload */
    static const struct { const char *file, *why; } amb[] = {
        {"zip-dup-evil.pt", "share a name"},
        {"zip-case-dup-evil.pt", "share a name"},
        {"zip-overlap-evil.pt", "overlap"},
        {"zip-prepended-evil.npz", "prepended"},
        {"zip-two-eocd-evil.pt", "another archive"},
        {"zip-localname-evil.pt", "local header names another file"},
    };
    for (size_t i = 0; i < sizeof(amb) / sizeof(amb[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), DIR "%s", amb[i].file);
        mf_scan_report *r = scan(path);
        CHECKF(has(r, MF_VERDICT_UNKNOWN, amb[i].why), "%s: no unknown finding mentions \"%s\"",
               amb[i].file, amb[i].why);
        mf_scan_free(r);
    }
}

/* Legacy tar checkpoints: detect, inspect (the tensor torch.load gives:
 * weight = [[1, 2, 3], [4, 5, 6]] as float32), and no dangerous finding. */
static void test_legacy_tar_read(void)
{
    static const char *const ok[] = {"ustar", "v7", "type7", "spaces", "base256", "pax"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), DIR "legacy-%s-ok.tar", ok[i]);
        mf_detection d;
        mf_status st;
        mf_status_init(&st);
        CHECKF(mf_detect(path, &d, &st) == 0 && d.format == MF_FMT_PYTORCH_PICKLE,
               "%s: detected as %s", path, mf_format_name(d.format));
        mf_model *m = NULL;
        int rc = mf_open(path, NULL, &m, &st);
        CHECKF(rc == 0, "%s: %s", path, st.msg);
        if (rc == 0) {
            const mf_tensor *t = m->n_tensors == 1 ? &m->tensors[0] : NULL;
            CHECKF(t && strcmp(t->name, "weight") == 0 && t->dtype == MF_F32 &&
                   t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && t->data,
                   "%s: not the weight tensor torch.load gives", path);
            if (t && t->data) {
                float v[6];
                memcpy(v, t->data, sizeof(v));
                CHECKF(v[0] == 1 && v[5] == 6, "%s: weight holds %g..%g", path, v[0], v[5]);
            }
            mf_close(m);
        }
        mf_status_clear(&st);
        mf_scan_report *r = scan(path);
        CHECKF(r && r->verdict != MF_VERDICT_DANGEROUS && r->n_pickles >= 5,
               "%s: %s, %llu pickles", path, r ? mf_verdict_name(r->verdict) : "-",
               r ? (unsigned long long)r->n_pickles : 0ull);
        mf_scan_free(r);
    }
}

/* inspect describes what torch reads: with two data.pkl members (or two
 * that differ in case), torch.load read the benign {'ok': 1} (seen with
 * torch 1.13 when the fixtures were made); so must mf_open. */
static void test_torch_view(void)
{
    static const char *const f[] = {DIR "zip-dup-evil.pt", DIR "zip-case-dup-evil.pt"};
    for (size_t i = 0; i < 2; i++) {
        mf_model *m = NULL;
        mf_status st;
        mf_status_init(&st);
        int rc = mf_open(f[i], NULL, &m, &st);
        CHECKF(rc == 0, "%s: %s", f[i], st.msg);
        bool ok = false;
        for (size_t k = 0; rc == 0 && k < m->n_meta; k++)
            ok |= strcmp(m->meta[k].key, "ok") == 0;
        CHECKF(ok, "%s: not the data.pkl torch reads", f[i]);
        bool noted = false;
        for (size_t k = 0; rc == 0 && k < m->n_notes; k++)
            noted |= strstr(m->notes[k], "share a name") != NULL;
        CHECKF(noted, "%s: the duplicate names are not noted", f[i]);
        if (rc == 0)
            mf_close(m);
        mf_status_clear(&st);
    }
}

/* class 10: a Hugging Face directory whose config.json has auto_map runs
 * its .py files under trust_remote_code=True: scan DIR reports the config
 * entries and every .py file, never safe; without auto_map, the same .py
 * file is not called code to run. Variants: a local module, a tokenizer
 * [slow, null] list, code from another repository. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

typedef struct dir_tally {
    size_t files, unsafe, py_reported, config_refs;
} dir_tally;

static int tally(void *ctx, const mf_scan_report *r)
{
    dir_tally *t = ctx;
    t->files++;
    t->unsafe += r->verdict != MF_VERDICT_SAFE;
    t->py_reported += strstr(r->path, ".py") && has(r, MF_VERDICT_UNKNOWN, "trust_remote_code");
    for (size_t i = 0; i < r->n_findings; i++)
        t->config_refs += strstr(r->findings[i].message, "auto_map: ") != NULL;
    return 0;
}

static void test_hf_remote_code(void)
{
    const char *d = "build/containers-hf-remote";
    char p[512];
    (void)!system("rm -rf build/containers-hf-remote && mkdir -p build/containers-hf-remote");
    snprintf(p, sizeof(p), "%s/modeling_x.py", d);
    write_file(p, "# modeling code\nimport os\nos.system('true')\n");
    snprintf(p, sizeof(p), "%s/config.json", d);
    write_file(p, "{\"model_type\": \"llama\"}");
    dir_tally t = {0};
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_scan_path(d, tally, &t, &st) == 0);
    CHECKF(t.files == 2 && t.unsafe == 0, "no auto_map: %zu files, %zu not safe", t.files, t.unsafe);
    write_file(p, "{\"model_type\": \"x\", \"auto_map\": {\"AutoModelForCausalLM\": "
                  "\"modeling_x.XForCausalLM\", \"AutoConfig\": \"other/repo--configuration_x.C\"}}");
    snprintf(p, sizeof(p), "%s/tokenizer_config.json", d);
    write_file(p, "{\"auto_map\": {\"AutoTokenizer\": [\"tokenization_x.T\", null]}}");
    memset(&t, 0, sizeof(t));
    CHECK(mf_scan_path(d, tally, &t, &st) == 0);
    /* tokenization_x.py is not there: that entry alone would run nothing */
    CHECKF(t.files == 3 && t.unsafe == 2 && t.py_reported == 1 && t.config_refs == 3,
           "auto_map: %zu files, %zu not safe, %zu .py reported, %zu refs", t.files, t.unsafe,
           t.py_reported, t.config_refs);
    mf_status_clear(&st);
}

/* Hostile input: a deflated data.pkl whose small pickle is followed by
 * padding that inflates far beyond it (a zip bomb) is read a window at a
 * time, so opening it costs the window, not the member; validate still
 * counts every byte after STOP. (Time and peak RSS of the 1 GiB variant
 * are measured by hand with /usr/bin/time -v, see the report.) */
static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

static void test_inflate_window(void)
{
    const uint8_t pk[] = {0x80, 0x02, '}', 'q', 0, 'X', 2, 0, 0, 0, 'o', 'k', 'q', 1, 'K', 1, 's', '.'};
    size_t pad = 8u << 20, n = sizeof(pk) + pad;
    uint8_t *raw = calloc(1, n);
    uLong cap = compressBound((uLong)n);
    uint8_t *z = malloc(cap + 512);
    CHECK(raw && z);
    if (!raw || !z) {
        free(raw);
        free(z);
        return;
    }
    memcpy(raw, pk, sizeof(pk));
    z_stream zs = {0};
    CHECK(deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    const char *name = "archive/data.pkl";
    size_t nl = strlen(name), lh = 30 + nl;
    zs.next_in = raw;
    zs.avail_in = (uInt)n;
    zs.next_out = z + lh;
    zs.avail_out = (uInt)cap;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    size_t cs = zs.total_out;
    deflateEnd(&zs);
    uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), raw, (uInt)n);
    memset(z, 0, 30);
    put32(z, 0x04034b50); put16(z + 4, 20); put16(z + 8, 8); put32(z + 14, crc);
    put32(z + 18, (uint32_t)cs); put32(z + 22, (uint32_t)n); put16(z + 26, (unsigned)nl);
    memcpy(z + 30, name, nl);
    uint8_t *c = z + lh + cs;
    memset(c, 0, 46);
    put32(c, 0x02014b50); put16(c + 4, 20); put16(c + 6, 20); put16(c + 10, 8);
    put32(c + 16, crc); put32(c + 20, (uint32_t)cs); put32(c + 24, (uint32_t)n);
    put16(c + 28, (unsigned)nl);
    memcpy(c + 46, name, nl);
    uint8_t *e = c + 46 + nl;
    memset(e, 0, 22);
    put32(e, 0x06054b50); put16(e + 8, 1); put16(e + 10, 1); put32(e + 12, (uint32_t)(46 + nl));
    put32(e + 16, (uint32_t)(lh + cs));
    const char *path = "build/containers-bomb.pt";
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(z, 1, (size_t)(e + 22 - z), f) == (size_t)(e + 22 - z));
    if (f)
        fclose(f);
    mf_model *m = NULL;
    mf_status st;
    mf_status_init(&st);
    int rc = mf_open(path, NULL, &m, &st);
    CHECKF(rc == 0 && m->n_meta >= 1 && m->header_bytes < (2u << 20),
           "a small pickle in an 8 MiB member: %s (read %llu bytes)", rc ? st.msg : "opened",
           rc ? 0ull : (unsigned long long)m->header_bytes);
    if (rc == 0)
        mf_close(m);
    mf_status_clear(&st);
    mf_status_init(&st);
    mf_open_opts strict = {.struct_size = sizeof(mf_open_opts), .flags = MF_OPEN_STRICT};
    rc = mf_open(path, &strict, &m, &st);
    char want[64];
    snprintf(want, sizeof(want), "%zu bytes after the pickle's STOP", pad);
    CHECKF(rc != 0 && strstr(st.msg, want), "validate: %s", st.msg);
    if (rc == 0)
        mf_close(m);
    mf_status_clear(&st);
    /* scan reads it a window at a time too: the pickle is judged, the
     * padding is not inflated */
    mf_scan_report *r = scan(path);
    CHECKF(r && r->verdict == MF_VERDICT_SAFE && r->n_pickles >= 1 &&
           has(r, MF_VERDICT_SAFE, "neither inflated"), "scan of the padded member: %s",
           r ? mf_verdict_name(r->verdict) : "-");
    mf_scan_free(r);
    free(raw);
    free(z);
}

/* ------------------------------------------------------ differential */

typedef MF_VEC(char *) lines;

static void add_line(lines *v, const char *s)
{
    char *d = strdup(s);
    if (d && MF_VEC_PUSH(*v, d))
        free(d);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_lines(lines *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->v[i]);
    MF_VEC_FREE(*v);
}

static void zip_view_lines(const char *path, const uint8_t *b, uint64_t n, lines *out,
                           bool want_miniz)
{
    char buf[4096];
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    if (mf_zip_open_as(&z, MF_ZIP_PYTHON, b, n, path, a, &st)) {
        snprintf(buf, sizeof(buf), "ZE\t%.1000s", path);
        add_line(out, buf);
    } else {
        for (size_t i = 0; i < z.n; i++) {
            const mf_zip_entry *e = &z.entries[i];
            snprintf(buf, sizeof(buf), "Z\t%.1000s\t%.1000s\t%llu\t%lld\t%llu\t%llu\t%.1000s", path, e->name,
                     (unsigned long long)e->local_offset,
                     e->local_ok ? (long long)e->data_offset : -1ll,
                     (unsigned long long)e->csize, (unsigned long long)e->usize,
                     e->refused ? "refused" : "ok");
            add_line(out, buf);
            if (mf_zip_find(&z, e->name) == e) {
                snprintf(buf, sizeof(buf), "ZN\t%.1000s\t%.1000s\t%llu", path, e->name,
                         (unsigned long long)e->local_offset);
                add_line(out, buf);
            }
        }
    }
    mf_status_clear(&st);
    mf_status_init(&st);
    mf_zip mz;
    if (want_miniz && n >= 4 && memcmp(b, "PK\3\4", 4) == 0 &&
        mf_zip_open_as(&mz, MF_ZIP_MINIZ, b, n, path, a, &st) == 0 && mz.n) {
        const char *slash = strchr(mz.entries[0].name, '/');
        size_t pl = slash ? (size_t)(slash - mz.entries[0].name) + 1 : 0;
        bool all = pl > 0;
        for (size_t i = 0; all && i < mz.n; i++)
            all = strncmp(mz.entries[i].name, mz.entries[0].name, pl) == 0;
        for (size_t i = 0; all && i < mz.n; i++) {
            snprintf(buf, sizeof(buf), "M\t%.1000s\t%.1000s", path, mz.entries[i].name + pl);
            add_line(out, buf);
        }
        char want[1100];
        snprintf(want, sizeof(want), "%.*sdata.pkl", (int)pl, mz.entries[0].name);
        const mf_zip_entry *e = all ? mf_zip_find(&mz, want) : NULL;
        uint8_t *d;
        size_t len;
        if (e && mf_zip_extract(&mz, e, 1u << 30, &d, &len, &st) == 0) {
            snprintf(buf, sizeof(buf), "MR\t%.1000s\tdata.pkl\t%zu\t%08lx", path, len,
                     crc32(crc32(0, NULL, 0), d, (uInt)len));
            add_line(out, buf);
            free(d);
        }
    }
    mf_status_clear(&st);
    mf_arena_free(a);
}

static void tar_view_lines(const char *path, const uint8_t *b, uint64_t n, lines *out)
{
    char buf[4096];
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_tar t;
    if (mf_tar_open(&t, b, n, path, a, &st)) {
        snprintf(buf, sizeof(buf), "TE\t%.1000s", path);
        add_line(out, buf);
    } else {
        for (size_t i = 0; i < t.n; i++) {
            const mf_tar_member *m = &t.m[i];
            char ty[4] = {m->type, 0};
            snprintf(buf, sizeof(buf), "T\t%.1000s\t%.1000s\t%.1000s\t%llu\t%llu\t%lld", path, m->name,
                     m->type ? ty : "\\0", (unsigned long long)m->offset,
                     (unsigned long long)m->data_offset, (long long)m->size);
            add_line(out, buf);
        }
    }
    mf_status_clear(&st);
    mf_arena_free(a);
}

static const char *python(void)
{
    static const char *const c[] = {"/usr/bin/python3", "/usr/local/bin/python3"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(c[i], "r");
        if (f) {
            fclose(f);
            return c[i];
        }
    }
    return NULL;
}

static void test_differential(void)
{
    const char *py = python();
    const char *shared = tl_shared_dir();
    if (!py) {
        printf("SKIP differential test: no python3\n");
        return;
    }
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s tests/containers_diff.py --variants build/containers-variants "
             "tests/data/containers %s%s %s%s", py, shared ? shared : "", shared ? "/corpus" : "",
             shared ? shared : "", shared ? "/real" : "");
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p)
        return;
    lines ref = {0};
    char line[4096];
    while (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = 0;
        add_line(&ref, line);
    }
    CHECKF(pclose(p) == 0, "%s failed", cmd);
    /* per file: the reference lines, then ours */
    size_t files = 0, same = 0;
    for (size_t i = 0; i < ref.n;) {
        char path[2048];
        const char *tab = strchr(ref.v[i], '\t');
        snprintf(path, sizeof(path), "%s", tab ? tab + 1 : "");
        path[strcspn(path, "\t")] = 0;
        lines want = {0}, got = {0};
        bool miniz = false;
        size_t j = i;
        for (; j < ref.n; j++) {
            const char *t2 = strchr(ref.v[j], '\t');
            size_t pl = strlen(path);
            if (!t2 || strncmp(t2 + 1, path, pl) != 0 || (t2[1 + pl] && t2[1 + pl] != '\t'))
                break;
            miniz |= ref.v[j][0] == 'M';
            add_line(&want, ref.v[j]);
        }
        i = j;
        mf_file f;
        mf_status st;
        mf_status_init(&st);
        if (mf_map_file(path, &f, &st) == 0) {
            zip_view_lines(path, f.base, f.size, &got, miniz);
            tar_view_lines(path, f.base, f.size, &got);
            mf_unmap_file(&f);
        }
        mf_status_clear(&st);
        if (want.n)
            qsort(want.v, want.n, sizeof(char *), cmp_line);
        if (got.n)
            qsort(got.v, got.n, sizeof(char *), cmp_line);
        bool eq = want.n == got.n;
        for (size_t k = 0; eq && k < want.n; k++)
            eq = strcmp(want.v[k], got.v[k]) == 0;
        files++;
        same += eq;
        if (!eq) {
            fprintf(stderr, "differential: %s\n", path);
            for (size_t k = 0; k < want.n && k < 12; k++)
                fprintf(stderr, "  python: %s\n", want.v[k]);
            for (size_t k = 0; k < got.n && k < 12; k++)
                fprintf(stderr, "  mfmt:   %s\n", got.v[k]);
        }
        CHECKF(eq, "%s: mfmt's member list differs from Python's", path);
        free_lines(&want);
        free_lines(&got);
    }
    printf("differential: %zu of %zu files read alike\n", same, files);
    CHECK(files >= 40);
    free_lines(&ref);
}

int main(void)
{
    test_hostile_fixtures();
    test_legacy_tar_read();
    test_torch_view();
    test_hf_remote_code();
    test_inflate_window();
    test_differential();
    return tl_report("containers");
}
