/* scan_joblib.c - joblib's files, as joblib.load reads them.
 *
 * NumpyPickler.save writes, for each array, a NumpyArrayWrapper (subclass,
 * shape, order, dtype, allow_mmap and, since joblib 1.2,
 * numpy_array_alignment_bytes) then, after its BUILD, the array itself:
 * for an object dtype a pickle of it (read back with pickle.load), else
 * one padding-length byte, that many padding bytes (when
 * numpy_array_alignment_bytes is set) and the raw elements
 * (NumpyArrayWrapper.write_array / read_array). NumpyUnpickler.load_build
 * reads them right after the BUILD and the pickle goes on after them.
 * joblib.load first detects a compressor by the file's first bytes
 * (numpy_pickle_utils._detect_compressor) and unpickles what it
 * decompresses. */
#include "ops/scan_joblib.h"

#include <stdlib.h>
#include <zlib.h>

static bool is_wrapper(const pk_obj *inst)
{
    if (!inst || inst->kind != PK_OBJECT || !inst->u.o.callable ||
        inst->u.o.callable->kind != PK_GLOBAL)
        return false;
    const pk_global *g = &inst->u.o.callable->u.g;
    return strcmp(g->name, "NumpyArrayWrapper") == 0 &&
           (strcmp(g->module, "joblib.numpy_pickle") == 0 ||
            strcmp(g->module, "sklearn.externals.joblib.numpy_pickle") == 0);
}

/* Bytes of one element of a numpy descr ("<f4", "|b1", "<U5", "|S3",
 * "|V8"); 0 when mfmt does not know it. */
static uint64_t item_size(const char *descr)
{
    if (*descr && strchr("<>|=", *descr))
        descr++;
    char kind = descr[0];
    if ((kind == 'U' || kind == 'S' || kind == 'V' || kind == 'a') && descr[1]) {
        char *end;
        unsigned long long k = strtoull(descr + 1, &end, 10);
        if (*end || k > (1ull << 40))
            return 0;
        return kind == 'U' ? 4 * k : k;
    }
    mf_dtype dt = pk_numpy_dtype(descr);
    const mf_dtype_info *info = dt == MF_DTYPE_INVALID ? NULL : mf_dtype_info_of(dt);
    return info && info->block_elems == 1 ? info->block_bytes : 0;
}

int mf_joblib_after_build(const pk_obj *inst, const uint8_t *d, size_t at, size_t n,
                          uint64_t *skip, bool *nested, const char **why)
{
    *skip = 0;
    *nested = false;
    if (!is_wrapper(inst))
        return 0;
    const pk_obj *state = inst->u.o.state;
    const pk_obj *shape = state && state->kind == PK_DICT ? pk_dict_get(state, "shape") : NULL;
    const pk_obj *dtype = state && state->kind == PK_DICT ? pk_dict_get(state, "dtype") : NULL;
    if (!shape || shape->kind != PK_TUPLE || !dtype || dtype->kind != PK_NPDTYPE ||
        !dtype->u.nt.descr) {
        *why = "a joblib NumpyArrayWrapper without a shape tuple and a numpy dtype: "
               "where joblib reads its array cannot be told";
        return -1;
    }
    if (strchr(dtype->u.nt.descr, 'O')) { /* read_array: pickle.load(file_handle) */
        *nested = true;
        return 1;
    }
    uint64_t count = 1, size = item_size(dtype->u.nt.descr);
    if (!size) {
        *why = "a joblib array of a dtype mfmt does not size: where the pickle goes on "
               "cannot be told";
        return -1;
    }
    for (size_t i = 0; i < shape->u.c.n; i++) {
        int64_t dim;
        if (!pk_as_int(shape->u.c.v[i], &dim) || dim < 0 || mf_mul_ovf(count, (uint64_t)dim, &count)) {
            *why = "a joblib array whose shape is not a tuple of sizes";
            return -1;
        }
    }
    uint64_t bytes;
    if (mf_mul_ovf(count, size, &bytes)) {
        *why = "a joblib array larger than 2^64 bytes";
        return -1;
    }
    const pk_obj *align = pk_dict_get(state, "numpy_array_alignment_bytes");
    if (align && align->kind != PK_NONE) { /* one padding-length byte, then padding */
        if (at >= n) {
            *why = "a joblib array's padding byte is past the end";
            return -1;
        }
        bytes += 1 + (uint64_t)d[at];
    }
    *skip = bytes;
    return 1;
}

bool mf_pickle_opcode_byte(uint8_t c)
{
    static const char ascii[] = "(.0123FGIJKLMNPQRSTUVXabcdeghijlopqrstu})]BC";
    return (c >= 0x80 && c <= 0x98) || (c && strchr(ascii, c));
}

const char *mf_joblib_compressor(const uint8_t *b, uint64_t n)
{
    static const struct { const char *magic; size_t len; const char *name; } tab[] = {
        {"ZF", 2, "ZF"}, {"\x78", 1, "zlib"}, {"\x1f\x8b", 2, "gzip"}, {"BZh", 3, "bz2"},
        {"\xfd\x37\x7a\x58\x5a", 5, "xz"}, {"\x5d\x00", 2, "lzma"}, {"\x04\x22\x4d\x18", 4, "lz4"},
    };
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (n >= tab[i].len && memcmp(b, tab[i].magic, tab[i].len) == 0)
            return tab[i].name;
    return NULL;
}

int mf_joblib_inflate(const uint8_t *b, uint64_t n, uint64_t max, uint8_t **out, size_t *len,
                      bool *truncated)
{
    *out = NULL;
    *len = 0;
    *truncated = false;
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 32) != Z_OK) /* zlib or gzip header */
        return -1;
    size_t cap = 1 << 16, used = 0;
    uint8_t *buf = malloc(cap);
    int rc = Z_OK;
    z.next_in = (Bytef *)b;
    uint64_t left = n;
    while (buf && rc == Z_OK) {
        if (used == cap) {
            if (cap >= max) {
                *truncated = true;
                break;
            }
            size_t ncap = cap * 2 > max ? (size_t)max : cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb)
                break;
            buf = nb;
            cap = ncap;
        }
        if (z.avail_in == 0 && left) {
            z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
            left -= z.avail_in;
        }
        z.next_out = buf + used;
        z.avail_out = (uInt)(cap - used);
        rc = inflate(&z, Z_NO_FLUSH);
        used = cap - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && !left)
            break; /* truncated stream: what came out is what joblib reads first */
    }
    inflateEnd(&z);
    if (!buf || (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || used == 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = used;
    return 0;
}
