/* scan_sarif.h - mfmt scan --format sarif: the reports as one SARIF 2.1.0
 * log (OASIS Static Analysis Results Interchange Format), which CI tools
 * read (GitHub code scanning, GitLab, Azure DevOps). */
#ifndef MF_CLI_SCAN_SARIF_H
#define MF_CLI_SCAN_SARIF_H
#include "cli.h"

typedef struct cli_sarif cli_sarif;
cli_sarif *cli_sarif_new(void);
/* One result per finding of r (every severity: error, warning, note). */
void cli_sarif_add(cli_sarif *s, const mf_scan_report *r);
/* Prints the log and frees s. */
void cli_sarif_print(cli_sarif *s);
#endif
