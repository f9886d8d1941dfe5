/* core.h - internal helpers shared by every layer of libmfmt (not public):
 * an umbrella over the pieces, so a file includes "core/core.h" or only the
 * piece it needs. base.h: errors, options, arithmetic, arena, vectors, sets;
 * cursor.h: bytes (cursor, endian loads, half floats, UTF-8); json_pos.h;
 * model.h: the model inside and how readers build it; atomic.h: output;
 * reader.h: struct mf_reader and its hooks. */
#ifndef MF_CORE_H
#define MF_CORE_H

#include "core/base.h"
#include "core/cursor.h"
#include "core/json_pos.h"
#include "core/model.h"
#include "core/atomic.h"
#include "core/reader.h"

#endif /* MF_CORE_H */
