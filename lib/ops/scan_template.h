/* scan_template.h - the chat templates a file carries, judged as Jinja2
 * (ops/jinja.h): GGUF's tokenizer.chat_template and .NAME keys (any
 * format whose reader sets meta_templates), Hugging Face's
 * tokenizer_config.json / chat_template.json "chat_template" (a string or
 * a list of {name, template}) and *.jinja files (chat_template.jinja). */
#ifndef MF_SCAN_TEMPLATE_H
#define MF_SCAN_TEMPLATE_H
#include "core/core.h"

typedef struct mf_template_finding {
    int severity;        /* MF_CODE_* */
    const char *where;   /* the key or file part: "tokenizer.chat_template.tool_use" */
    int64_t offset;      /* byte in the template; -1 */
    int64_t file_offset; /* byte in the file when the template is stored as is; -1 */
    const char *message;
} mf_template_finding;
typedef void (*mf_template_fn)(void *ctx, const mf_template_finding *f);

/* Every template the file at path holds (by its name, or in the metadata
 * of the model its reader opens when the reader sets meta_templates),
 * judged; each finding to fn. b/n: the file's bytes. */
void mf_scan_templates(const char *path, const uint8_t *b, uint64_t n, mf_template_fn fn, void *ctx);

/* The worst MF_CODE_* of the templates in an open model's metadata
 * (MF_CODE_NOTE when it has none): mf_open's verdict for data-only formats. */
int mf_model_templates_verdict(const mf_model *m);

#endif
