/* conformance_hooks.h - what the conformance run asks of operations that
 * live above the readers. */
#ifndef MF_CONFORMANCE_HOOKS_H
#define MF_CONFORMANCE_HOOKS_H

/* 1: the scanner calls the file dangerous; 0: it does not; -1: no scanner
 * for this kind of file yet (counted as skipped). */
static inline int conformance_scan_verdict(const char *path)
{
    (void)path;
    return -1; /* TODO(scan): call the pickle scanner once it lands */
}
#endif
