/* test_pickle.c - the restricted pickle interpreter, opcode by opcode, on
 * pickles built here byte by byte: values, memo, marks, errors with their
 * offsets, the names reported for the scanner, what allowlisted calls
 * build, and the bounds that stop expansion bombs. */
#include "testlib.h"

#include "core/pickle.h"
#include "pickle_build.h"

#include <time.h>

typedef struct event {
    char name[128], opcode[16];
    uint64_t off;
    pk_class cls;
} event;

static event events[64];
static int n_events;

static void on_global(void *ctx, const pk_global *g, const char *opcode, uint64_t off)
{
    (void)ctx;
    if (n_events == 64)
        return;
    event *e = &events[n_events++];
    snprintf(e->name, sizeof(e->name), "%s.%s", g->module, g->name);
    snprintf(e->opcode, sizeof(e->opcode), "%s", opcode);
    e->off = off;
    e->cls = g->cls;
}

/* Runs the pickle; returns its value (kept alive in *pm) or NULL. */
static pk_obj *run(pk_machine **pm, const void *d, size_t n, mf_status *st, uint64_t *ops)
{
    pk_opts o = {.file = "t.pkl", .on_global = on_global};
    *pm = pk_new(&o);
    n_events = 0;
    pk_obj *v = NULL;
    size_t used;
    uint64_t k = 0;
    mf_status_init(st);
    int rc = pk_load(*pm, d, n, &v, &used, &k, st);
    if (ops)
        *ops = k;
    return rc ? NULL : v;
}

static pk_obj *run_text(pk_machine **pm, const char *s, mf_status *st)
{
    return run(pm, s, strlen(s), st, NULL);
}

static void done(pk_machine *pm, mf_status *st)
{
    pk_free(pm);
    mf_status_clear(st);
}

static bool is_int(const pk_obj *o, int64_t v)
{
    return o && o->kind == PK_INT && o->u.i == v;
}

static bool is_text(const pk_obj *o, pk_kind k, const char *s)
{
    return o && o->kind == k && o->u.s.n == strlen(s) && memcmp(o->u.s.p, s, o->u.s.n) == 0;
}

/* ------------------------------------------------------------ numbers */

static void test_numbers(void)
{
    pk_machine *pm;
    mf_status st;
    CHECK(is_int(run_text(&pm, "I42\n.", &st), 42));
    done(pm, &st);
    pk_obj *v = run_text(&pm, "I01\n.", &st);
    CHECK(v && v->kind == PK_BOOL && v->u.b);
    done(pm, &st);
    CHECK(is_int(run_text(&pm, "I-0x10\n.", &st), -16)); /* int(text, 0) */
    done(pm, &st);
    CHECK(is_text(run_text(&pm, "L123456789012345678901234567890L\n.", &st), PK_BIGINT,
                  "123456789012345678901234567890"));
    done(pm, &st);
    CHECK(is_int(run_text(&pm, "L-5L\n.", &st), -5));
    done(pm, &st);
    CHECK(run_text(&pm, "I12a\n.", &st) == NULL && strstr(st.msg, "not an integer"));
    done(pm, &st);
    /* binary ints */
    const uint8_t bi[] = {'J', 0xfe, 0xff, 0xff, 0xff, '.'};
    CHECK(is_int(run(&pm, bi, sizeof(bi), &st, NULL), -2));
    done(pm, &st);
    const uint8_t b1[] = {'K', 0xff, '.'}, b2[] = {'M', 0x34, 0x12, '.'};
    CHECK(is_int(run(&pm, b1, sizeof(b1), &st, NULL), 255));
    done(pm, &st);
    CHECK(is_int(run(&pm, b2, sizeof(b2), &st, NULL), 0x1234));
    done(pm, &st);
    /* LONG1: 2**70, -1, 0 (no bytes), -2**63 */
    const uint8_t l70[] = {0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, '.'};
    CHECK(is_text(run(&pm, l70, sizeof(l70), &st, NULL), PK_BIGINT, "1180591620717411303424"));
    done(pm, &st);
    const uint8_t lm1[] = {0x8a, 1, 0xff, '.'}, l0[] = {0x8a, 0, '.'};
    CHECK(is_int(run(&pm, lm1, sizeof(lm1), &st, NULL), -1));
    done(pm, &st);
    CHECK(is_int(run(&pm, l0, sizeof(l0), &st, NULL), 0));
    done(pm, &st);
    const uint8_t lmin[] = {0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80, '.'};
    CHECK(is_int(run(&pm, lmin, sizeof(lmin), &st, NULL), INT64_MIN));
    done(pm, &st);
    const uint8_t lneg[] = {0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, '.'}; /* -2**70 */
    CHECK(is_text(run(&pm, lneg, sizeof(lneg), &st, NULL), PK_BIGINT, "-1180591620717411303424"));
    done(pm, &st);
    /* torch's legacy magic number, as protocol 2 writes it and as text */
    const uint8_t magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                             0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
    CHECK(is_text(run(&pm, magic, sizeof(magic), &st, NULL), PK_BIGINT, PK_TORCH_LEGACY_MAGIC));
    done(pm, &st);
    CHECK(is_text(run_text(&pm, "L119547037146038801333356L\n.", &st), PK_BIGINT,
                  PK_TORCH_LEGACY_MAGIC));
    done(pm, &st);
    /* floats */
    v = run_text(&pm, "F1.5\n.", &st);
    CHECK(v && v->kind == PK_FLOAT && v->u.f == 1.5);
    done(pm, &st);
    const uint8_t bf[] = {'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, '.'};
    v = run(&pm, bf, sizeof(bf), &st, NULL);
    CHECK(v && v->kind == PK_FLOAT && v->u.f == 1.5);
    done(pm, &st);
    const uint8_t singles[] = {'N', 0x88, 0x89, 0x87, '.'};
    v = run(&pm, singles, sizeof(singles), &st, NULL);
    CHECK(v && v->kind == PK_TUPLE && v->u.c.n == 3 && v->u.c.v[0]->kind == PK_NONE &&
          v->u.c.v[1]->u.b && !v->u.c.v[2]->u.b);
    done(pm, &st);
}

/* ------------------------------------------------------------ strings */

static void test_strings(void)
{
    pk_machine *pm;
    mf_status st;
    CHECK(is_text(run_text(&pm, "S'a\\nb\\x41\\101\\''\n.", &st), PK_STR, "a\nbAA'"));
    done(pm, &st);
    CHECK(run_text(&pm, "Sabc\n.", &st) == NULL && strstr(st.msg, "quoted"));
    done(pm, &st);
    CHECK(is_text(run_text(&pm, "Vh\\u00e9llo \\U0001F600\n.", &st), PK_STR,
                  "h\xc3\xa9llo \xf0\x9f\x98\x80"));
    done(pm, &st);
    const uint8_t bs[] = {'T', 2, 0, 0, 0, 'h', 'i', 'U', 1, 'x', 0x86, '.'};
    pk_obj *v = run(&pm, bs, sizeof(bs), &st, NULL);
    CHECK(v && v->kind == PK_TUPLE && is_text(v->u.c.v[0], PK_STR, "hi") &&
          is_text(v->u.c.v[1], PK_STR, "x"));
    done(pm, &st);
    const uint8_t u8[] = {0x8d, 2, 0, 0, 0, 0, 0, 0, 0, 'o', 'k', '.'};
    CHECK(is_text(run(&pm, u8, sizeof(u8), &st, NULL), PK_STR, "ok"));
    done(pm, &st);
    const uint8_t by[] = {'C', 2, 1, 2, 0x8e, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0x96, 1, 0, 0, 0, 0,
                          0, 0, 0, 4, 0x87, '.'};
    v = run(&pm, by, sizeof(by), &st, NULL);
    CHECK(v && v->u.c.n == 3 && v->u.c.v[0]->kind == PK_BYTES && v->u.c.v[0]->u.s.n == 2 &&
          v->u.c.v[2]->kind == PK_BYTES && v->u.c.v[2]->u.s.p[0] == 4);
    done(pm, &st);
    /* a length beyond the data, and a negative BINSTRING length */
    const uint8_t longer[] = {'X', 0xff, 0xff, 0xff, 0x7f, 'a', '.'};
    CHECK(run(&pm, longer, sizeof(longer), &st, NULL) == NULL && strstr(st.msg, "byte 0:"));
    done(pm, &st);
    const uint8_t neg[] = {'T', 0xff, 0xff, 0xff, 0xff, '.'};
    CHECK(run(&pm, neg, sizeof(neg), &st, NULL) == NULL && strstr(st.msg, "negative"));
    done(pm, &st);
}

/* --------------------------------------------------------- containers */

static void test_containers(void)
{
    pk_machine *pm;
    mf_status st;
    /* [1, 2, 3] via EMPTY_LIST, APPEND, MARK, APPENDS */
    pk_obj *v = run_text(&pm, "]I1\na(I2\nI3\ne.", &st);
    CHECK(v && v->kind == PK_LIST && v->u.c.n == 3 && is_int(v->u.c.v[2], 3));
    done(pm, &st);
    /* dict: 1 and True are one key (Python semantics), insertion order kept */
    v = run_text(&pm, "}I1\nS'a'\nsI5\nS'x'\nsI01\nS'b'\ns.", &st);
    CHECK(v && v->kind == PK_DICT && v->u.c.n == 2 && is_text(v->u.c.v[1], PK_STR, "b") &&
          is_int(v->u.c.v[2], 5));
    done(pm, &st);
    /* DICT from a mark, SETITEMS, tuple keys */
    v = run_text(&pm, "(I1\nI2\nd(I3\nI4\nI3\nI5\nu.", &st);
    CHECK(v && v->kind == PK_DICT && v->u.c.n == 2 && is_int(v->u.c.v[3], 5));
    done(pm, &st);
    v = run_text(&pm, "}(I1\nI2\ntI7\ns(I1\nI2\ntI8\ns.", &st);
    CHECK(v && v->u.c.n == 1 && is_int(v->u.c.v[1], 8));
    done(pm, &st);
    /* a large dict goes through the key index */
    pb p = {0};
    pb_op(&p, '}');
    pb_op(&p, '(');
    for (int i = 0; i < 5000; i++) {
        pb_int(&p, i % 2500);
        pb_int(&p, i);
    }
    pb_op(&p, 'u');
    pb_stop(&p);
    v = run(&pm, p.b, p.n, &st, NULL);
    CHECK(v && v->u.c.n == 2500 && is_int(v->u.c.v[2 * 7 + 1], 2507));
    done(pm, &st);
    pb_free(&p);
    /* unhashable key */
    CHECK(run_text(&pm, "}]I1\ns.", &st) == NULL && strstr(st.msg, "unhashable"));
    done(pm, &st);
    /* sets */
    const uint8_t sets[] = {0x8f, '(', 'K', 1, 'K', 1, 'K', 2, 0x90, '(', 'K', 3, 0x91, 0x86, '.'};
    v = run(&pm, sets, sizeof(sets), &st, NULL);
    CHECK(v && v->u.c.v[0]->kind == PK_SET && v->u.c.v[0]->u.c.n == 2 &&
          v->u.c.v[1]->kind == PK_FROZENSET && v->u.c.v[1]->u.c.n == 1);
    done(pm, &st);
    /* TUPLE1..3, TUPLE, EMPTY_TUPLE, LIST */
    const uint8_t tup[] = {'K', 1, 0x85, 'K', 1, 'K', 2, 0x86, ')', '(', 'K', 9, 'l', '(', 't',
                           '(', 0x85, 't', '.'};
    /* the last TUPLE1 reaches below the mark: C's unpickler refuses */
    CHECK(run(&pm, tup, sizeof(tup), &st, NULL) == NULL && strstr(st.msg, "underflow"));
    done(pm, &st);
    const uint8_t tup2[] = {'K', 1, 0x85, 'K', 1, 'K', 2, 0x86, ')', '(', 'K', 9, 'l', '(', 't',
                            't', '.'};
    CHECK(run(&pm, tup2, sizeof(tup2), &st, NULL) == NULL); /* TUPLE without a mark */
    done(pm, &st);
    const uint8_t tup3[] = {'(', 'K', 1, 0x85, 'K', 1, 'K', 2, 0x86, ')', '(', 'K', 9, 'l',
                            '(', 't', 't', '.'};
    v = run(&pm, tup3, sizeof(tup3), &st, NULL);
    CHECK(v && v->kind == PK_TUPLE && v->u.c.n == 5 && v->u.c.v[3]->kind == PK_LIST &&
          v->u.c.v[4]->kind == PK_TUPLE && v->u.c.v[4]->u.c.n == 0);
    done(pm, &st);
}

/* ------------------------------------------------------ memo and stack */

static void test_memo_stack(void)
{
    pk_machine *pm;
    mf_status st;
    pk_obj *v = run_text(&pm, "(S'x'\np0\n0g0\ng0\nt.", &st);
    CHECK(v && v->u.c.n == 2 && v->u.c.v[0] == v->u.c.v[1]);
    done(pm, &st);
    const uint8_t bin[] = {'K', 7, 'q', 3, 'r', 9, 0, 0, 0, 0x94, '0', 'h', 3, 'j', 9, 0, 0, 0,
                           'h', 2, 0x87, '.'}; /* MEMOIZE's index is the memo's size */
    v = run(&pm, bin, sizeof(bin), &st, NULL);
    CHECK(v && v->u.c.n == 3 && is_int(v->u.c.v[0], 7) && is_int(v->u.c.v[2], 7));
    done(pm, &st);
    CHECK(run_text(&pm, "I1\ng5\n.", &st) == NULL && strstr(st.msg, "memo"));
    done(pm, &st);
    /* DUP, POP, POP_MARK; POP on an empty stack above a mark pops the mark */
    v = run_text(&pm, "(I1\n2(I2\nI3\n1(0t.", &st);
    CHECK(v && v->kind == PK_TUPLE && v->u.c.n == 2);
    done(pm, &st);
    /* marks fence the stack: APPEND right after MARK reaches below it */
    CHECK(run_text(&pm, "](I1\n1(a.", &st) == NULL && strstr(st.msg, "underflow"));
    done(pm, &st);
    CHECK(run_text(&pm, ".", &st) == NULL && strstr(st.msg, "STOP"));
    done(pm, &st);
}

/* ------------------------------------------------------------- errors */

static void test_errors(void)
{
    pk_machine *pm;
    mf_status st;
    uint64_t ops;
    const uint8_t p6[] = {0x80, 6, 'N', '.'};
    CHECK(run(&pm, p6, sizeof(p6), &st, NULL) == NULL && strstr(st.msg, "protocol 6"));
    done(pm, &st);
    const uint8_t frame[] = {0x80, 4, 0x95, 100, 0, 0, 0, 0, 0, 0, 0, 'N', '.'};
    CHECK(run(&pm, frame, sizeof(frame), &st, NULL) == NULL && strstr(st.msg, "FRAME"));
    done(pm, &st);
    const uint8_t nb[] = {0x80, 5, 0x97, '.'};
    CHECK(run(&pm, nb, sizeof(nb), &st, NULL) == NULL && strstr(st.msg, "out-of-band"));
    done(pm, &st);
    const uint8_t ro[] = {0x80, 5, 'C', 1, 'a', 0x98, '.'};
    CHECK(run(&pm, ro, sizeof(ro), &st, NULL) != NULL);
    done(pm, &st);
    /* an invalid opcode: the message names its byte, ops tells what ran */
    const uint8_t bad[] = {0x80, 2, 'N', 0xff, '.'};
    CHECK(run(&pm, bad, sizeof(bad), &st, &ops) == NULL && strstr(st.msg, "t.pkl: byte 3:") &&
          strstr(st.msg, "invalid opcode 0xff") && ops == 2);
    done(pm, &st);
    const uint8_t trunc[] = {0x80, 2, 'N'};
    CHECK(run(&pm, trunc, sizeof(trunc), &st, NULL) == NULL && strstr(st.msg, "ends before STOP"));
    done(pm, &st);
    CHECK(run_text(&pm, "cos\nsys", &st) == NULL && strstr(st.msg, "newline"));
    done(pm, &st);
    const uint8_t sg[] = {0x80, 4, 'K', 1, 'K', 2, 0x93, '.'};
    CHECK(run(&pm, sg, sizeof(sg), &st, NULL) == NULL && strstr(st.msg, "STACK_GLOBAL"));
    done(pm, &st);
    const uint8_t ext0[] = {0x80, 2, 0x82, 0, '.'};
    CHECK(run(&pm, ext0, sizeof(ext0), &st, NULL) == NULL && strstr(st.msg, "code 0"));
    done(pm, &st);
    /* BUILD on a plain value: CPython's load_build only fails once it
     * looks for a __dict__; None as state is a no-op (pickle.loads(b"I1\nNb.")
     * is 1). Not modelled: the stream goes on either way. */
    pk_obj *built = run_text(&pm, "I1\nNb.", &st);
    CHECK(built && built->kind == PK_INT && built->u.i == 1);
    done(pm, &st);
    /* SETITEM on a list, as CPython does: pickle.loads(b"(lI0\naI5\naI0\nI7\ns.") == [7, 5] */
    pk_obj *l = run_text(&pm, "(lI0\naI5\naI0\nI7\ns.", &st);
    CHECK(l && l->kind == PK_LIST && l->u.c.n == 2 && l->u.c.v[0]->u.i == 7 &&
          l->u.c.v[1]->u.i == 5);
    done(pm, &st);
    /* ...and fails where CPython does: index out of range, key not an int */
    CHECK(run_text(&pm, "(lI0\naI3\nI7\ns.", &st) == NULL && strstr(st.msg, "out of range"));
    done(pm, &st);
    CHECK(run_text(&pm, "(lI0\naS'k'\nI7\ns.", &st) == NULL && strstr(st.msg, "not an int"));
    done(pm, &st);
    /* SETITEM on a tuple fails in CPython too */
    CHECK(run_text(&pm, "(I1\ntI0\nI7\ns.", &st) == NULL && strstr(st.msg, "item assignment"));
    done(pm, &st);
    /* a STRING argument longer than 64 KiB: Python's readline has no limit */
    {
        size_t big = 70000;
        char *txt = malloc(big + 16);
        CHECK(txt != NULL);
        if (txt) {
            txt[0] = 'S';
            txt[1] = '\'';
            memset(txt + 2, 'a', big);
            memcpy(txt + 2 + big, "'\n.", 4);
            pk_obj *sv = run(&pm, (const uint8_t *)txt, big + 6, &st, NULL);
            CHECK(sv && sv->kind == PK_STR && sv->u.s.n == big);
            done(pm, &st);
            free(txt);
        }
    }
}

/* ------------------------------------------------------ names reached */

static void test_names(void)
{
    pk_machine *pm;
    mf_status st;
    /* GLOBAL + REDUCE, INST, OBJ, STACK_GLOBAL over memoized strings, EXT */
    CHECK(run_text(&pm, "cos\nsystem\n(S'x'\ntR.", &st) != NULL);
    CHECK(n_events == 1 && strcmp(events[0].name, "os.system") == 0 &&
          strcmp(events[0].opcode, "GLOBAL") == 0 && events[0].off == 0 &&
          events[0].cls == PK_DANGEROUS);
    done(pm, &st);
    CHECK(run_text(&pm, "(S'x'\nios\nsystem\n.", &st) != NULL);
    CHECK(n_events == 1 && strcmp(events[0].opcode, "INST") == 0 && events[0].off == 6);
    done(pm, &st);
    pb p = {0};
    pb_proto(&p, 4);
    pb_str(&p, "po");
    pb_op(&p, 0x94);
    pb_op(&p, '0');
    pb_str(&p, "six");
    pb_op(&p, 0x94);
    pb_op(&p, '0');
    /* "posix" assembled from memo: module = "posix" via SHORT_BINUNICODE here */
    pb_str(&p, "posix");
    pb_str(&p, "system");
    pb_op(&p, 0x93);
    pb_stop(&p);
    CHECK(run(&pm, p.b, p.n, &st, NULL) != NULL);
    CHECK(n_events == 1 && strcmp(events[0].name, "posix.system") == 0 &&
          strcmp(events[0].opcode, "STACK_GLOBAL") == 0 && events[0].cls == PK_DANGEROUS);
    done(pm, &st);
    pb_free(&p);
    const uint8_t ext[] = {0x80, 2, 0x82, 7, 0x83, 1, 2, 0x84, 1, 0, 0, 0, 0x87, '.'};
    CHECK(run(&pm, ext, sizeof(ext), &st, NULL) != NULL);
    CHECK(n_events == 3 && strcmp(events[0].opcode, "EXT1") == 0 &&
          strcmp(events[1].name, "copyreg._extension_registry.513") == 0 &&
          events[2].cls == PK_DANGEROUS);
    done(pm, &st);
    /* BUILD on a global itself (monkey-patching a module) is dangerous */
    CHECK(run_text(&pm, "ccollections\nOrderedDict\n}b.", &st) != NULL);
    CHECK(n_events == 2 && events[0].cls == PK_SAFE && strcmp(events[1].opcode, "BUILD") == 0 &&
          events[1].cls == PK_DANGEROUS);
    done(pm, &st);
    /* names found before a broken opcode are still reported */
    CHECK(run_text(&pm, "cbuiltins\neval\n\xff", &st) == NULL);
    CHECK(n_events == 1 && events[0].cls == PK_DANGEROUS);
    done(pm, &st);
}

static int classify(const char *mod, const char *name)
{
    pk_global g = {.module = mod, .name = name};
    pk_classify(&g);
    return (int)g.cls;
}

static void test_classify(void)
{
    static const struct { const char *mod, *name; int cls; } cases[] = {
        {"torch._utils", "_rebuild_tensor_v2", PK_SAFE},
        {"torch", "BFloat16Storage", PK_SAFE},
        {"torch", "bfloat16", PK_SAFE},
        {"collections", "OrderedDict", PK_SAFE},
        {"__builtin__", "set", PK_SAFE},
        {"numpy.core.multiarray", "_reconstruct", PK_SAFE},
        {"_codecs", "encode", PK_SAFE},
        {"os", "system", PK_DANGEROUS},
        {"nt", "system", PK_DANGEROUS},
        {"__builtin__", "eval", PK_DANGEROUS},
        {"builtins", "getattr", PK_DANGEROUS},
        {"commands", "getoutput", PK_DANGEROUS},
        {"subprocess", "run", PK_DANGEROUS},
        {"runpy", "_run_code", PK_DANGEROUS},
        {"numpy.testing._private.utils", "runstring", PK_DANGEROUS},
        {"torch.serialization", "load", PK_DANGEROUS},
        {"torch._utils", "os.system", PK_DANGEROUS},   /* attribute chain */
        {"__main__", "os.system", PK_DANGEROUS},
        {"collections", "os", PK_DANGEROUS},
        {"torch.os", "system", PK_DANGEROUS},
        {"torch._utils", "_rebuild_tensor_v2.__globals__", PK_DANGEROUS},
        {"functools", "partial", PK_DANGEROUS},
        {"operator", "attrgetter", PK_DANGEROUS},
        {"copyreg._extension_registry", "7", PK_DANGEROUS},
        {"__main__", "TinyNet", PK_UNKNOWN},
        {"torch.nn.modules.linear", "Linear", PK_UNKNOWN},
        {"copyreg", "_reconstructor", PK_SAFE},
        {"copy_reg", "_reconstructor", PK_SAFE},
        {"pathlib", "PosixPath", PK_SAFE},
        {"pathlib", "PureWindowsPath", PK_SAFE},
        {"argparse", "Namespace", PK_SAFE},
        {"collections", "defaultdict", PK_SAFE},
        {"collections", "Counter", PK_SAFE},
        {"__builtin__", "xrange", PK_SAFE},
        {"__builtin__", "Ellipsis", PK_SAFE},
        {"__builtin__", "NotImplemented", PK_SAFE},
        {"numpy.core.numeric", "_frombuffer", PK_SAFE},
        {"torch.serialization", "_get_layout", PK_SAFE},
        {"torch", "serialization._get_layout", PK_SAFE},
        {"__builtin__", "reduce", PK_DANGEROUS},   /* fix_imports: functools.reduce */
        {"torch.storage", "_load_from_bytes", PK_DANGEROUS},
        {"torch", "storage._load_from_bytes", PK_DANGEROUS}, /* protocol-4 dotted names */
        {"torch", "hub.load", PK_DANGEROUS},
        {"torch", "serialization.load", PK_DANGEROUS},
        {"torch", "utils.cpp_extension.load_inline", PK_DANGEROUS},
        {"torch.utils", "collect_env.run", PK_DANGEROUS},
        {"torch.utils.collect_env", "run", PK_DANGEROUS},
        {"uuid", "_get_command_stdout", PK_DANGEROUS},
        {"tarfile", "TarFile.extractall", PK_DANGEROUS},
        {"_osx_support", "_read_output", PK_DANGEROUS},
        {"torch", "nn.Linear", PK_UNKNOWN},
        {"collections", "OrderedDict.fromkeys", PK_UNKNOWN},
        {"", "x", PK_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECKF(classify(cases[i].mod, cases[i].name) == cases[i].cls, "%s.%s: class %d, want %d",
               cases[i].mod, cases[i].name, classify(cases[i].mod, cases[i].name), cases[i].cls);
    CHECK(pk_torch_dtype("torch.float8_e4m3fn") == MF_F8_E4M3);
    CHECK(pk_numpy_dtype("<f4") == MF_F32 && pk_numpy_dtype("|b1") == MF_BOOL &&
          pk_numpy_dtype("O") == MF_DTYPE_INVALID);
}

/* ------------------------------------------------------- allowlisted */

static void test_calls(void)
{
    pk_machine *pm;
    mf_status st;
    pk_obj *v = run_text(&pm, "ccollections\nOrderedDict\n(((S'a'\nI1\nt(S'b'\nI2\ntltR.", &st);
    CHECK(v && v->kind == PK_DICT && v->u.c.n == 2 && pk_dict_get(v, "b") && is_int(pk_dict_get(v, "b"), 2));
    done(pm, &st);
    v = run_text(&pm, "c__builtin__\nset\n((I1\nI2\nI2\nltR.", &st);
    CHECK(v && v->kind == PK_SET && v->u.c.n == 2);
    done(pm, &st);
    v = run_text(&pm, "c_codecs\nencode\n(V\\u00ff\\u0001\nS'latin1'\ntR.", &st);
    CHECK(v && v->kind == PK_BYTES && v->u.s.n == 2 && (uint8_t)v->u.s.p[0] == 0xff);
    done(pm, &st);
    v = run_text(&pm, "ctorch\nSize\n((I2\nI3\nttR.", &st);
    CHECK(v && v->kind == PK_TUPLE && v->u.c.n == 2);
    done(pm, &st);
    v = run_text(&pm, "ctorch\ndevice\n(S'cuda'\nI1\ntR.", &st);
    CHECK(is_text(v, PK_STR, "cuda:1"));
    done(pm, &st);
    /* a tensor from a storage nobody resolved (no persistent_load) */
    pb p = {0};
    uint32_t size[2] = {2, 3}, stride[2] = {3, 1};
    pb_proto(&p, 2);
    pb_tensor_v2(&p, "0", 6, 0, size, stride, 2);
    pb_stop(&p);
    v = run(&pm, p.b, p.n, &st, NULL);
    CHECK(v && v->kind == PK_TENSOR && v->u.t.storage->kind == PK_OBJECT &&
          v->u.t.storage->u.o.persistent && v->u.t.size->u.c.n == 2);
    done(pm, &st);
    pb_free(&p);
    /* a call off the allowlist stays opaque and keeps its parts */
    v = run_text(&pm, "cfoo\nBar\n)R}(S'w'\nI1\nub.", &st);
    CHECK(v && v->kind == PK_OBJECT && v->u.o.state && v->u.o.state->kind == PK_DICT);
    done(pm, &st);
    /* _rebuild_parameter returns its tensor argument */
    v = run_text(&pm, "ctorch._utils\n_rebuild_parameter\n(I5\nI00\n}tR.", &st);
    CHECK(is_int(v, 5));
    done(pm, &st);
}

/* -------------------------------------------------------------- bombs */

/* CPU time: the machine is shared, wall time says little */
static double seconds(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static void test_bombs(void)
{
    pk_machine *pm;
    mf_status st;
    /* copy bomb: OrderedDict(memoized list of 5000 pairs) 100000 times */
    pb p = {0};
    pb_proto(&p, 2);
    pb_op(&p, ']');
    pb_op(&p, 'q');
    pb_op(&p, 1);
    pb_op(&p, '(');
    for (int i = 0; i < 5000; i++) {
        pb_int(&p, i);
        pb_int(&p, i);
        pb_op(&p, 0x86);
    }
    pb_op(&p, 'e');
    pb_op(&p, '(');
    for (int i = 0; i < 100000; i++) {
        pb_global(&p, "collections", "OrderedDict");
        pb_op(&p, 'h');
        pb_op(&p, 1);
        pb_op(&p, 0x85);
        pb_op(&p, 'R');
        pb_op(&p, '0');
    }
    pb_op(&p, 't');
    pb_stop(&p);
    double t0 = seconds();
    CHECK(run(&pm, p.b, p.n, &st, NULL) == NULL && strstr(st.msg, "expansion bomb"));
    CHECK(seconds() - t0 < 20);
    /* a limit of mfmt's, not CPython's: the scanner calls such a file unknown */
    CHECK(pm && pk_stopped_by_limit(pm));
    done(pm, &st);
    pb_free(&p);
    /* an error CPython makes too is not a limit */
    CHECK(run_text(&pm, "(I1\n\xff", &st) == NULL && pm && !pk_stopped_by_limit(pm));
    done(pm, &st);
    /* hash bomb: a dict key of 60 levels of shared tuples (2**60 leaves) */
    pb_proto(&p, 2);
    pb_op(&p, 'K');
    pb_op(&p, 1);
    for (int i = 0; i < 60; i++) {
        pb_op(&p, 0x94);
        pb_op(&p, 'h'); /* BINGET of what MEMOIZE just stored */
        pb_op(&p, (uint8_t)i);
        pb_op(&p, 0x86);
    }
    pb_op(&p, '}');
    pb_op(&p, 'h');
    pb_op(&p, 59);
    pb_op(&p, 'K');
    pb_op(&p, 1);
    pb_op(&p, 's');
    pb_stop(&p);
    t0 = seconds();
    run(&pm, p.b, p.n, &st, NULL); /* any outcome, but quickly */
    CHECK(seconds() - t0 < 20);
    done(pm, &st);
    pb_free(&p);
    /* deep nesting: 200000 lists inside each other, then used as a key */
    pb_proto(&p, 2);
    for (int i = 0; i < 200000; i++)
        pb_op(&p, '(');
    pb_op(&p, 'K');
    pb_op(&p, 1);
    for (int i = 0; i < 200000; i++)
        pb_op(&p, 't');
    pb_op(&p, 'q'); /* the nest as a dict key */
    pb_op(&p, 0);
    pb_op(&p, '}');
    pb_op(&p, 'h');
    pb_op(&p, 0);
    pb_op(&p, 'K');
    pb_op(&p, 1);
    pb_op(&p, 's');
    pb_op(&p, '0');
    pb_stop(&p);
    pk_obj *v = run(&pm, p.b, p.n, &st, NULL);
    CHECK(v && v->kind == PK_TUPLE);
    done(pm, &st);
    pb_free(&p);
}

int main(void)
{
    test_numbers();
    test_strings();
    test_containers();
    test_memo_stack();
    test_errors();
    test_names();
    test_classify();
    test_calls();
    test_bombs();
    return tl_report("pickle");
}
