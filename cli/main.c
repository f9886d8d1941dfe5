/* main.c - mfmt: one program, one subcommand per file in cli/. */
#include "cli.h"

#include <signal.h>
#include <unistd.h>

extern const cli_cmd cli_cmd_detect, cli_cmd_inspect, cli_cmd_validate, cli_cmd_hash;
extern const cli_cmd cli_cmd_split, cli_cmd_merge, cli_cmd_diff;
extern const cli_cmd cli_cmd_scan, cli_cmd_convert;
extern const cli_cmd cli_cmd_estimate, cli_cmd_plan;
extern const cli_cmd cli_cmd_quantize, cli_cmd_dequantize, cli_cmd_edit;
extern const cli_cmd cli_cmd_cache, cli_cmd_download, cli_cmd_report;

/* A fault on a remote file's unfetched page (a read that skipped
 * mf_source_need: a bug, doc/hub.md) ends with a message instead of a bare
 * crash; any other fault goes on to the default action. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si && mf_remote_owns(si->si_addr)) {
        static const char msg[] = "mfmt: a reader read bytes of a remote file that were not "
                                  "fetched (unsupported for this format over HTTP); nothing "
                                  "was read as zeros\n";
        if (write(2, msg, sizeof(msg) - 1) < 0) {
        }
        _exit(EXIT_USAGE);
    }
    signal(sig, SIG_DFL); /* returning re-runs the access: the default crash */
}

static void catch_remote_faults(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* A new subcommand adds one extern above and one line here. */
static const cli_cmd *const commands[] = {
    &cli_cmd_detect,
    &cli_cmd_inspect,
    &cli_cmd_validate,
    &cli_cmd_hash,
    &cli_cmd_split,
    &cli_cmd_merge,
    &cli_cmd_estimate,
    &cli_cmd_plan,
    &cli_cmd_diff,
    &cli_cmd_scan,
    &cli_cmd_convert,
    &cli_cmd_quantize,
    &cli_cmd_dequantize,
    &cli_cmd_edit,
    &cli_cmd_cache,
    &cli_cmd_report,
    &cli_cmd_download,
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "mfmt %s - model weight files: detect, inspect, validate, hash, convert\n\n"
               "usage:\n", MF_VERSION_STRING);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char syn[128];
        snprintf(syn, sizeof(syn), "%s [options] %s", commands[i]->name, commands[i]->args);
        if (strlen(syn) <= 44)
            fprintf(f, "  mfmt %-44s %s\n", syn, commands[i]->help);
        else /* long synopses: the help goes on its own indented line */
            fprintf(f, "  mfmt %s\n  %-49s %s\n", syn, "", commands[i]->help);
    }
    fprintf(f, "\n'mfmt COMMAND --help' (or 'mfmt help COMMAND') shows every option of a command;\n"
               "the man page mfmt(1) has them all.\n");
    fprintf(f, "\nExit status: 0 ok, 1 bad or unsafe input, 2 usage or I/O error (scan: 3 unknown).\n");
}

/* "help --options": every command's options, one "COMMAND SPELLING" a
 * line (each alias too), for tests/check_cli.sh. */
static void list_options(void)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        for (const cli_opt *o = commands[i]->opts; o && o->name; o++) {
            printf("%s %s\n", commands[i]->name, o->name);
            for (const char *p = o->alias; p && *p;) {
                const char *end = strchr(p, ' ');
                int len = end ? (int)(end - p) : (int)strlen(p);
                printf("%s %.*s\n", commands[i]->name, len, p);
                p = end ? end + 1 : NULL;
            }
        }
}

/* roff text: backslashes doubled, '-' as \- (a minus a man reader can
 * search for and copy). */
static void roff(const char *t)
{
    for (; *t; t++) {
        if (*t == '\\')
            fputs("\\e", stdout);
        else if (*t == '-')
            fputs("\\-", stdout);
        else
            putchar(*t);
    }
}

/* "help --man": the per-command option sections of doc/mfmt.1, made from
 * the same tables as --help (tests/check_cli.sh holds the page to them). */
static void print_man(void)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const cli_cmd *c = commands[i];
        printf(".SS \"");
        roff(c->name);
        printf(" [options] ");
        roff(c->args);
        printf("\"\n");
        roff(c->help);
        printf(".\n");
        for (const cli_opt *o = c->opts; o && o->name; o++) {
            printf(".TP\n.B ");
            roff(o->name);
            for (const char *p = o->alias; p && *p;) {
                const char *end = strchr(p, ' ');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                char one[64];
                snprintf(one, sizeof(one), "%.*s", (int)len, p);
                printf("\\fR, \\fB");
                roff(one);
                p = end ? end + 1 : NULL;
            }
            if (o->arg) {
                printf(" \\fI");
                roff(o->arg);
                printf("\\fR");
            }
            printf("\n");
            roff(o->help);
            printf("\n");
        }
        if (c->more) {
            printf(".PP\n");
            roff(c->more);
            printf("\n");
        }
    }
}

static const cli_cmd *find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* The commands that read standard input for a PATH of "-" (README); any
 * other says so rather than look for a file named "-". */
static bool stdin_refused(const cli_cmd *c, const cli_args *a)
{
    static const char *const readers[] = {"detect", "hash",  "inspect", "validate", "scan",
                                          "diff",   "convert", "quantize", "split"};
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
        if (strcmp(c->name, readers[i]) == 0)
            return false;
    for (int i = 0; i < a->n_pos; i++)
        if (strcmp(a->pos[i], "-") == 0) {
            cli_usage_error(c->name, "'-' (standard input) is not read by this command: give a path");
            return true;
        }
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
        if (argc > 2 && !strcmp(argv[2], "--options")) {
            list_options();
            return EXIT_FINE;
        }
        if (argc > 2 && !strcmp(argv[2], "--man")) {
            print_man();
            return EXIT_FINE;
        }
        const cli_cmd *c = argc > 2 ? find(argv[2]) : NULL;
        if (argc > 2 && !c) {
            fprintf(stderr, "mfmt: unknown command '%s'\n", argv[2]);
            return EXIT_USAGE;
        }
        if (c)
            cli_print_help(stdout, c);
        else
            usage(stdout);
        return EXIT_FINE;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("mfmt %s\n", MF_VERSION_STRING);
        return EXIT_FINE;
    }
    const cli_cmd *c = find(name);
    if (!c) {
        fprintf(stderr, "mfmt: unknown command '%s'\n\n", name);
        usage(stderr);
        return EXIT_USAGE;
    }
    static cli_args args; /* large: not on the stack */
    int rc = cli_parse(c, argc - 1, argv + 1, &args);
    if (rc)
        return rc < 0 ? EXIT_FINE : rc;
    cli_quiet = cli_has(&args, "--quiet");
    if (stdin_refused(c, &args))
        return EXIT_USAGE;
    if ((rc = cli_remote_setup(&args)) != 0)
        return rc;
    if (cli_hub_remote)
        catch_remote_faults();
    rc = cli_batch_run(c, &args);
    if (rc < 0)
        rc = c->run(&args);
    cli_remote_report();
    return rc;
}
