/* cmd_validate.c - mfmt validate PATH: every rule of the format. */
#include "cli.h"
#include "hf_cli.h"

static int run_validate(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("validate", "no path given");
    int worst = EXIT_FINE;
    for (int i = 1; i < argc; i++) {
        mf_status st;
        mf_status_init(&st);
        mf_model *m = NULL;
        if (cli_open(argv[i], MF_OPEN_STRICT, false, &m, &st) != 0) {
            size_t n = mf_status_count(&st);
            fprintf(stderr, "%s: INVALID, %zu problem%s:\n", argv[i], n, n == 1 ? "" : "s");
            int e = cli_report(&st);
            worst = e > worst ? e : worst;
        } else {
            /* a Hugging Face directory: its config must match its weights */
            int problems = cli_hf_load_report_text(stdout, m, "", &st);
            if (problems != 0) {
                if (problems < 0)
                    cli_report(&st);
                fprintf(stderr, "%s: INVALID, the weights do not match config.json (load report above)\n",
                        argv[i]);
                worst = worst > EXIT_BAD_INPUT ? worst : EXIT_BAD_INPUT;
                mf_close(m);
                mf_status_clear(&st);
                continue;
            }
            for (size_t k = 0; k < mf_model_note_count(m); k++)
                fprintf(stderr, "mfmt: %s: warning: %s\n", argv[i], mf_model_note_at(m, k));
            printf("%s: OK (%s%s%s, %zu tensors%s)\n", argv[i], mf_format_name(mf_model_format(m)),
                   mf_model_version(m)[0] ? " " : "", mf_model_version(m), mf_model_tensor_count(m),
                   mf_model_note_count(m) ? ", with warnings" : "");
            mf_close(m);
        }
        mf_status_clear(&st);
    }
    return worst;
}

const cli_cmd cli_cmd_validate = {"validate", run_validate, "validate PATH...",
                                  "check every rule of the format; exit 1 on a breach"};
