/* fuzz_tf.c - libFuzzer harness for the TensorFlow readers: the input as a
 * frozen GraphDef, and as the variables.index of a SavedModel directory
 * (whose saved_model.pb is the input too, and whose data shard is 4 KiB of
 * zeros), so the LevelDB table and BundleEntryProto parsers see it. */
#include "fuzz_reader.h"
#include "formats/tf/tf.h"

#include <sys/stat.h>

static void findings(mf_model *m)
{
    mf_tf_finding *f;
    size_t n;
    mf_status st;
    mf_status_init(&st);
    if (mf_tf_find_dangerous_ops(m, &f, &n, &st) == 0)
        free(f);
    mf_status_clear(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_scratch_dir();
    char pb[400], vars[400], index[448], shard[480];
    snprintf(pb, sizeof(pb), "%s/saved_model.pb", dir);
    snprintf(vars, sizeof(vars), "%s/variables", dir);
    snprintf(index, sizeof(index), "%s/variables.index", vars);
    snprintf(shard, sizeof(shard), "%s/variables.data-00000-of-00001", vars);
    static uint8_t zeros[4096];
    fuzz_open_bytes(data, size, ""); /* through detection, as mfmt opens it */
    mkdir(vars, 0700);
    if (fuzz_write_named(pb, data, size) == 0) {
        fuzz_read(pb, MF_FMT_TF_GRAPHDEF, findings);
        if (fuzz_write_named(index, data, size) == 0 && fuzz_write_named(shard, zeros, sizeof(zeros)) == 0)
            fuzz_read(dir, MF_FMT_TF_SAVEDMODEL, findings);
    }
    unlink(index);
    unlink(shard);
    unlink(pb);
    rmdir(vars); /* the scratch directory holds nothing of ours between runs */
    return 0;
}
