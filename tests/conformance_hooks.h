/* conformance_hooks.h - what the conformance run asks of operations that
 * live above the readers. */
#ifndef MF_CONFORMANCE_HOOKS_H
#define MF_CONFORMANCE_HOOKS_H
#include "ops/scan.h"

/* The scanner's verdict on a file: 0 safe, 1 unknown (names off the
 * allowlist, or something it could not check), 2 dangerous; -1 when the
 * file cannot be scanned. */
static inline int conformance_scan_verdict(const char *path)
{
    mf_status st;
    mf_status_init(&st);
    mf_scan_report *r;
    int v = mf_scan_file(path, &r, &st) ? -1 : (int)r->verdict;
    if (v >= 0)
        mf_scan_free(r);
    mf_status_clear(&st);
    return v;
}
#endif
