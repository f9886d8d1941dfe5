/* hf_cli.h - output of the Hugging Face directory operations, shared by
 * the subcommands that show them (validate, inspect, estimate, plan). */
#ifndef MF_HF_CLI_H
#define MF_HF_CLI_H
#include "cli.h"

/* The load report of an hf-dir model (prints nothing for other formats).
 * Returns the number of problems (missing + mismatched keys), or -1 when
 * the report could not be made (st filled). */
int cli_hf_load_report_text(FILE *f, const mf_model *m, const char *indent, mf_status *st);
/* The same as a JSON object; NULL for other formats. */
json_t *cli_hf_load_report_json(const mf_model *m, mf_status *st);
/* mfmt convert DIR OUT.gguf: a Hugging Face directory to GGUF as llama.cpp's
 * converter writes it (type: f32, f16, bf16, q8_0, auto; NULL: f16), with
 * a progress bar on a terminal. */
typedef struct cli_gguf_out {
    const char *model_name, *metadata; /* --model-name, --metadata FILE */
    bool vocab_only;                   /* --vocab-only */
    bool mmproj;                       /* --mmproj */
    bool mistral_format;               /* --mistral-format */
    uint64_t split_max_size, split_max_tensors; /* 0: one file */
    const char *arch_file;             /* --arch-file FAMILY.json */
} cli_gguf_out;
/* out NULL or a directory: the converter's default name in it (in the
 * model directory when NULL). layout: --layout (c392e50, 2026-02), NULL for
 * the default. g may be NULL (no converter flags). */
int cli_convert_dir_to_gguf(const char *in, const char *out, const char *type, const char *layout,
                            int threads, const cli_gguf_out *g);
/* mfmt convert of any other model (a training checkpoint above all) to a
 * Hugging Face directory or, through one, to GGUF; an MLX directory to GGUF
 * (convert_ckpt_cli.c, over mf_convert_model_to_hf_dir / _to_gguf). */
typedef struct cli_ckpt_opts {
    unsigned flags;           /* MF_OPEN_TRAIN_* */
    const char *config;       /* --config FILE */
    const char *tokenizer;    /* --tokenizer DIR */
    const char *dtype;        /* --dtype f32/f16/bf16 of the weights; NULL: as merged */
    uint64_t max_shard_size;  /* 0: 5GB */
    int threads;              /* --threads: copying the merge's partitions */
} cli_ckpt_opts;
/* The converter's options for --type, --layout, --threads: a progress bar
 * started in prog, notes printed, the path written into written (cap
 * bytes). -1 (the usage error printed) for a bad --layout. */
int cli_gguf_opts(mf_convert_gguf_opts *o, const char *type, const char *layout, int threads,
                  cli_progress *prog, char *written, size_t cap);
/* The converter's notes (mf_convert_gguf_opts.note): "mfmt: note: ..." on
 * stderr unless -q. */
void cli_convert_note(void *user, const char *msg);
int cli_convert_model_to_hf_dir(const char *in, const char *out, const cli_ckpt_opts *o);
int cli_convert_model_to_gguf(const char *in, const char *out, const char *type,
                              const char *layout, int threads, const cli_ckpt_opts *o);
/* --layout's value as MF_CONVERT_LAYOUT_* (NULL: the default); prints the
 * usage error and returns -1 for another. */
int cli_convert_layout(const char *layout, int *out);
#endif
