/* reader.h - struct mf_reader: a format's probes, open, stream and the
 * optional hooks of the operations, and their wrappers. */
#ifndef MF_CORE_READER_H
#define MF_CORE_READER_H

#include "core/model.h"

/* ------------------------------------------------------------- readers */
/* A reader is the whole of a format: its name, how its bytes are recognised,
 * how it is opened and streamed, and the optional hooks through which the
 * operations above (lib/ops) learn what only the format knows. Nothing
 * above lib/formats names a format: it asks these hooks (through the
 * mf_model_* wrappers below, which also follow a directory's children). */
typedef struct mf_probe mf_probe; /* formats/formats.h */

enum { MF_PROBE_NO = 0, MF_PROBE_WEAK = 1, MF_PROBE_YES = 2 };

struct mf_rewrite;

/* What a loader would run besides unpickling, for scan's find_code hook. */
enum { MF_CODE_NOTE = 0, MF_CODE_UNKNOWN = 1, MF_CODE_DANGEROUS = 2 }; /* = mf_verdict */
typedef struct mf_code_finding {
    int severity;        /* MF_CODE_*: how bad loading it is */
    const char *opcode;  /* the op that runs it ("PyFunc"), or NULL */
    const char *message; /* what and why (valid during the call) */
} mf_code_finding;
typedef void (*mf_code_fn)(void *ctx, const mf_code_finding *f);

/* What a loader does with bytes it takes for its format, for scan's
 * pickle_payload hook: a finding to report, then where pickles run. */
enum {
    MF_PAYLOAD_NONE = 0,     /* nothing unpickled */
    MF_PAYLOAD_PICKLE = 1,   /* the loader unpickles from `at` */
    MF_PAYLOAD_POLYGLOT = 2, /* it does not, but another reader might: scanned quietly */
};
typedef struct mf_payload {
    int severity;      /* MF_CODE_* of the finding */
    char message[1024]; /* "": no finding */
    int run;           /* MF_PAYLOAD_* */
    uint64_t at;
} mf_payload;

/* scan's side of a member that a loader reads as pickles with raw parts
 * between them (the reader's walk_tar_member hook; torch's legacy tars). */
struct pk_obj;
struct pk_machine;
typedef struct mf_pickle_walk {
    void *ctx;
    /* Runs the pickle at byte `at` of the member on the scanner's machine
     * (every global it names is judged): 0 with *value (valid until the
     * next run) and *end after it; -1 with *why (the rule it breaks) and
     * *end where it stopped. */
    int (*run)(void *ctx, uint64_t at, const struct pk_obj **value, uint64_t *end,
               const char **why);
    /* A finding (MF_CODE_* severity) at byte `at` of the member. */
    void (*finding)(void *ctx, int severity, uint64_t at, const char *msg);
    /* The loader reads no further: what follows `at` is scanned quietly. */
    void (*rest)(void *ctx, uint64_t at);
} mf_pickle_walk;

/* A byte range of a file that a loader reads as a file of its own
 * (mf_scan_hooks.slices_named). */
typedef void (*mf_slice_fn)(void *ctx, const char *file, uint64_t off, uint64_t len);

/* len bytes of the file at path from off (mf_reader.file_runs). */
typedef struct mf_file_run {
    const char *path;
    uint64_t off, len;
    uint64_t dev, ino; /* the file the reader mapped (mf_file): a copy reopens it by path */
} mf_file_run;
/* The hooks only scan asks (lib/ops/scan.c): what a format's loader runs or
 * unpickles besides what the reader opens. A reader without any leaves
 * mf_reader.scan NULL. */
typedef struct mf_scan_hooks {
    /* Its loader never unpickles (h5py, TensorFlow's protobuf readers):
     * bytes its probe claims hold no pickle. (A data_only format need not
     * say.) Bytes that also unpickle from byte 0 are still scanned. */
    bool never_unpickles;
    /* The code loading the model runs besides pickles (Keras Lambda
     * layers, TensorFlow ops that run code or touch files), each handed to
     * fn; -1 with st (saying what could not be read) when the part that
     * would hold it cannot be read. */
    int (*find_code)(const mf_model *m, mf_code_fn fn, void *ctx, mf_status *st);
    /* When the file cannot be opened to ask find_code: may its own loader
     * still read code out of these bytes? */
    bool (*may_hold_code)(const uint8_t *b, uint64_t n);
    /* Over any bytes (archive members too): 0 when the loader would not
     * take them for this format (its own test: np.load's magic); else 1
     * with *out saying what it does with them (np.load of an object array
     * unpickles its data); -1 when out of memory (the scan fails). */
    int (*pickle_payload)(const uint8_t *b, uint64_t n, const char *file, mf_payload *out);
    /* Of a file by its place: code that loading the directory around it
     * runs (transformers' auto_map remote code), each finding to fn. */
    void (*code_around)(const char *path, mf_code_fn fn, void *ctx);
    /* Of a file by its place and bytes: byte ranges of files that loading
     * the directory around it hands to a loader as files of their own
     * (torch.distributed.checkpoint's .metadata places each item at
     * [offset, offset + length) of a file it names, and torch.load reads
     * that slice alone: an archive inside another's bytes), each to fn
     * with the file as the loader joins it. 0 when done (none, or all
     * handed); -1 when the file says there are some but mfmt cannot read
     * which (the scan is then unknown). */
    int (*slices_named)(const char *path, const uint8_t *b, uint64_t n, mf_slice_fn fn,
                        void *ctx);
    /* When a buffer's first pickle is `first`: does this format's loader
     * read the buffer as a stream that starts with it (torch's legacy
     * magic number)? 0: no; 1: its pickles were run on pm (the scanner
     * judges every global) and *end is where the loader stops reading; -1
     * with st when the stream breaks a rule. */
    int (*pickle_stream)(const struct pk_obj *first, struct pk_machine *pm, const uint8_t *b,
                         uint64_t n, const char *file, uint64_t *end, mf_status *st);
    /* Of a tar archive, for a format whose loader reads tars (torch.load's
     * legacy checkpoints): tar_loader names the loader ("torch.load"),
     * tar_members the members it opens by name (NULL-ended; each the last
     * of its name, links followed); walk_tar_member walks one of them as
     * the loader reads it, through w, and returns 1, or 0 when the loader
     * reads that member as a plain pickle. */
    const char *tar_loader;
    const char *const *tar_members;
    int (*walk_tar_member)(const char *name, const uint8_t *b, uint64_t n,
                           const mf_pickle_walk *w);
} mf_scan_hooks;

/* The hooks of a format whose metadata is edited in place (lib/ops/edit.c;
 * GGUF, safetensors). Each is optional; a reader without any leaves
 * mf_reader.edit NULL. */
typedef struct mf_edit_hooks {
    /* Formats with a metadata header before raw tensor data: writes rw->out
     * as m's first file with metadata rw->meta and tensors renamed, tensor
     * bytes copied unchanged; checks the format's rules (unless
     * MF_EDIT_FORCE) before writing anything. */
    int (*rewrite)(const mf_model *m, const struct mf_rewrite *rw, mf_status *st);
    /* The type a metadata key must have (a new key set without a TYPE:
     * takes it); MF_V_NULL when the format does not say. */
    mf_vtype (*key_type)(const mf_model *m, const char *key);
    /* -1 with st when metadata value kv breaks the type rule the format's
     * main loader puts on its key (GGUF: what llama.cpp reads a key as, the
     * tokenizer arrays' element types): the rule rewrite enforces, which
     * the converter's llama.cpp load rules (ops/hfconv/llama_load.c) also
     * ask of every key. */
    int (*check_key)(const mf_model *m, const mf_kv *kv, mf_status *st);
} mf_edit_hooks;

typedef struct mf_reader {
    mf_format format;
    const char *name; /* mf_format_name: "safetensors", "pytorch-zip", ... */
    /* The format holds only numbers and names: no loader of it runs code
     * (the scan verdict on open is then not worked out). */
    bool data_only;
    /* Its metadata may carry chat templates (tokenizer.chat_template and
     * tokenizer.chat_template.NAME: GGUF), which Python consumers render
     * with Jinja2: scan and mf_open's verdict judge them (ops/scan_template.c)
     * even when the format is data_only. */
    bool meta_templates;
    /* Endings such as ".pt" (NULL-ended): when the bytes match no probe,
     * the reader a file's name suggests explains best what is wrong. */
    const char *const *extensions;

    /* Detection (formats/detect.c asks every reader, in registry order;
     * each returns MF_PROBE_YES, MF_PROBE_WEAK (taken only when no reader
     * says YES) or MF_PROBE_NO, and fills the detection through
     * mf_probe_found). Each is optional. */
    int (*probe)(mf_probe *p);     /* a file's bytes (not a zip archive) */
    int (*probe_zip)(mf_probe *p); /* a zip archive: p->zip is its directory */
    int (*probe_dir)(mf_probe *p); /* a directory */

    /* Fills m (files, meta, tensors). flags: MF_OPEN_*. */
    int (*open)(mf_model *m, const char *path, unsigned flags, mf_status *st);
    /* Optional: canonical bytes of a tensor that is not plainly mapped. */
    int (*stream)(const mf_model *m, const mf_tensor *t, mf_sink_fn sink,
                  void *ctx, mf_status *st);
    /* Optional: frees m->priv. */
    void (*close)(mf_model *m);

    /* ---- optional hooks for the operations (see the wrappers below) */
    /* The state-dict unwrap rule: is the dotted `path` a mapping of the
     * file's object tree that holds tensors (a checkpoint's "state_dict")? */
    bool (*is_mapping)(const mf_model *m, const char *path);
    /* Packed tensors (MLX-style weight + scales + biases): a model whose
     * table is the logical one, dequantized to `out` (MF_DTYPE_INVALID:
     * the format's own float type). *view = NULL when m has none. */
    int (*logical_view)(const mf_model *m, mf_dtype out, mf_model **view,
                        mf_status *st);
    /* The computation graph as text (inspect --graph). */
    int (*print_graph)(const mf_model *m, FILE *out, mf_status *st);
    /* Optional groups: what only scan asks, what only edit asks. */
    const mf_scan_hooks *scan;
    const mf_edit_hooks *edit;
    /* Optional: a tensor the reader streams whose canonical bytes are runs
     * of its files laid end to end (a ZeRO flat partition's slices): 0
     * with *runs (malloc'd, *n of them), so a writer can copy them in the
     * kernel; 1 when it is not so (then stream it). */
    int (*file_runs)(const mf_model *m, const mf_tensor *t, mf_file_run **runs, size_t *n,
                     mf_status *st);
} mf_reader;

/* What ops/edit.c asks of a reader's rewrite hook. */
typedef struct mf_rewrite {
    const char *out;             /* where to write (may be m's own file) */
    const mf_kv *meta;           /* the new metadata, in order */
    size_t n_meta;
    const char *const *rename_from, *const *rename_to;
    size_t n_rename;
    unsigned flags;              /* MF_EDIT_* */
    uint64_t *old_header_bytes, *new_header_bytes, *data_bytes; /* filled */
} mf_rewrite;

/* The hooks, for lib/ops: each follows a directory's children (tensor
 * owners) where the model's own reader has no answer. */
bool mf_model_is_mapping(const mf_model *m, const char *path);
/* *view = NULL (returns 0) when no tensor of m is packed. The view borrows
 * from m, which must stay open until mf_close(view). */
int mf_model_logical_view_as(const mf_model *m, mf_dtype out, mf_model **view,
                          mf_status *st);
/* t's bytes as runs of files (the reader's file_runs hook, asked of the
 * tensor's owner): 0 with *runs (free them), 1 when not so. */
int mf_model_file_runs(const mf_model *m, const mf_tensor *t, mf_file_run **runs, size_t *n,
                       mf_status *st);
/* Fails (MF_ERR_USAGE) for a model whose format has no graph. */
int mf_model_print_graph(const mf_model *m, FILE *out, mf_status *st);

#endif /* MF_CORE_READER_H */
