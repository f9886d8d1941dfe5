/* args.c - the command line of every subcommand, parsed from its option
 * table: the same table prints --help and is what tests/check_cli.sh holds
 * the man page to. Conventions (POSIX utility syntax guideline 10, GNU
 * long options): "--name VALUE" or "--name=VALUE", "--" ends the options,
 * a lone "-" is an operand, anything else starting with '-' must be a known
 * option. */
#include "cli.h"

static const cli_opt help_opt = {"--help", "-h", NULL, "print this help and exit"};

/* Whether `word` is one of the space-separated spellings in `list`. */
static bool in_list(const char *list, const char *word, size_t n)
{
    while (list && *list) {
        const char *end = strchr(list, ' ');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len == n && strncmp(list, word, n) == 0)
            return true;
        list = end ? end + 1 : NULL;
    }
    return false;
}

static const cli_opt *find_opt(const cli_cmd *c, const char *word, size_t n)
{
    for (const cli_opt *o = c->opts; o && o->name; o++)
        if ((strlen(o->name) == n && strncmp(o->name, word, n) == 0) || in_list(o->alias, word, n))
            return o;
    if (in_list("--help -h", word, n))
        return &help_opt;
    return NULL;
}

int cli_parse(const cli_cmd *c, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof(*a));
    a->cmd = c;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (options_done || w[0] != '-' || w[1] == 0) {
            if (a->n_pos == CLI_MAX_ARGS)
                return cli_usage_error(c->name, "more than %d arguments", CLI_MAX_ARGS);
            a->pos[a->n_pos++] = w;
            continue;
        }
        if (strcmp(w, "--") == 0) {
            options_done = true;
            continue;
        }
        const char *eq = w[1] == '-' ? strchr(w, '=') : NULL;
        size_t n = eq ? (size_t)(eq - w) : strlen(w);
        const cli_opt *o = find_opt(c, w, n);
        if (!o)
            return cli_usage_error(c->name, "unknown option %.*s (a path that starts with '-' "
                                            "goes after --)", (int)n, w);
        if (o == &help_opt) {
            cli_print_help(stdout, c);
            return -1;
        }
        const char *val = NULL;
        if (o->arg) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_usage_error(c->name, "%s needs a value (%s)", o->name, o->arg);
        } else if (eq) {
            return cli_usage_error(c->name, "%s takes no value", o->name);
        }
        if (a->n_opts == CLI_MAX_ARGS)
            return cli_usage_error(c->name, "more than %d options", CLI_MAX_ARGS);
        a->opt[a->n_opts].name = o->name;
        a->opt[a->n_opts].val = val;
        a->n_opts++;
    }
    return 0;
}

bool cli_is(const cli_args *a, int i, const char *name)
{
    return strcmp(a->opt[i].name, name) == 0;
}

const char *cli_get(const cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->n_opts; i++)
        if (cli_is(a, i, name))
            v = a->opt[i].val ? a->opt[i].val : "";
    return v;
}

bool cli_has(const cli_args *a, const char *name)
{
    return cli_get(a, name) != NULL;
}

static void print_opt(FILE *f, const cli_opt *o)
{
    char spell[96];
    size_t k = (size_t)snprintf(spell, sizeof(spell), "%s", o->name);
    for (const char *p = o->alias; p && *p && k < sizeof(spell);) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        k += (size_t)snprintf(spell + k, sizeof(spell) - k, ", %.*s", (int)len, p);
        p = end ? end + 1 : NULL;
    }
    if (o->arg && k < sizeof(spell))
        snprintf(spell + k, sizeof(spell) - k, " %s", o->arg);
    if (strlen(spell) <= 28)
        fprintf(f, "  %-28s %s\n", spell, o->help);
    else
        fprintf(f, "  %s\n  %-28s %s\n", spell, "", o->help);
}

void cli_print_help(FILE *f, const cli_cmd *c)
{
    fprintf(f, "usage: mfmt %s [options]%s%s\n\n%s\n\noptions:\n", c->name, c->args[0] ? " " : "",
            c->args, c->help);
    for (const cli_opt *o = c->opts; o && o->name; o++)
        print_opt(f, o);
    print_opt(f, &help_opt);
    fprintf(f, "  %-28s %s\n", "--", "end of options: what follows is an argument");
    if (c->more)
        fprintf(f, "\n%s\n", c->more);
    /* lists made at run time from the library's tables, by command */
    static const struct {
        const char *cmd;
        void (*print)(FILE *f);
    } lists[] = {{"quantize", cli_quantize_print_types}};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        if (strcmp(c->name, lists[i].cmd) == 0) {
            fputc('\n', f);
            lists[i].print(f);
        }
}
