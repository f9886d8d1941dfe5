#!/bin/sh
# make_format_verdicts.sh - writes format_verdicts.tsv (read by
# tests/test_scan_formats.c): for every file of ../shared/corpus,
# ../shared/real and the scan fixtures, "verdict<TAB>N<TAB>path", N the
# findings that call the file (or an archive member) a format holding no
# pickle. Made with the mfmt of commit 0fa2773, the last whose scan had its
# own list of magic numbers, so that the test proves the readers' probes
# give the same verdicts:
#   MFMT=/path/to/that/mfmt sh tests/data/scan/make_format_verdicts.sh > tests/data/scan/format_verdicts.tsv
# Run from the repository's root. Rows of fixtures added after it come from
# the mfmt that added them (dcp_nested/, dcp_overlap/, index_escape/: their verdicts hold only
# since scan reads the slices a DCP .metadata names).
find ../shared/corpus ../shared/real tests/data/scan tests/data/scan_allow tests/data/scan_benign \
  tests/data/scan_canon tests/data/scan_gate -type f ! -name format_verdicts.tsv |
  LC_ALL=C sort | while IFS= read -r f; do
  "$MFMT" scan --all --json "$f" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
p = sys.argv[1]
d = json.load(sys.stdin)
n = sum(1 for f in d["files"] for x in f["findings"]
        if "holds no pickle" in x["message"] or "signature on a file" in x["message"])
print("%s\t%d\t%s" % (d["verdict"], n, p))' "$f"
done
