/* tar.c - tar member lists exactly as CPython's tarfile builds them (see
 * tar.h). Every rule cites the tarfile function it follows. */
#include "core/tar.h"

#include <stdlib.h>

#define BLOCK 512u

/* str.strip()'s ASCII whitespace: \t \n \v \f \r, \x1c-\x1f and space. */
static bool py_space(uint8_t c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
}

/* int(s, 8) of the stripped text: an optional sign, an optional 0o
 * prefix, octal digits with single underscores between them. */
static bool py_int8(const uint8_t *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    bool prefix = i + 1 < n && s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O');
    if (prefix) {
        i += 2;
        if (i < n && s[i] == '_')
            i++;
    }
    if (i >= n)
        return false;
    uint64_t v = 0;
    bool digit_before = false;
    for (; i < n; i++) {
        if (s[i] == '_' && digit_before && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') {
            digit_before = false;
            continue;
        }
        if (s[i] < '0' || s[i] > '7')
            return false;
        if (v >> 60)
            return false; /* beyond what any file can hold: refused like garbage */
        v = v * 8 + (uint64_t)(s[i] - '0');
        digit_before = true;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* nti(): base-256 when the first byte is 0x80 or 0xff (0xff: negative),
 * else the field up to its first NUL, ASCII, stripped, read by int(.., 8);
 * an empty field is 0. */
static bool nti(const uint8_t *f, size_t n, int64_t *out)
{
    if (f[0] == 0x80 || f[0] == 0xff) {
        uint64_t v = 0;
        for (size_t i = 1; i < n; i++) {
            if (v >> 55)
                return false; /* more than 63 bits: no file is that large */
            v = v << 8 | f[i];
        }
        if (f[0] == 0xff) { /* -(256**(n-1) - v) */
            if (n - 1 >= 8) {
                *out = (int64_t)v; /* wraps exactly as the two's complement value */
                return true;
            }
            *out = (int64_t)v - (int64_t)(1ull << (8 * (n - 1)));
            return true;
        }
        *out = (int64_t)v;
        return true;
    }
    size_t len = 0;
    while (len < n && f[len])
        len++;
    for (size_t i = 0; i < len; i++)
        if (f[i] >= 0x80)
            return false; /* nts(..., "ascii", "strict") */
    size_t a = 0, b = len;
    while (a < b && py_space(f[a]))
        a++;
    while (b > a && py_space(f[b - 1]))
        b--;
    if (a == b) {
        *out = 0;
        return true;
    }
    return py_int8(f + a, b - a, out);
}

/* calc_chksums(): the header's bytes summed with the checksum field as
 * spaces, unsigned or signed. */
static bool checksum_ok(const uint8_t *h)
{
    int64_t want;
    if (!nti(h + 148, 8, &want))
        return false;
    int64_t u = 256, s = 256;
    for (int i = 0; i < 512; i++) {
        if (i >= 148 && i < 156)
            continue;
        u += h[i];
        s += (int8_t)h[i];
    }
    return want == u || want == s;
}

typedef enum { H_OK, H_EOF, H_EMPTY, H_TRUNC, H_INVALID } hdr_status;

typedef struct raw_hdr {
    const uint8_t *h;
    char type;
    int64_t size;
    char name[257], link[101];
} raw_hdr;

static void nts(char *dst, const uint8_t *f, size_t n)
{
    size_t k = 0;
    while (k < n && f[k])
        k++;
    memcpy(dst, f, k);
    dst[k] = 0;
}

static bool is_gnu_type(char t)
{
    return t == 'L' || t == 'K' || t == 'S';
}

static bool is_supported(char t)
{
    return t == 0 || strchr("01234567LKS", t) != NULL;
}

bool mf_tar_is_regular(char type)
{
    return type == '0' || type == 0 || type == '7' || type == 'S';
}

static bool is_dir(char t)
{
    return t == '5';
}

static void rstrip_slash(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        s[--n] = 0;
}

/* TarInfo.frombuf */
static hdr_status frombuf(const uint8_t *b, uint64_t size, uint64_t off, raw_hdr *r)
{
    if (off >= size)
        return H_EMPTY;
    if (size - off < BLOCK)
        return H_TRUNC;
    const uint8_t *h = b + off;
    bool zero = true;
    for (unsigned i = 0; i < BLOCK && zero; i++)
        zero = h[i] == 0;
    if (zero)
        return H_EOF;
    if (!checksum_ok(h))
        return H_INVALID;
    static const struct { unsigned at, n; } nums[] = {
        {100, 8}, {108, 8}, {116, 8}, {124, 12}, {136, 12}, {329, 8}, {337, 8}};
    int64_t v[7];
    for (int i = 0; i < 7; i++)
        if (!nti(h + nums[i].at, nums[i].n, &v[i]))
            return H_INVALID;
    r->h = h;
    r->size = v[3];
    r->type = (char)h[156];
    char name[101], prefix[156];
    nts(name, h, 100);
    nts(r->link, h + 157, 100);
    nts(prefix, h + 345, 155);
    if (r->type == 0 && name[0] && name[strlen(name) - 1] == '/')
        r->type = '5'; /* V7: a directory is a regular file named with a slash */
    if (is_dir(r->type))
        rstrip_slash(name);
    if (prefix[0] && !is_gnu_type(r->type))
        snprintf(r->name, sizeof(r->name), "%s/%s", prefix, name);
    else
        snprintf(r->name, sizeof(r->name), "%s", name);
    return H_OK;
}

static uint64_t block_up(int64_t n)
{
    /* _block(): divmod rounds toward -inf for negative sizes */
    if (n >= 0)
        return ((uint64_t)n + BLOCK - 1) / BLOCK * BLOCK;
    return 0; /* callers treat negative sizes on their own */
}

bool mf_tar_probe(const uint8_t *b, uint64_t size)
{
    raw_hdr r;
    return frombuf(b, size, 0, &r) == H_OK;
}

typedef struct pax_kv {
    char *path, *linkpath;
    bool has_size;
    int64_t size;
} pax_kv;

/* int(value) in base 10, as PAX_NUMBER_FIELDS do; ValueError gives 0. */
static int64_t py_int10(const char *s, size_t n)
{
    size_t a = 0, b = n;
    while (a < b && py_space((uint8_t)s[a]))
        a++;
    while (b > a && py_space((uint8_t)s[b - 1]))
        b--;
    bool neg = false;
    if (a < b && (s[a] == '+' || s[a] == '-'))
        neg = s[a++] == '-';
    if (a >= b)
        return 0;
    int64_t v = 0;
    bool prev_digit = false;
    for (size_t i = a; i < b; i++) {
        if (s[i] == '_' && prev_digit && i + 1 < b && s[i + 1] >= '0' && s[i + 1] <= '9') {
            prev_digit = false;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (s[i] - '0');
        prev_digit = true;
    }
    return neg ? -v : v;
}

/* _proc_pax: "%d %s=%s\n" records until the data ends or a NUL. */
static bool parse_pax(const uint8_t *p, uint64_t n, pax_kv *kv, mf_arena *a)
{
    uint64_t pos = 0;
    while (pos < n && p[pos] != 0) {
        uint64_t q = pos, len = 0;
        while (q < n && q - pos < 20 && p[q] >= '0' && p[q] <= '9')
            len = len * 10 + (uint64_t)(p[q++] - '0');
        if (q == pos || q >= n || p[q] != ' ')
            return false;
        if (len < 5 || len > n - pos)
            return false;
        uint64_t end = pos + len - 1; /* the record's newline */
        if (p[end] != '\n')
            return false;
        const char *kw = (const char *)p + q + 1;
        const char *eq = memchr(kw, '=', (size_t)(p + end - (const uint8_t *)kw));
        if (!eq || eq == kw)
            return false;
        size_t kl = (size_t)(eq - kw), vl = (size_t)((const char *)p + end - eq - 1);
        const char *val = eq + 1;
        if (kl == 4 && memcmp(kw, "path", 4) == 0) {
            kv->path = mf_arena_strndup(a, val, vl);
            if (kv->path)
                rstrip_slash(kv->path);
        } else if (kl == 8 && memcmp(kw, "linkpath", 8) == 0) {
            kv->linkpath = mf_arena_strndup(a, val, vl);
        } else if (kl == 4 && memcmp(kw, "size", 4) == 0) {
            kv->has_size = true;
            kv->size = py_int10(val, vl);
        }
        pos += len;
    }
    return true;
}

static void apply_pax(mf_tar_member *m, const pax_kv *kv)
{
    if (kv->path)
        m->name = kv->path;
    if (kv->linkpath)
        m->linkname = kv->linkpath;
    if (kv->has_size)
        m->size = kv->size;
}

typedef struct reader {
    const uint8_t *b;
    uint64_t size;
    mf_arena *a;
    pax_kv global;
} reader;

/* fromtarfile + _proc_member: one member (its extended headers first);
 * *next is where TarFile.next reads on. */
static hdr_status read_member(reader *rd, uint64_t off, mf_tar_member *m, uint64_t *next,
                              int depth)
{
    raw_hdr r;
    hdr_status hs = frombuf(rd->b, rd->size, off, &r);
    if (hs != H_OK)
        return hs;
    uint64_t data = off + BLOCK;
    if (depth > 64)
        return H_INVALID;
    if (r.type == 'L' || r.type == 'K' || r.type == 'x' || r.type == 'g' || r.type == 'X') {
        if (r.size < 0)
            return H_INVALID;
        uint64_t blk = block_up(r.size);
        uint64_t avail = data < rd->size ? rd->size - data : 0;
        uint64_t got = blk < avail ? blk : avail; /* fileobj.read: a short read */
        const uint8_t *p = rd->b + (data < rd->size ? data : rd->size);
        pax_kv kv = {0};
        if (r.type == 'x' || r.type == 'X' || r.type == 'g') {
            pax_kv *dst = r.type == 'g' ? &rd->global : &kv;
            if (!parse_pax(p, got, dst, rd->a))
                return H_INVALID;
        }
        hdr_status sub = read_member(rd, data + got, m, next, depth + 1);
        if (sub != H_OK)
            return H_INVALID; /* SubsequentHeaderError (or the end, for 'g') */
        m->offset = off;
        if (r.type == 'L' || r.type == 'K') {
            size_t k = 0;
            while (k < got && p[k])
                k++;
            char *s = mf_arena_strndup(rd->a, (const char *)p, k);
            if (!s)
                return H_INVALID;
            if (r.type == 'L')
                m->name = s;
            else
                m->linkname = s;
            if (is_dir(m->type)) {
                size_t l = strlen(m->name);
                if (l && m->name[l - 1] == '/')
                    ((char *)m->name)[l - 1] = 0; /* removesuffix("/") */
            }
        } else if (r.type == 'x' || r.type == 'X') {
            apply_pax(m, &kv);
            if (kv.has_size) {
                uint64_t o = m->data_offset;
                if (mf_tar_is_regular(m->type) || !is_supported(m->type)) {
                    if (m->size < 0)
                        return H_INVALID;
                    o += block_up(m->size);
                }
                *next = o;
            }
        }
        return H_OK;
    }
    /* _proc_builtin (old GNU sparse members are read as plain data here) */
    m->offset = off;
    m->type = r.type;
    m->name = mf_arena_strdup(rd->a, r.name);
    m->linkname = mf_arena_strdup(rd->a, r.link);
    if (!m->name || !m->linkname)
        return H_INVALID;
    m->size = r.size;
    m->data_offset = data;
    uint64_t o = data;
    if (mf_tar_is_regular(r.type) || !is_supported(r.type)) {
        if (r.size < 0)
            return H_INVALID; /* tarfile would seek backwards: not followed */
        o += block_up(r.size);
    }
    *next = o;
    apply_pax(m, &rd->global);
    if (is_dir(m->type))
        rstrip_slash((char *)m->name);
    return H_OK;
}

int mf_tar_open(mf_tar *t, const uint8_t *b, uint64_t size, const char *file, mf_arena *a,
                mf_status *st)
{
    memset(t, 0, sizeof(*t));
    t->base = b;
    t->size = size;
    t->file = file;
    reader rd = {b, size, a, {0}};
    size_t cap = 0;
    uint64_t off = 0;
    for (;;) {
        mf_tar_member m = {0};
        uint64_t next = off;
        hdr_status hs = read_member(&rd, off, &m, &next, 0);
        if (hs != H_OK) {
            if (off == 0 && hs != H_EOF)
                return mf_fail(st, MF_ERR_FORMAT, file, 0,
                               "tar: the first header is %s (tarfile: ReadError)",
                               hs == H_EMPTY ? "missing" : hs == H_TRUNC ? "truncated"
                                                                       : "invalid");
            t->end = off;
            t->end_why = hs == H_EOF ? "an end-of-archive block" : hs == H_EMPTY ? "the end of the file"
                         : hs == H_TRUNC ? "a truncated header" : "an invalid header";
            return 0;
        }
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            mf_tar_member *v = mf_arena_calloc(a, nc, sizeof(*v));
            if (!v)
                return mf_oom(st, file);
            if (t->n)
                memcpy(v, t->m, t->n * sizeof(*v));
            t->m = v;
            cap = nc;
        }
        t->m[t->n++] = m;
        if (next <= off) /* cannot happen with sizes >= 0; never loop */
            next = off + BLOCK;
        off = next;
    }
}

const mf_tar_member *mf_tar_find(const mf_tar *t, const char *name)
{
    for (size_t i = t->n; i-- > 0;)
        if (strcmp(t->m[i].name, name) == 0)
            return &t->m[i];
    return NULL;
}

/* os.path.normpath for the relative names links use. */
static void normpath(const char *in, char *out, size_t cap)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", in);
    const char *parts[256];
    size_t np = 0;
    bool abs = buf[0] == '/';
    for (char *s = strtok(buf, "/"); s && np < 256; s = strtok(NULL, "/")) {
        if (strcmp(s, ".") == 0)
            continue;
        if (strcmp(s, "..") == 0 && np && strcmp(parts[np - 1], "..") != 0) {
            np--;
            continue;
        }
        if (strcmp(s, "..") == 0 && abs)
            continue;
        parts[np++] = s;
    }
    size_t k = 0;
    out[0] = 0;
    if (abs && k + 1 < cap)
        out[k++] = '/', out[k] = 0;
    for (size_t i = 0; i < np; i++)
        k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, "%s%s", i ? "/" : "", parts[i]);
    if (!out[0] && cap > 1)
        snprintf(out, cap, ".");
}

/* _find_link_target: a symlink's target relative to its folder, searched
 * in the whole archive; a hard link's before the link. Both normalized. */
static const mf_tar_member *link_target(const mf_tar *t, const mf_tar_member *m)
{
    char want[1024], norm[1024], cand[1024];
    if (m->type == '2') {
        const char *slash = strrchr(m->name, '/');
        int dl = slash ? (int)(slash - m->name) : 0;
        if (dl && m->linkname[0])
            snprintf(want, sizeof(want), "%.*s/%s", dl, m->name, m->linkname);
        else
            snprintf(want, sizeof(want), "%s", dl ? m->name : m->linkname);
        if (dl && !m->linkname[0])
            snprintf(want, sizeof(want), "%.*s", dl, m->name);
    } else {
        snprintf(want, sizeof(want), "%s", m->linkname);
    }
    normpath(want, norm, sizeof(norm));
    size_t limit = m->type == '2' ? t->n : (size_t)(m - t->m);
    for (size_t i = limit; i-- > 0;) {
        normpath(t->m[i].name, cand, sizeof(cand));
        if (strcmp(cand, norm) == 0)
            return &t->m[i];
    }
    return NULL;
}

const mf_tar_member *mf_tar_resolve(const mf_tar *t, const mf_tar_member *m)
{
    for (int hops = 0; m && hops < 32; hops++) {
        if (mf_tar_is_regular(m->type) || !is_supported(m->type))
            return m;
        if (m->type != '1' && m->type != '2')
            return NULL;
        m = link_target(t, m);
    }
    return NULL;
}

int mf_tar_data(const mf_tar *t, const mf_tar_member *m, const uint8_t **p, uint64_t *n,
                mf_status *st)
{
    if (m->size < 0 || m->data_offset > t->size || (uint64_t)m->size > t->size - m->data_offset)
        return mf_fail(st, MF_ERR_FORMAT, t->file, (int64_t)m->offset,
                       "tar member \"%s\": %lld bytes of data run past the end of the file "
                       "(tarfile: unexpected end of data)", m->name, (long long)m->size);
    *p = t->base + m->data_offset;
    *n = (uint64_t)m->size;
    return 0;
}
