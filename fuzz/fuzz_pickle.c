/* fuzz_pickle.c - libFuzzer harness for the restricted pickle interpreter:
 * the input is run as a pickle in memory (every name and call reported),
 * its object tree walked into tensors and metadata as the readers do, then
 * scanned as a file (legacy streams, pickles after STOP, npy/zip/tar
 * dispatch), and opened as a .pkl through the readers with every tensor
 * hashed. */
#include "fuzz_common.h"

#include "core/core.h"
#include "formats/pickle/pytorch.h"
#include "ops/scan.h"

static void on_global(void *ctx, const pk_global *g, const char *opcode, uint64_t off)
{
    size_t *n = ctx;
    *n += strlen(g->module) + strlen(g->name) + strlen(opcode) + (size_t)off +
          (g->reason ? strlen(g->reason) : 0);
}

static void on_call(void *ctx, const pk_global *g, const pk_obj *args, uint64_t off)
{
    size_t *n = ctx;
    *n += (size_t)(args ? args->kind : 0) + (size_t)off + strlen(g->name);
}

static void run_in_memory(const uint8_t *data, size_t size)
{
    volatile size_t sink = 0;
    size_t acc = 0;
    pk_opts o = {.file = "fuzz.pkl", .on_global = on_global, .on_call = on_call, .ctx = &acc};
    pk_machine *pm = pk_new(&o);
    if (!pm)
        return;
    mf_status st;
    mf_status_init(&st);
    pk_obj *root = NULL;
    size_t used = 0;
    uint64_t ops = 0;
    if (pk_load(pm, data, size, &root, &used, &ops, &st) == 0) {
        mf_model *m = mf_model_new(MF_FMT_PICKLE, "fuzz.pkl");
        if (m) {
            pt_tree_opts to = {.file = "fuzz.pkl", .pickle_base = data, .pickle_size = size,
                               .objects = pk_objects(pm)};
            mf_status ts;
            mf_status_init(&ts);
            pt_tree_collect(m, root, &to, &ts);
            for (size_t i = 0; i < m->n_meta; i++)
                sink += strlen(m->meta[i].key) + (size_t)m->meta[i].v.type;
            for (size_t i = 0; i < m->n_tensors; i++)
                sink += strlen(m->tensors[i].name) + (size_t)m->tensors[i].nbytes;
            mf_status_clear(&ts);
            mf_close(m);
        }
    }
    sink += strlen(st.msg) + used + (size_t)ops + acc;
    mf_status_clear(&st);
    pk_free(pm);
    (void)sink;
}

static void run_scan(const uint8_t *data, size_t size)
{
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    if (mf_scan_bytes("fuzz.pkl", data, size, &r, &st) == 0) {
        volatile size_t sink = 0;
        for (size_t i = 0; i < r->n_findings; i++)
            sink += strlen(r->findings[i].message) + strlen(r->findings[i].member);
        for (size_t i = 0; i < r->n_globals; i++)
            sink += strlen(r->globals[i].name);
        (void)sink;
        mf_scan_free(r);
    }
    mf_status_clear(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_in_memory(data, size);
    run_scan(data, size);
    fuzz_open_bytes(data, size, ".pkl");
    return 0;
}
