#!/bin/bash
# References of llama.cpp's converter at ecbcb7ea (2026-02-27, unmodified) for the
# ../shared/convert-ref-arch directories, made through
# ../shared/tools/convref-new/run_convert.py with CONVREF_LLAMA_CPP naming that
# converter's tree; the BPE/WordPiece pre-tokenizer hint is the c392e50 reference's
# tokenizer.ggml.pre. Run outside the repository:
#   make_arch_2026.sh SHARED_DIR OUT_DIR > arch_2026.json
# arch_2026.json keeps each output's SHA-256 and whether mfmt --layout 2026-02 wrote
# the same bytes when it was made ("same"), else the first difference ("known").
set -e
shared=$1 out=$2 mfmt=${MFMT:-build/mfmt}
cd "$shared/convert-ref-arch"
echo '{"how": "make_arch_2026.sh (this folder)", "outputs": {'
first=1
for e in *.expected.json; do
  n=${e%.expected.json}
  read -r src t pre < <(/usr/bin/python3 -c "
import json;e=json.load(open('$e'));m={x['key']:x.get('value') for x in e['metadata']}
p=m.get('tokenizer.ggml.pre','');print(e['source'].replace('shared/',''),e['outtype'],p if p and p!='default' else '-')")
  args=(); [ "$pre" != "-" ] && args=(--tokpre "$pre")
  [ -n "$ONLY_EXISTING" ] && [ ! -f "$out/$n.gguf" ] && continue
  [ -f "$out/$n.gguf" ] || /usr/bin/python3 "$shared/tools/convref-new/run_convert.py" "${args[@]}" "$src" \
      --outtype "$t" --outfile "$out/$n.gguf" > "$out/$n.log" 2>&1 || continue
  sha=$(sha256sum "$out/$n.gguf" | cut -c1-64)
  status=unsupported
  if "$mfmt" convert -q "$src" "$out/$n.mfmt.gguf" --type "$t" --layout 2026-02 2>/dev/null; then
    if cmp -s "$out/$n.mfmt.gguf" "$out/$n.gguf"; then status=same; else status=known; fi
  fi
  [ $first = 1 ] || echo ','
  first=0
  printf ' "%s": {"dir": "%s", "outtype": "%s", "sha256": "%s", "status": "%s"}' "$n" "${src#dirs/}" "$t" "$sha" "$status"
done
echo; echo '}}'
