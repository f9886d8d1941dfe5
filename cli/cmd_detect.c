/* cmd_detect.c - mfmt detect PATH...: the format of each path, from its bytes. */
#include "cli.h"

static int run_detect(int argc, char **argv)
{
    bool json = false;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--json") == 0) {
        json = true;
        first = 2;
    }
    if (first >= argc)
        return cli_usage_error("detect", "no path given");
    int rc = EXIT_FINE;
    json_t *all = json ? json_array() : NULL;
    for (int i = first; i < argc; i++) {
        mf_status st;
        mf_status_init(&st);
        mf_detection d;
        if (mf_detect(argv[i], &d, &st)) {
            int e = cli_report(&st);
            rc = e > rc ? e : rc;
        } else if (json) {
            json_array_append_new(all, json_pack("{s:s, s:s, s:s}", "path", argv[i], "format",
                                                 mf_format_name(d.format), "detail", d.detail));
        } else {
            printf("%s: %s (%s)\n", argv[i], mf_format_name(d.format), d.detail);
        }
        mf_status_clear(&st);
    }
    if (json)
        cli_print_json(all);
    return rc;
}

const cli_cmd cli_cmd_detect = {"detect", run_detect, "detect [--json] PATH...",
                                "format of each path, from its bytes"};
