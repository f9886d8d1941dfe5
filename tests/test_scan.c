/* test_scan.c - the scanner's verdicts, against the published ways around
 * pickle scanners: zip flag bits, bad CRCs, local/central name mismatches,
 * pickles in members with any name, plain pickles named .pt, a legacy
 * magic number spelled otherwise, dangerous names before a broken opcode,
 * memo bombs, STACK_GLOBAL over memoized strings, INST/OBJ, EXT, getattr
 * chains, dotted names through harmless-looking modules, pickles after
 * STOP, appended and nested archives, tar, npy object arrays and
 * torch.storage._load_from_bytes payloads. Benign files must stay safe. */
#include "testlib.h"

#include "ops/scan.h"
#include "pickle_build.h"

static mf_scan_report *scan_bytes(const void *b, size_t n)
{
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r = NULL;
    if (mf_scan_bytes("mem", b, n, &r, &st))
        r = NULL;
    mf_status_clear(&st);
    return r;
}

static bool has_finding(const mf_scan_report *r, mf_verdict sev, const char *needle)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const mf_finding *f = &r->findings[i];
        if (f->severity == sev &&
            (strstr(f->message, needle) || (f->global && strstr(f->global, needle))))
            return true;
    }
    return false;
}

/* Scans b and checks the verdict; with a needle, a finding of that
 * verdict must mention it. */
static void expect(const char *what, const void *b, size_t n, mf_verdict v, const char *needle)
{
    mf_scan_report *r = scan_bytes(b, n);
    CHECKF(r && r->verdict == v, "%s: verdict %s, want %s", what,
           r ? mf_verdict_name(r->verdict) : "(failed)", mf_verdict_name(v));
    if (r && needle)
        CHECKF(has_finding(r, v, needle), "%s: no %s finding mentions \"%s\"", what,
               mf_verdict_name(v), needle);
    mf_scan_free(r);
}

static void os_system(pb *p)
{
    pb_proto(p, 2);
    pb_global(p, "os", "system");
    pb_str(p, "echo pwned");
    pb_op(p, 0x85);
    pb_op(p, 'R');
    pb_stop(p);
}

static void benign(pb *p)
{
    pb_proto(p, 2);
    pb_global(p, "collections", "OrderedDict");
    pb_op(p, ')');
    pb_op(p, 'R');
    pb_str(p, "epoch");
    pb_int(p, 3);
    pb_op(p, 's');
    pb_stop(p);
}

static void test_plain(void)
{
    pb p = {0};
    os_system(&p);
    expect("os.system", p.b, p.n, MF_VERDICT_DANGEROUS, "os.system");
    /* the offset of the GLOBAL opcode is reported */
    mf_scan_report *r = scan_bytes(p.b, p.n);
    CHECK(r && r->n_findings && r->findings[0].offset == 2 &&
          strcmp(r->findings[0].opcode, "GLOBAL") == 0);
    mf_scan_free(r);
    pb_free(&p);
    benign(&p);
    expect("benign", p.b, p.n, MF_VERDICT_SAFE, NULL);
    /* a dangerous pickle after the STOP of a benign one */
    os_system(&p);
    expect("after STOP", p.b, p.n, MF_VERDICT_DANGEROUS, "os.system");
    pb_free(&p);
    /* a dangerous name, then a deliberately broken opcode */
    pb_proto(&p, 2);
    pb_global(&p, "subprocess", "Popen");
    pb_op(&p, 0xff);
    expect("broken after", p.b, p.n, MF_VERDICT_DANGEROUS, "subprocess.Popen");
    pb_free(&p);
    /* an allowlisted name, then a broken opcode: the error counts */
    pb_proto(&p, 2);
    pb_global(&p, "collections", "OrderedDict");
    pb_op(&p, 0xff);
    expect("broken", p.b, p.n, MF_VERDICT_UNKNOWN, "stops with an error");
    pb_free(&p);
    /* protocol 0 INST, protocol 1 OBJ, getattr chains, EXT, dotted names */
    const char *inst = "(S'id'\nios\nsystem\n.";
    expect("INST", inst, strlen(inst), MF_VERDICT_DANGEROUS, "os.system");
    const char *obj = "(cos\nsystem\nS'id'\no.";
    expect("OBJ", obj, strlen(obj), MF_VERDICT_DANGEROUS, "os.system");
    const char *ga = "c__builtin__\ngetattr\n(c__builtin__\ndict\nS'get'\ntR.";
    expect("getattr", ga, strlen(ga), MF_VERDICT_DANGEROUS, "getattr");
    const uint8_t ext[] = {0x80, 2, 0x82, 1, ')', 'R', '.'};
    expect("EXT1", ext, sizeof(ext), MF_VERDICT_DANGEROUS, "EXT");
    const char *dotted = "\x80\x04\x8c\x08__main__\x8c\x09os.system\x93.";
    expect("dotted", dotted, strlen(dotted), MF_VERDICT_DANGEROUS, "__main__.os.system");
    const char *via = "ctorch._utils\nos\n.";
    expect("via module", via, strlen(via), MF_VERDICT_DANGEROUS, "torch._utils.os");
    /* STACK_GLOBAL whose strings come from the memo */
    pb_proto(&p, 4);
    pb_str(&p, "posix");
    pb_op(&p, 0x94);
    pb_str(&p, "system");
    pb_op(&p, 0x94);
    pb_op(&p, '0');
    pb_op(&p, '0');
    pb_op(&p, 'h');
    pb_op(&p, 0);
    pb_op(&p, 'h');
    pb_op(&p, 1);
    pb_op(&p, 0x93);
    pb_stop(&p);
    expect("STACK_GLOBAL memo", p.b, p.n, MF_VERDICT_DANGEROUS, "posix.system");
    pb_free(&p);
    /* an off-allowlist class is unknown, not dangerous */
    const char *cls = "\x80\x02" "c__main__\nNet\n)\x81}b.";
    expect("user class", cls, strlen(cls), MF_VERDICT_UNKNOWN, "__main__.Net");
    /* a memo bomb stops with an error: unknown, and bounded */
    pb_proto(&p, 2);
    pb_op(&p, ']');
    pb_op(&p, 'q');
    pb_op(&p, 0);
    pb_op(&p, '(');
    for (int i = 0; i < 3000; i++) {
        pb_int(&p, i);
        pb_int(&p, i);
        pb_op(&p, 0x86);
    }
    pb_op(&p, 'e');
    for (int i = 0; i < 60000; i++) {
        pb_global(&p, "collections", "OrderedDict");
        pb_op(&p, 'h');
        pb_op(&p, 0);
        pb_op(&p, 0x85);
        pb_op(&p, 'R');
        pb_op(&p, '0');
    }
    pb_stop(&p);
    expect("memo bomb", p.b, p.n, MF_VERDICT_UNKNOWN, "expansion bomb");
    pb_free(&p);
}

static void test_not_pickles(void)
{
    const char *text = "# A model card\nnothing to see\n";
    expect("text", text, strlen(text), MF_VERDICT_SAFE, NULL);
    const char *json = "{\"weight_map\": {}}";
    expect("json", json, strlen(json), MF_VERDICT_SAFE, NULL);
    expect("empty", "", 0, MF_VERDICT_SAFE, NULL);
    uint8_t st[64] = {0};
    st[0] = 'J'; /* a safetensors header length whose low byte is an opcode */
    memcpy(st + 8, "{\"__metadata__\":{}}", 19);
    st[0] = 27;
    expect("safetensors", st, 8 + 27, MF_VERDICT_SAFE, NULL);
    const uint8_t gguf[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect("gguf", gguf, sizeof(gguf), MF_VERDICT_SAFE, NULL);
}

static void test_zip(void)
{
    pb bad = {0}, ok = {0}, z = {0};
    os_system(&bad);
    benign(&ok);
    float data[4] = {1, 2, 3, 4};
    /* the plain torch layout */
    zip_member m[] = {{.name = "archive/data.pkl", .data = ok.b, .n = ok.n},
                      {.name = "archive/data/0", .data = data, .n = sizeof(data)},
                      {.name = "archive/version", .data = "3\n", .n = 2}};
    zip_build(&z, m, 3);
    expect("zip benign", z.b, z.n, MF_VERDICT_SAFE, NULL);
    z.n = 0;
    /* encrypted flag bit on the pickle */
    m[0].data = bad.b;
    m[0].n = bad.n;
    m[0].flags = 1;
    zip_build(&z, m, 3);
    expect("zip flag", z.b, z.n, MF_VERDICT_DANGEROUS, "os.system");
    mf_scan_report *r = scan_bytes(z.b, z.n);
    CHECK(r && has_finding(r, MF_VERDICT_UNKNOWN, "encrypted"));
    const mf_finding *f = NULL;
    for (size_t i = 0; r && i < r->n_findings; i++)
        if (r->findings[i].global && strcmp(r->findings[i].global, "os.system") == 0)
            f = &r->findings[i];
    CHECK(f && strcmp(f->member, "archive/data.pkl") == 0 && f->offset == 2 &&
          f->file_offset == 30 + 16 + 2); /* local header + name + offset */
    mf_scan_free(r);
    z.n = 0;
    m[0].flags = 0;
    /* a bad CRC, and a local name that differs from the central one */
    m[0].bad_crc = 1;
    m[0].local_name = "archive/notes.txt";
    zip_build(&z, m, 3);
    r = scan_bytes(z.b, z.n);
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS && has_finding(r, MF_VERDICT_UNKNOWN, "CRC-32") &&
          has_finding(r, MF_VERDICT_UNKNOWN, "local header names another file"));
    mf_scan_free(r);
    z.n = 0;
    m[0].bad_crc = 0;
    m[0].local_name = NULL;
    /* a benign data.pkl and a payload in a member with an ordinary name,
     * in a storage-like member, or deflated */
    zip_member any[] = {{.name = "archive/data.pkl", .data = ok.b, .n = ok.n},
                        {.name = "archive/extra/notes", .data = bad.b, .n = bad.n}};
    zip_build(&z, any, 2);
    expect("any member name", z.b, z.n, MF_VERDICT_DANGEROUS, "os.system");
    z.n = 0;
    any[1].name = "archive/data/7";
    any[1].deflate = 1;
    zip_build(&z, any, 2);
    expect("deflated storage-like member", z.b, z.n, MF_VERDICT_DANGEROUS, "os.system");
    z.n = 0;
    /* a storage that merely starts like a pickle is not a finding */
    const uint8_t fake[] = {0x80, 0x02, 0x33, 0x41, 0x00, 0x00, 0x80, 0x3f};
    zip_member st[] = {{.name = "archive/data.pkl", .data = ok.b, .n = ok.n},
                       {.name = "archive/data/0", .data = fake, .n = sizeof(fake)}};
    zip_build(&z, st, 2);
    expect("pickle-like storage", z.b, z.n, MF_VERDICT_SAFE, NULL);
    z.n = 0;
    /* ... nor an EXT opcode in it, even in a complete pickle: it names
     * nothing without the loader's copyreg registry (scan_quiet_pickles);
     * in data.pkl it stays dangerous */
    const uint8_t ext[] = {0x80, 0x02, 0x82, 0x05, 0x2e};
    st[1].data = ext;
    st[1].n = sizeof(ext);
    zip_build(&z, st, 2);
    expect("EXT in a storage", z.b, z.n, MF_VERDICT_SAFE, NULL);
    z.n = 0;
    st[0].data = ext;
    st[0].n = sizeof(ext);
    zip_build(&z, st, 2);
    expect("EXT in data.pkl", z.b, z.n, MF_VERDICT_DANGEROUS, "copyreg._extension_registry.5");
    z.n = 0;
    st[0].data = ok.b;
    st[0].n = ok.n;
    st[1].data = fake;
    st[1].n = sizeof(fake);
    /* ... nor its CRC: torch reads a storage as raw bytes and does not check
     * CRCs (scan.c check_member_crc); data.pkl's bad CRC above is one */
    st[1].bad_crc = 1;
    zip_build(&z, st, 2);
    r = scan_bytes(z.b, z.n);
    CHECK(r && r->verdict == MF_VERDICT_SAFE && !has_finding(r, MF_VERDICT_UNKNOWN, "CRC-32"));
    mf_scan_free(r);
    z.n = 0;
    /* a zip inside a zip; a zip appended to a benign pickle */
    pb inner = {0};
    m[0].data = bad.b;
    m[0].n = bad.n;
    zip_build(&inner, m, 3);
    zip_member outer[] = {{.name = "bundle/model.pt", .data = inner.b, .n = inner.n}};
    zip_build(&z, outer, 1);
    r = scan_bytes(z.b, z.n);
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS && r->n_findings &&
          strcmp(r->findings[0].member, "bundle/model.pt!archive/data.pkl") == 0);
    mf_scan_free(r);
    z.n = 0;
    pb_raw(&z, ok.b, ok.n);
    pb_raw(&z, inner.b, inner.n);
    expect("appended zip", z.b, z.n, MF_VERDICT_DANGEROUS, "os.system");
    pb_free(&inner);
    pb_free(&z);
    pb_free(&bad);
    pb_free(&ok);
}

static void test_legacy(void)
{
    /* the magic number as protocol-0 text; the payload in sys_info */
    pb p = {0};
    pb_text(&p, "L119547037146038801333356L\n.");
    pb_text(&p, "I1001\n.");
    os_system(&p);
    expect("legacy sys_info", p.b, p.n, MF_VERDICT_DANGEROUS, "os.system");
    pb_free(&p);
    /* a complete legacy stream, then raw storage bytes that must not count */
    pb_text(&p, "L119547037146038801333356L\n.");
    pb_text(&p, "I1001\n.");
    pb_text(&p, "(dS'little_endian'\nI01\ns.");
    uint32_t s[1] = {2}, str[1] = {1};
    pb_proto(&p, 2);
    pb_tensor_v2(&p, "k", 2, 0, s, str, 1);
    pb_stop(&p);
    pb_text(&p, "(lS'k'\na.");
    const uint8_t data[] = {2, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x02, 'c', 'x', 0x28, 0x29, 0x2e, 0x2e};
    pb_raw(&p, data, sizeof(data));
    expect("legacy benign", p.b, p.n, MF_VERDICT_SAFE, NULL);
    pb_free(&p);
}

static void test_npy_tar_bytes(void)
{
    /* a .npy object array whose pickle runs os.system */
    pb p = {0}, pk = {0};
    os_system(&pk);
    const char *hdr = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
    size_t hl = 128 - 10; /* header padded to 64 bytes */
    pb_raw(&p, "\x93NUMPY\x01\x00", 8);
    pb_u16(&p, (uint16_t)hl);
    pb_raw(&p, hdr, strlen(hdr));
    while (p.n < 10 + hl - 1)
        pb_op(&p, ' ');
    pb_op(&p, '\n');
    pb_raw(&p, pk.b, pk.n);
    expect("npy object", p.b, p.n, MF_VERDICT_DANGEROUS, "os.system");
    pb_free(&p);
    /* a tar member holding the pickle (torch's oldest format) */
    uint8_t tar[2048] = {0};
    memcpy(tar, "pickle", 6);
    snprintf((char *)tar + 124, 12, "%011o", (unsigned)pk.n);
    tar[156] = '0';
    memcpy(tar + 257, "ustar", 5);
    memset(tar + 148, ' ', 8); /* tarfile checks the header checksum */
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += tar[i];
    snprintf((char *)tar + 148, 8, "%06o", sum);
    memcpy(tar + 512, pk.b, pk.n);
    expect("tar", tar, sizeof(tar), MF_VERDICT_DANGEROUS, "os.system");
    /* torch.storage._load_from_bytes(b'<a zip with a payload>') */
    pb inner = {0}, outer = {0};
    zip_member m[] = {{.name = "archive/data.pkl", .data = pk.b, .n = pk.n}};
    zip_build(&inner, m, 1);
    pb_proto(&outer, 2);
    pb_global(&outer, "torch.storage", "_load_from_bytes");
    pb_bytes(&outer, inner.b, inner.n);
    pb_op(&outer, 0x85);
    pb_op(&outer, 'R');
    pb_stop(&outer);
    mf_scan_report *r = scan_bytes(outer.b, outer.n);
    CHECK(r && r->verdict == MF_VERDICT_DANGEROUS && has_finding(r, MF_VERDICT_DANGEROUS, "os.system"));
    mf_scan_free(r);
    pb_free(&inner);
    pb_free(&outer);
    pb_free(&pk);
}

typedef struct tally {
    int files;
    mf_verdict worst, best;
} tally;

static int count(void *ctx, const mf_scan_report *r)
{
    tally *t = ctx;
    if (t->files++ == 0 || r->verdict < t->best)
        t->best = r->verdict;
    if (r->verdict > t->worst)
        t->worst = r->verdict;
    return 0;
}

static void test_paths(void)
{
    pb p = {0};
    os_system(&p);
    pb_write(pb_tmp("model.pt"), p.b, p.n); /* a plain pickle named .pt */
    pb_write(pb_tmp("README.md"), "# hi\n", 5);
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    CHECK(mf_scan_file(pb_tmp("model.pt"), &r, &st) == 0 && r->verdict == MF_VERDICT_DANGEROUS);
    mf_scan_free(r);
    tally t = {0, MF_VERDICT_SAFE, MF_VERDICT_SAFE};
    CHECK(mf_scan_path(pb_dir, count, &t, &st) == 0 && t.files == 2 &&
          t.worst == MF_VERDICT_DANGEROUS);
    CHECK(mf_scan_file(pb_tmp("absent.pt"), &r, &st) == -1 && st.code == MF_ERR_IO);
    mf_status_clear(&st);
    pb_free(&p);
}

/* The corpus: every malicious pickle dangerous, every benign one safe. */
static void test_corpus(void)
{
    const char *shared = tl_shared_dir();
    if (!shared) {
        TL_SKIP("scan: the malicious corpus pickles (no ../shared)");
        return;
    }
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/corpus/pickle/malicious", shared);
    tally t = {0, MF_VERDICT_SAFE, MF_VERDICT_SAFE};
    mf_status st;
    mf_status_init(&st);
    CHECK(mf_scan_path(dir, count, &t, &st) == 0 && t.files >= 17 &&
          t.best == MF_VERDICT_DANGEROUS);
    snprintf(dir, sizeof(dir), "%s/corpus/pickle/benign", shared);
    t = (tally){0, MF_VERDICT_SAFE, MF_VERDICT_SAFE};
    CHECK(mf_scan_path(dir, count, &t, &st) == 0 && t.files >= 13 && t.worst == MF_VERDICT_SAFE);
    mf_status_clear(&st);
}

/* Issue 18: safe only for canonical pickles; "not a pickle" only where
 * CPython's failure is proven. */
static void test_canonical(void)
{
    /* text files: CPython fails before any name (an invalid load key after
     * BININT2, an INT it cannot parse): not pickles */
    const char *mit = "MIT License\n\nCopyright (c) 2024\n";
    expect("MIT license", mit, strlen(mit), MF_VERDICT_SAFE, NULL);
    const char *text = "I am a text file\n";
    expect("INT text", text, strlen(text), MF_VERDICT_SAFE, NULL);
    /* a frame as pickle.dump writes it, then the same bytes framed
     * otherwise */
    uint8_t fr[64];
    const char body[] = "]\x94(K\x01\x8c\x03" "abc\x94" "e.";
    size_t bl = sizeof(body) - 1;
    memcpy(fr, "\x80\x04\x95", 3);
    mf_wr64le(fr + 3, bl);
    memcpy(fr + 11, body, bl);
    expect("framed", fr, 11 + bl, MF_VERDICT_SAFE, NULL);
    mf_wr64le(fr + 3, 7); /* ends inside SHORT_BINUNICODE's argument */
    expect("frame ends in an argument", fr, 11 + bl, MF_VERDICT_UNKNOWN, "inside the argument");
    mf_wr64le(fr + 3, bl - 2); /* whole opcodes, then APPENDS and STOP unframed */
    expect("frame ends before e", fr, 11 + bl, MF_VERDICT_SAFE, NULL);
    fr[11 + bl] = 'N';
    fr[11 + bl + 1] = '.';
    mf_wr64le(fr + 3, bl + 2); /* STOP inside the frame, not its last byte */
    expect("STOP inside a frame", fr, 11 + bl + 2, MF_VERDICT_UNKNOWN, "STOP at byte");
    /* text numbers outside Python's syntax: read as C does, never safe */
    const char *nul = "(lI1\0x\naI0\na.";
    expect("INT with NUL", nul, 14, MF_VERDICT_UNKNOWN, "NUL byte");
    const char *lead = "(lI01\na.";
    expect("INT 01 is True", lead, strlen(lead), MF_VERDICT_SAFE, NULL);
    const char *zero = "(lI007\na.";
    expect("INT leading zeros", zero, strlen(zero), MF_VERDICT_UNKNOWN, "syntax Python writes");
    /* a canonical prefix, no name, then a proven failure: not a pickle;
     * the same after a name: unknown */
    const char *bad = "(lI1\na\xff";
    expect("proven failure", bad, strlen(bad), MF_VERDICT_SAFE, NULL);
    const char *named = "cbuiltins\nset\n\xff";
    expect("failure after a name", named, strlen(named), MF_VERDICT_UNKNOWN, "stops with an error");
}

/* A plain safetensors file whose header length's first byte is EXT1, EXT2
 * or EXT4 (0x82-0x84: 1 in 85 files): pickle.load stops at the next byte,
 * the EXT names nothing in the file: unknown, not dangerous (and never safe:
 * a registered extension is not vouched for); any other first byte of such
 * a header: safe. */
static void test_safetensors_header_bytes(void)
{
    int dangerous = 0, unknown = 0, safe = 0;
    for (int lo = 0; lo < 256; lo++) {
        const char *json = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        size_t hl = 3 * 256 + (size_t)lo, n = 8 + hl + 8;
        uint8_t *b = calloc(1, n);
        if (!b)
            return;
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)(hl >> (8 * k));
        memset(b + 8, ' ', hl);
        memcpy(b + 8, json, strlen(json));
        mf_scan_report *r = scan_bytes(b, n);
        CHECKF(r != NULL, "header length %zu: no report", hl);
        if (r) {
            dangerous += r->verdict == MF_VERDICT_DANGEROUS;
            unknown += r->verdict == MF_VERDICT_UNKNOWN;
            safe += r->verdict == MF_VERDICT_SAFE;
            if (lo >= 0x82 && lo <= 0x84)
                CHECKF(r->verdict == MF_VERDICT_UNKNOWN && has_finding(r, MF_VERDICT_UNKNOWN, "_extension_registry"),
                       "header length 0x%zx: verdict %d", hl, (int)r->verdict);
            mf_scan_free(r);
        }
        free(b);
    }
    printf("safetensors with each header-length byte: %d safe, %d unknown, %d dangerous\n", safe, unknown,
           dangerous);
    CHECK(dangerous == 0 && unknown == 3 && safe == 253);
}

int main(void)
{
    test_safetensors_header_bytes();
    test_canonical();
    test_plain();
    test_not_pickles();
    test_zip();
    test_legacy();
    test_npy_tar_bytes();
    test_paths();
    test_corpus();
    pb_cleanup();
    return tl_report("scan");
}
