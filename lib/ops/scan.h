/* scan.h - the pickle safety scan (public API: mfmt/scan.h). */
#ifndef MF_SCAN_H
#define MF_SCAN_H
#include "core/core.h"
#endif
