/* scan_joblib.h - joblib's pickles (joblib.dump / joblib.load,
 * joblib/numpy_pickle.py): arrays written raw into the pickle stream right
 * after the BUILD of their NumpyArrayWrapper, and the compressed files
 * joblib.load opens (zlib, gzip, bz2, xz, lzma, lz4 by their magic). */
#ifndef MF_SCAN_JOBLIB_H
#define MF_SCAN_JOBLIB_H
#include "core/pickle.h"

/* After BUILD of inst, at byte `at` of d[0..n): 0 when inst is no
 * NumpyArrayWrapper; 1 when it is: *skip bytes (the padding byte, the
 * padding and the array's bytes) are joblib's to read, or *nested when an
 * object array's pickle follows (pickle.load from `at`); -1 with *why when
 * the record cannot be read as joblib reads it. */
int mf_joblib_after_build(const pk_obj *inst, const uint8_t *d, size_t at, size_t n,
                          uint64_t *skip, bool *nested, const char **why);

/* Is byte c a pickle opcode (pickle.load reading raw bytes goes on)? */
bool mf_pickle_opcode_byte(uint8_t c);

/* The compressor joblib.load detects from the first bytes ("zlib",
 * "gzip", "bz2", "xz", "lzma", "lz4", "ZF": joblib < 0.10's zlib), or NULL. */
const char *mf_joblib_compressor(const uint8_t *b, uint64_t n);

/* Inflates a zlib or gzip stream (at most `max` bytes out): 0 with *out
 * (malloc'ed) and *len, -1 when it is not one. *truncated: max was hit. */
int mf_joblib_inflate(const uint8_t *b, uint64_t n, uint64_t max, uint8_t **out, size_t *len,
                      bool *truncated);
#endif
