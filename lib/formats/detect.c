/* detect.c - the format of a path, from its bytes (the name never decides). */
#include "core/core.h"
#include "core/proto.h"
#include "core/zip.h"
#include "formats/pickle/pickle.h"

#include <jansson.h>

typedef struct probe {
    const char *path;
    const uint8_t *b;
    uint64_t size;
    mf_detection *out;
} probe;

static int found(probe *p, mf_format f, const char *fmt, ...) MF_PRINTF(3, 4);
static int found(probe *p, mf_format f, const char *fmt, ...)
{
    p->out->format = f;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->out->detail, sizeof(p->out->detail), fmt, ap);
    va_end(ap);
    return 1;
}

static int probe_gguf(probe *p)
{
    if (p->size < 8 || memcmp(p->b, "GGUF", 4) != 0)
        return 0;
    uint32_t le = mf_rd32le(p->b + 4), be = mf_rd32be(p->b + 4);
    if (le != 0 && le < 65536)
        return found(p, MF_FMT_GGUF, "GGUF v%u little-endian", le);
    if (be != 0 && be < 65536)
        return found(p, MF_FMT_GGUF, "GGUF v%u big-endian", be);
    return found(p, MF_FMT_GGUF, "GGUF, unknown version field %08x", le);
}

static int probe_ggml_legacy(probe *p)
{
    if (p->size < 4)
        return 0;
    switch (mf_rd32le(p->b)) {
    case 0x67676d6cu: return found(p, MF_FMT_GGML_LEGACY, "GGML (unversioned, obsolete)");
    case 0x67676d66u: return found(p, MF_FMT_GGML_LEGACY, "GGMF (obsolete)");
    case 0x67676a74u: return found(p, MF_FMT_GGML_LEGACY, "GGJT v%u (obsolete)",
                                   p->size >= 8 ? mf_rd32le(p->b + 4) : 0);
    }
    return 0;
}

static bool is_hdf5_sig(const uint8_t *b)
{
    return memcmp(b, "\x89HDF\r\n\x1a\n", 8) == 0;
}

/* HDF5 superblock: at 0, 512, 1024, 2048, ... (a user block may precede it). */
static int probe_hdf5(probe *p)
{
    for (uint64_t off = 0; off + 8 <= p->size; off = off ? off * 2 : 512) {
        if (is_hdf5_sig(p->b + off))
            return found(p, MF_FMT_HDF5, "HDF5, superblock at byte %llu",
                         (unsigned long long)off);
        if (off > (1ull << 40))
            break;
    }
    return 0;
}

static int probe_npy(probe *p)
{
    if (p->size >= 8 && memcmp(p->b, "\x93NUMPY", 6) == 0)
        return found(p, MF_FMT_NUMPY_NPY, "NumPy .npy format %u.%u", p->b[6], p->b[7]);
    return 0;
}

static int probe_tflite(probe *p)
{
    if (p->size >= 8 && memcmp(p->b + 4, "TFL3", 4) == 0)
        return found(p, MF_FMT_TFLITE, "TFLite flatbuffer (TFL3)");
    return 0;
}

static int probe_safetensors(probe *p)
{
    if (p->size < 10)
        return 0;
    uint64_t n = mf_rd64le(p->b);
    if (n == 0 || n > p->size - 8 || p->b[8] != '{')
        return 0;
    return found(p, MF_FMT_SAFETENSORS, "safetensors, %llu-byte header",
                 (unsigned long long)n);
}

/* The pickle that torch.save's legacy format starts with: protocol 2,
 * LONG1 of the magic number 0x1950a86a20f9469cfc6c. */
static const uint8_t torch_legacy_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                             0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

static int probe_pickle(probe *p)
{
    if (p->size < 2)
        return 0;
    if (p->size >= sizeof(torch_legacy_magic) &&
        memcmp(p->b, torch_legacy_magic, sizeof(torch_legacy_magic)) == 0)
        return found(p, MF_FMT_PYTORCH_PICKLE, "PyTorch legacy (pickle protocol 2 + magic number)");
    /* torch.load compares the magic number's value: any spelling works */
    if (pk_starts_torch_legacy(p->b, (size_t)p->size))
        return found(p, MF_FMT_PYTORCH_PICKLE, "PyTorch legacy (magic number spelled otherwise)");
    if (p->b[0] == 0x80 && p->b[1] >= 2 && p->b[1] <= 5)
        return found(p, MF_FMT_PICKLE, "pickle protocol %u", p->b[1]);
    /* protocol 0/1: a plausible first opcode and a STOP ('.') at the end */
    static const char first_ops[] = "(}]).cKJMNFGIVXU\x80q";
    if (strchr(first_ops, p->b[0]) && p->b[0] && p->b[p->size - 1] == '.')
        return found(p, MF_FMT_PICKLE, "pickle protocol 0/1");
    return 0;
}

static int probe_zip(probe *p)
{
    if (p->size < 4 || (memcmp(p->b, "PK\x03\x04", 4) != 0 && memcmp(p->b, "PK\x05\x06", 4) != 0))
        return 0;
    mf_arena *a = mf_arena_new();
    mf_status st;
    mf_status_init(&st);
    mf_zip z;
    if (!a || mf_zip_open(&z, p->b, p->size, p->path, a, &st)) {
        mf_status_clear(&st);
        mf_arena_free(a);
        return found(p, MF_FMT_ZIP, "zip archive (central directory unreadable)");
    }
    size_t npy = 0;
    for (size_t i = 0; i < z.n; i++) {
        size_t l = strlen(z.entries[i].name);
        npy += l >= 4 && strcmp(z.entries[i].name + l - 4, ".npy") == 0;
    }
    size_t n = z.n;
    if (mf_zip_find_suffix(&z, "/data.pkl") || mf_zip_find(&z, "data.pkl"))
        found(p, MF_FMT_PYTORCH_ZIP, "PyTorch zip archive (%zu members)", n);
    else if (mf_zip_find(&z, "config.json") && mf_zip_find(&z, "model.weights.h5"))
        found(p, MF_FMT_KERAS, "Keras 3 archive (%zu members)", n);
    else if (npy > 0 && npy == n)
        found(p, MF_FMT_NUMPY_NPZ, "NumPy .npz archive (%zu arrays)", n);
    else if (npy > 0)
        found(p, MF_FMT_NUMPY_NPZ, "NumPy .npz-like archive (%zu of %zu members are .npy)", npy, n);
    else
        found(p, MF_FMT_ZIP, "zip archive (%zu members)", n);
    mf_status_clear(&st);
    mf_arena_free(a);
    return 1;
}

/* A GraphDef's node (field 1) is a NodeDef: name = 1 and op = 2, both
 * strings, fields 1-7 only. (A SentencePiece model's field 1 is a piece
 * whose field 2 is a float score.) */
static bool looks_like_nodedef(const uint8_t *b, uint64_t n, const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_cursor c;
    mf_cur_init(&c, b, n, path, &st);
    mf_pb_field f;
    int r;
    bool name = false, op = false, other = false;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        name |= f.number == 1 && f.wire == 2;
        op |= f.number == 2 && f.wire == 2;
        other |= f.number > 7 || ((f.number == 1 || f.number == 2) && f.wire != 2);
    }
    mf_status_clear(&st);
    return r == 0 && name && op && !other;
}

/* Protobuf: the whole file must parse as top-level fields; the field set
 * tells ModelProto (graph = 7) from TensorProto (data_type = 2, varint),
 * SavedModel (meta_graphs = 2) and GraphDef (node = 1). */
static int probe_protobuf(probe *p)
{
    if (p->size < 2)
        return 0;
    mf_status st;
    mf_status_init(&st);
    mf_cursor c;
    mf_cur_init(&c, p->b, p->size, p->path, &st);
    uint64_t seen_len = 0, seen_var = 0; /* bit per field number < 64 */
    uint32_t nfields = 0;
    mf_pb_field f, first_node = {0};
    int r;
    while ((r = mf_pb_next(&c, &f)) == 1) {
        nfields++;
        if (f.number == 1 && f.wire == 2 && !first_node.data)
            first_node = f;
        if (f.number < 64)
            *(f.wire == 2 ? &seen_len : &seen_var) |= 1ull << f.number;
    }
    mf_status_clear(&st);
    if (r < 0 || nfields == 0)
        return 0;
#define LEN(n) (seen_len >> (n) & 1)
#define VAR(n) (seen_var >> (n) & 1)
    if (LEN(7) && (VAR(1) || LEN(8)))
        return found(p, MF_FMT_ONNX, "ONNX ModelProto");
    if (VAR(1) && LEN(2) && !(seen_len & ~(1ull << 2)) && !(seen_var & ~(1ull << 1)))
        return found(p, MF_FMT_TF_SAVEDMODEL, "TensorFlow SavedModel proto");
    if (VAR(2) && (LEN(9) || LEN(8) || LEN(4) || LEN(5) || LEN(6) || LEN(7) || LEN(10) ||
                   LEN(11) || LEN(1) || VAR(1) || LEN(13)))
        return found(p, MF_FMT_ONNX_TENSOR, "ONNX TensorProto");
    if (LEN(1) && (LEN(4) || LEN(2)) && !(seen_var & ~(1ull << 3)) &&
        looks_like_nodedef(first_node.data, first_node.len, p->path))
        return found(p, MF_FMT_TF_GRAPHDEF, "TensorFlow GraphDef");
    if (VAR(1) && (LEN(2) || LEN(8)))
        return found(p, MF_FMT_ONNX, "ONNX ModelProto (no graph)");
#undef LEN
#undef VAR
    return 0;
}

static void hex_head(probe *p)
{
    char *d = p->out->detail;
    size_t cap = sizeof(p->out->detail);
    int k = snprintf(d, cap, "%llu bytes; first bytes:", (unsigned long long)p->size);
    for (uint64_t i = 0; i < p->size && i < 16 && k > 0 && (size_t)k < cap; i++)
        k += snprintf(d + k, cap - (size_t)k, " %02x", p->b[i]);
}

static bool dir_has(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return mf_path_exists(path);
}

/* An MLX directory is an HF-style directory whose config.json carries
 * mlx's "quantization": {"group_size", "bits"}. */
static bool config_is_mlx(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/config.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j)
        return false;
    json_t *q = json_object_get(j, "quantization");
    bool mlx = json_is_object(q) && json_object_get(q, "group_size") &&
               json_object_get(q, "bits");
    json_decref(j);
    return mlx;
}

static int detect_dir(const char *path, mf_detection *out)
{
    probe p = {.path = path, .out = out};
    if (dir_has(path, "saved_model.pb") || dir_has(path, "saved_model.pbtxt"))
        return found(&p, MF_FMT_TF_SAVEDMODEL, "TensorFlow SavedModel directory"), 0;
    if (dir_has(path, "config.json")) {
        if (config_is_mlx(path))
            return found(&p, MF_FMT_MLX, "MLX model directory (quantized)"), 0;
        return found(&p, MF_FMT_HF_DIR, "Hugging Face model directory"), 0;
    }
    if (dir_has(path, "model.safetensors.index.json") || dir_has(path, "pytorch_model.bin.index.json") ||
        dir_has(path, "model.safetensors") || dir_has(path, "pytorch_model.bin"))
        return found(&p, MF_FMT_HF_DIR, "model directory without config.json"), 0;
    return found(&p, MF_FMT_UNKNOWN, "a directory with no model files mfmt knows"), 0;
}

/* A sharded-safetensors index file: JSON with "weight_map". */
static int probe_index_json(probe *p)
{
    if (p->size < 2 || p->b[0] != '{' || p->size > (64u << 20))
        return 0;
    json_t *j = json_loadb((const char *)p->b, (size_t)p->size, 0, NULL);
    if (!j)
        return 0;
    json_t *wm = json_object_get(j, "weight_map");
    int r = 0;
    if (json_is_object(wm)) {
        const char *k;
        json_t *v;
        bool bin = false;
        json_object_foreach(wm, k, v) {
            const char *s = json_string_value(v);
            size_t l = s ? strlen(s) : 0;
            bin = l >= 4 && strcmp(s + l - 4, ".bin") == 0;
            break;
        }
        r = found(p, bin ? MF_FMT_PYTORCH_ZIP : MF_FMT_SAFETENSORS,
                  "%s shard index (%zu tensors)", bin ? "PyTorch" : "safetensors",
                  json_object_size(wm));
    }
    json_decref(j);
    return r;
}

int mf_detect(const char *path, mf_detection *out, mf_status *st)
{
    MF_ST_GUARD(st);
    memset(out, 0, sizeof(*out));
    if (mf_is_dir(path))
        return detect_dir(path, out);
    mf_file f;
    if (mf_map_file(path, &f, st))
        return -1;
    probe p = {.path = path, .b = f.base, .size = f.size, .out = out};
    int (*const probes[])(probe *) = {
        probe_gguf, probe_ggml_legacy, probe_npy, probe_zip, probe_hdf5,
        probe_tflite, probe_safetensors, probe_pickle, probe_index_json,
        probe_protobuf,
    };
    bool hit = false;
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]) && !hit; i++)
        hit = probes[i](&p) == 1;
    if (!hit) {
        out->format = MF_FMT_UNKNOWN;
        hex_head(&p);
    }
    mf_unmap_file(&f);
    return 0;
}
