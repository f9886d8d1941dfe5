/* fuzz_jinja.c - libFuzzer harness for the chat-template judge
 * (lib/ops/jinja*.c). For input D (aborts on a broken promise):
 *  1. judging D ends (no crash, leak or hang) and returns the worst
 *     severity it reported;
 *  2. "{{ lipsum.__globals__ }}" + D is never safe: the dunder is reached
 *     before anything of D is read (a D jinja2 refuses makes the template
 *     unknown, never safe). */
#include "core/core.h"
#include "ops/jinja.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void worst_of(void *ctx, const mf_jinja_finding *f)
{
    int *w = ctx;
    if (f->severity > *w)
        *w = f->severity;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int w = MF_CODE_NOTE;
    int r = mf_jinja_judge((const char *)data, size, worst_of, &w);
    if (r != w) {
        fprintf(stderr, "mf_jinja_judge returned %d, its findings say %d\n", r, w);
        abort();
    }
    static const char prefix[] = "{{ lipsum.__globals__ }}";
    size_t n = sizeof(prefix) - 1 + size;
    char *b = malloc(n ? n : 1);
    if (!b)
        return 0;
    memcpy(b, prefix, sizeof(prefix) - 1);
    memcpy(b + sizeof(prefix) - 1, data, size);
    w = MF_CODE_NOTE;
    if (mf_jinja_judge(b, n, worst_of, &w) == MF_CODE_NOTE) {
        fprintf(stderr, "a template that reaches __globals__ first is called safe\n");
        abort();
    }
    free(b);
    return 0;
}
