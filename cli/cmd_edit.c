/* cmd_edit.c - mfmt edit IN [OUT] --set K=V --delete K --chat-template FILE
 * --chat-template-from tokenizer_config.json --rename-tensor OLD=NEW
 * [--dry-run] [--force] [--json]: a GGUF's metadata (or a safetensors
 * file's __metadata__) changed without decoding a tensor (mf_edit). */
#include "cli.h"

#include <stdlib.h>

typedef struct edit_args {
    const char *in, *out;
    mf_edit_op *ops;
    size_t n_ops;
    unsigned flags;
    bool json;
    char **owned; /* strings made while parsing, freed at the end */
    size_t n_owned;
} edit_args;

static char *keep(edit_args *a, char *s)
{
    char **p = s ? realloc(a->owned, (a->n_owned + 1) * sizeof(*p)) : NULL;
    if (!p) {
        free(s);
        return NULL;
    }
    a->owned = p;
    return a->owned[a->n_owned++] = s;
}

static int add_op(edit_args *a, mf_edit_kind k, const char *key, const char *text)
{
    mf_edit_op *p = realloc(a->ops, (a->n_ops + 1) * sizeof(*p));
    if (!p)
        return cli_usage_error("edit", "out of memory");
    a->ops = p;
    a->ops[a->n_ops++] = (mf_edit_op){k, key, text};
    return 0;
}

/* "KEY=VALUE" split at the first '=' (the value may hold more). */
static int add_pair(edit_args *a, mf_edit_kind k, const char *opt, const char *v)
{
    const char *eq = v ? strchr(v, '=') : NULL;
    if (!eq || eq == v)
        return cli_usage_error("edit", "%s takes KEY=VALUE", opt);
    char *key = keep(a, strndup(v, (size_t)(eq - v)));
    if (!key)
        return cli_usage_error("edit", "out of memory");
    return add_op(a, k, key, eq + 1);
}

static int parse_option(edit_args *a, const cli_args *args, int i)
{
    const char *v = args->opt[i].val;
    if (cli_is(args, i, "--set"))
        return add_pair(a, MF_EDIT_SET, "--set", v);
    if (cli_is(args, i, "--rename-tensor"))
        return add_pair(a, MF_EDIT_RENAME_TENSOR, "--rename-tensor", v);
    if (cli_is(args, i, "--delete"))
        return add_op(a, MF_EDIT_DELETE, v, NULL);
    if (cli_is(args, i, "--chat-template")) {
        char *text = keep(a, malloc(strlen(v) + 6));
        if (!text)
            return cli_usage_error("edit", "out of memory");
        sprintf(text, "file:%s", v);
        return add_op(a, MF_EDIT_SET, "tokenizer.chat_template", text);
    }
    if (cli_is(args, i, "--chat-template-from"))
        return add_op(a, MF_EDIT_CHAT_TEMPLATE_FROM, NULL, v);
    if (cli_is(args, i, "--dry-run"))
        a->flags |= MF_EDIT_DRY_RUN;
    else if (cli_is(args, i, "--force"))
        a->flags |= MF_EDIT_FORCE;
    else if (cli_is(args, i, "--json"))
        a->json = true;
    return 0;
}

static int parse(const cli_args *args, edit_args *a)
{
    for (int i = 0; i < args->n_opts; i++)
        if (parse_option(a, args, i))
            return -1;
    if (args->n_pos > 2)
        return cli_usage_error("edit", "too many arguments");
    a->in = args->n_pos > 0 ? args->pos[0] : NULL;
    a->out = args->n_pos > 1 ? args->pos[1] : NULL;
    if (!a->in)
        return cli_usage_error("edit", "needs IN.gguf (or IN.safetensors)");
    if (!a->n_ops)
        return cli_usage_error("edit", "nothing to do: give --set, --delete, --chat-template, "
                                       "--chat-template-from or --rename-tensor");
    return 0;
}

static const char *kind_word(mf_edit_kind k)
{
    return k == MF_EDIT_DELETE ? "delete" : k == MF_EDIT_RENAME_TENSOR ? "rename" : "set";
}

static void print_text(const edit_args *a, const mf_edit_report *r)
{
    for (size_t i = 0; i < r->n_changes; i++) {
        const mf_edit_change *c = &r->changes[i];
        if (c->kind == MF_EDIT_RENAME_TENSOR)
            printf("rename tensor %s -> %s\n", c->key, c->after);
        else if (c->kind == MF_EDIT_DELETE)
            printf("delete %s (was %s)\n", c->key, c->before);
        else if (c->before)
            printf("set    %s = %s (was %s)\n", c->key, c->after, c->before);
        else
            printf("add    %s = %s\n", c->key, c->after);
    }
    char data[32];
    cli_fmt_bytes(data, sizeof(data), r->data_bytes);
    printf("header: %llu -> %llu bytes; tensor data: %s %s\n",
           (unsigned long long)r->old_header_bytes, (unsigned long long)r->new_header_bytes, data,
           a->flags & MF_EDIT_DRY_RUN ? "would be copied unchanged" : "copied unchanged");
    if (a->flags & MF_EDIT_DRY_RUN)
        printf("dry run: nothing written\n");
    else
        printf("wrote %s\n", a->out ? a->out : a->in);
}

static void print_json(const edit_args *a, const mf_edit_report *r)
{
    json_t *j = json_object(), *ch = json_array();
    json_object_set_new(j, "path", json_string(a->in));
    json_object_set_new(j, "out", json_string(a->out ? a->out : a->in));
    json_object_set_new(j, "dry_run", json_boolean(a->flags & MF_EDIT_DRY_RUN));
    for (size_t i = 0; i < r->n_changes; i++) {
        const mf_edit_change *c = &r->changes[i];
        json_t *o = json_object();
        json_object_set_new(o, "op", json_string(kind_word(c->kind)));
        json_object_set_new(o, c->kind == MF_EDIT_RENAME_TENSOR ? "tensor" : "key",
                            json_string(c->key));
        json_object_set_new(o, "before", c->before ? json_string(c->before) : json_null());
        json_object_set_new(o, "after", c->after ? json_string(c->after) : json_null());
        json_array_append_new(ch, o);
    }
    json_object_set_new(j, "changes", ch);
    json_object_set_new(j, "old_header_bytes", json_integer((json_int_t)r->old_header_bytes));
    json_object_set_new(j, "new_header_bytes", json_integer((json_int_t)r->new_header_bytes));
    json_object_set_new(j, "data_bytes", json_integer((json_int_t)r->data_bytes));
    cli_print_json(j);
}

static void free_args(edit_args *a)
{
    for (size_t i = 0; i < a->n_owned; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->ops);
}

static int run_edit(const cli_args *args)
{
    edit_args a = {0};
    if (parse(args, &a)) {
        free_args(&a);
        return EXIT_USAGE;
    }
    mf_status st;
    mf_status_init(&st);
    mf_edit_opts o = {.struct_size = sizeof(o), .flags = a.flags};
    mf_edit_report r;
    int rc = mf_edit(a.in, a.out, a.ops, a.n_ops, &o, &r, &st);
    if (rc == 0) {
        if (a.json)
            print_json(&a, &r);
        else if (!cli_quiet || (a.flags & MF_EDIT_DRY_RUN))
            print_text(&a, &r);
        mf_edit_report_free(&r);
    } else {
        rc = cli_report(&st);
    }
    mf_status_clear(&st);
    free_args(&a);
    return rc;
}

static const cli_opt opts[] = {
    {"--set", NULL, "KEY=[TYPE:]VALUE", "set a key (TYPE as llama.cpp's --override-kv: int, "
                                        "float, bool, str; file:PATH reads the value)"},
    {"--delete", NULL, "KEY", "remove a key"},
    {"--chat-template", NULL, "FILE", "tokenizer.chat_template from a file"},
    {"--chat-template-from", NULL, "tokenizer_config.json", "the chat template of a Hugging Face tokenizer config"},
    {"--rename-tensor", NULL, "OLD=NEW", "rename a tensor"},
    {"--dry-run", NULL, NULL, "print the changes; write nothing"},
    {"--force", NULL, NULL, "make edits llama.cpp would reject"},
    {"--json", NULL, NULL, "one JSON object: path, out, dry_run, changes, header sizes"},
    CLI_OPT_QUIET("print nothing unless --dry-run or --json; errors still on stderr"),
    {0},
};

const cli_cmd cli_cmd_edit = {
    .name = "edit",
    .run = run_edit,
    .args = "IN [OUT]",
    .help = "change a GGUF's metadata (or safetensors __metadata__) without touching tensor data",
    .opts = opts,
    .more = "Without OUT, IN is replaced atomically.",
};
