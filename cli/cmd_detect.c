/* cmd_detect.c - mfmt detect PATH...: the format of each path, from its bytes. */
#include "cli.h"

static int run_detect(const cli_args *a)
{
    cli_json_mode mode;
    if (cli_json_mode_of(a, &mode))
        return EXIT_USAGE;
    if (a->n_pos == 0)
        return cli_usage_error("detect", "no path given");
    int rc = EXIT_FINE;
    json_t *all = mode == CLI_JSON && a->n_pos > 1 ? json_array() : NULL;
    for (int i = 0; i < a->n_pos; i++) {
        mf_status st;
        mf_status_init(&st);
        mf_detection d;
        const char *path = cli_input_path(a->pos[i], &st);
        if (!path || mf_detect(path, &d, &st)) {
            int e = cli_report(&st);
            rc = e > rc ? e : rc;
        } else if (mode != CLI_TEXT) {
            cli_json_emit(mode, all, json_pack("{s:s, s:s, s:s}", "path", a->pos[i], "format",
                                               mf_format_name(d.format), "detail", d.detail));
        } else if (!cli_quiet) {
            printf("%s: %s (%s)\n", a->pos[i], mf_format_name(d.format), d.detail);
        }
        mf_status_clear(&st);
    }
    if (all)
        cli_print_json(all);
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON object: path, format, detail; several paths: an array of them"},
    {"--jsonl", NULL, NULL, "one JSON object a line, one line per path"},
    CLI_OPT_QUIET("print nothing; the exit status says whether every path could be read"),
    CLI_OPTS_REMOTE,
    CLI_OPTS_BATCH,
    {0},
};

const cli_cmd cli_cmd_detect = {"detect", run_detect, "PATH...", "format of each path, from its bytes",
                                opts, "A PATH of - reads standard input (spooled to a temporary file)."};
