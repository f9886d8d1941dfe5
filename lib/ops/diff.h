/* diff.h - two models compared tensor by tensor (public API: mfmt/analyze.h). */
#ifndef MF_DIFF_H
#define MF_DIFF_H
#include "core/core.h"
#endif
