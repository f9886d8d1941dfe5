/* cmd_detect.c - mfmt detect PATH...: the format of each path, from its bytes. */
#include "cli.h"

static int run_detect(const cli_args *a)
{
    bool json = cli_has(a, "--json");
    if (a->n_pos == 0)
        return cli_usage_error("detect", "no path given");
    int rc = EXIT_FINE;
    json_t *all = json ? json_array() : NULL;
    for (int i = 0; i < a->n_pos; i++) {
        mf_status st;
        mf_status_init(&st);
        mf_detection d;
        if (mf_detect(a->pos[i], &d, &st)) {
            int e = cli_report(&st);
            rc = e > rc ? e : rc;
        } else if (json) {
            json_array_append_new(all, json_pack("{s:s, s:s, s:s}", "path", a->pos[i], "format",
                                                 mf_format_name(d.format), "detail", d.detail));
        } else {
            printf("%s: %s (%s)\n", a->pos[i], mf_format_name(d.format), d.detail);
        }
        mf_status_clear(&st);
    }
    if (json)
        cli_print_json(all);
    return rc;
}

static const cli_opt opts[] = {
    {"--json", NULL, NULL, "one JSON array: path, format, detail"},
    {0},
};

const cli_cmd cli_cmd_detect = {"detect", run_detect, "PATH...", "format of each path, from its bytes",
                                opts, NULL};
