/* hash_record.h - delivery records (hash_record.c), for cmd_hash.c. */
#ifndef MF_HASH_RECORD_H
#define MF_HASH_RECORD_H
#include "cli.h"

/* mfmt hash --record OUT MODEL [--tensors]: writes the record (through
 * mf_atomic; OUT "-": stdout). Returns the exit status. */
int cli_hash_record(const char *model, const char *out, bool per_tensor);
/* mfmt hash --check-record REC MODEL: exit 0 all match, 1 a file differs,
 * 3 a recorded file is missing, 5 the record is unreadable. */
int cli_hash_check_record(const char *model, const char *record, bool json);
#endif
