/* hf_spm.c - SentencePiece tokenizer.model files: the ModelProto of
 * google/sentencepiece src/sentencepiece_model.proto, read with the
 * bounds-checked protobuf reader. Only what tokenizer converters use:
 * pieces (piece = 1, score = 2, type = 3), trainer_spec (model_type = 3,
 * vocab_size = 4, byte_fallback = 35, unk/bos/eos/pad_id = 40..43) and
 * normalizer_spec (precompiled_charsmap = 2, add_dummy_prefix = 3,
 * remove_extra_whitespaces = 4). */
#include "core/proto.h"
#include "formats/hf/hf_int.h"

#include <stdlib.h>

const char *mf_spm_model_name(int t)
{
    switch (t) {
    case MF_SPM_UNIGRAM: return "Unigram";
    case MF_SPM_BPE: return "BPE";
    case MF_SPM_WORD: return "Word";
    case MF_SPM_CHAR: return "Char";
    default: return "unknown";
    }
}

static int read_piece(mf_cursor *c, mf_spm_piece *p, size_t index)
{
    p->type = MF_SPM_NORMAL;
    p->text = "";
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(c, &f)) == 1) {
        if (f.number == 1 && f.wire == 2) {
            if (f.len > UINT32_MAX)
                return mf_cur_fail(c, "piece %zu: text too long", index);
            if (mf_utf8_check(f.data, (size_t)f.len) >= 0)
                return mf_fail(c->st, MF_ERR_FORMAT, c->file, (int64_t)f.offset,
                               "piece %zu is not valid UTF-8", index);
            p->text = (const char *)f.data;
            p->len = (uint32_t)f.len;
        } else if (f.number == 2 && f.wire == 5) {
            uint32_t u = (uint32_t)f.varint;
            memcpy(&p->score, &u, 4);
        } else if (f.number == 3 && f.wire == 0) {
            if (f.varint < MF_SPM_NORMAL || f.varint > MF_SPM_BYTE)
                return mf_fail(c->st, MF_ERR_FORMAT, c->file, (int64_t)f.offset,
                               "piece %zu: type %llu is not a SentencePiece.Type", index,
                               (unsigned long long)f.varint);
            p->type = (int)f.varint;
        }
    }
    return r < 0 ? -1 : 0;
}

static int32_t as_int32(uint64_t v)
{
    return (int32_t)(uint32_t)v; /* negative int32 varints are sign-extended to 64 bits */
}

static int read_trainer(mf_cursor *c, mf_spm *s)
{
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(c, &f)) == 1) {
        if (f.wire != 0)
            continue;
        switch (f.number) {
        case 3: s->model_type = (int)(f.varint > 100 ? 0 : f.varint); break;
        case 35: s->byte_fallback = f.varint != 0; break;
        case 40: s->unk_id = as_int32(f.varint); break;
        case 41: s->bos_id = as_int32(f.varint); break;
        case 42: s->eos_id = as_int32(f.varint); break;
        case 43: s->pad_id = as_int32(f.varint); break;
        default: break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int read_normalizer(mf_cursor *c, mf_spm *s)
{
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(c, &f)) == 1) {
        if (f.wire == 2 && f.number == 2) {
            s->charsmap = f.data;
            s->charsmap_len = f.len;
        } else if (f.wire == 0 && f.number == 3)
            s->add_dummy_prefix = f.varint != 0;
        else if (f.wire == 0 && f.number == 4)
            s->remove_extra_whitespaces = f.varint != 0;
    }
    return r < 0 ? -1 : 0;
}

int mf_spm_parse(const uint8_t *buf, uint64_t n, const char *file, mf_spm *s, mf_status *st)
{
    memset(s, 0, sizeof(*s));
    s->model_type = MF_SPM_UNIGRAM;
    s->unk_id = 0;
    s->bos_id = 1;
    s->eos_id = 2;
    s->pad_id = -1;
    s->add_dummy_prefix = true;
    s->remove_extra_whitespaces = true;
    mf_cursor c;
    mf_cur_init(&c, buf, n, file, st);
    /* first pass: count the pieces (each costs at least 2 bytes of the file,
     * so the count is bounded by what the file holds) */
    size_t count = 0;
    mf_pb_field f;
    int r;
    while ((r = mf_pb_next(&c, &f)) == 1)
        count += f.number == 1 && f.wire == 2;
    if (r < 0)
        return -1;
    if (count == 0)
        return mf_fail(st, MF_ERR_FORMAT, file, 0, "no pieces: not a SentencePiece model");
    s->pieces = calloc(count, sizeof(*s->pieces));
    if (!s->pieces)
        return mf_oom(st, file);
    mf_cur_init(&c, buf, n, file, st);
    while ((r = mf_pb_next(&c, &f)) == 1) {
        if (f.wire != 2)
            continue;
        mf_cursor sub;
        mf_pb_sub(&c, &f, &sub);
        int rc = 0;
        if (f.number == 1) {
            rc = read_piece(&sub, &s->pieces[s->n], s->n);
            s->n++;
        } else if (f.number == 2)
            rc = read_trainer(&sub, s);
        else if (f.number == 3)
            rc = read_normalizer(&sub, s);
        if (rc) {
            mf_spm_free(s);
            return -1;
        }
    }
    if (r < 0) {
        mf_spm_free(s);
        return -1;
    }
    return 0;
}

void mf_spm_free(mf_spm *s)
{
    free(s->pieces);
    s->pieces = NULL;
    s->n = 0;
}
