#!/bin/sh
# check_cli.sh - the command line's conventions, checked by `make check`:
#  1. every command answers --help and -h with its usage (exit 0), and the
#     usage names every option of the command's table (mfmt help --options
#     lists them, each alias too);
#  2. doc/mfmt.1's "OPTIONS OF EACH COMMAND" block is what `mfmt help --man`
#     makes from those tables (regenerate: make man), and every option of
#     every command appears in its command's section of the page;
#  3. an unknown option is a usage error (exit 2), never opened as a path;
#     "--" ends the options (what follows is a path, even "--help").
# Prints one line per failed rule and "RESULT cli PASSED FAILED".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
mfmt=${MFMT:-build/mfmt}
case "$mfmt" in /*) ;; *) mfmt="$root/$mfmt" ;; esac
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL cli: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$mfmt" help --options >"$tmp/options" || bad "mfmt help --options failed"
cmds=$("$mfmt" help --man | sed -n 's/^\.SS "\([a-z]*\) .*/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 14 ] && ok || bad "fewer than 14 commands in help --man"

# 1. --help / -h
for c in $cmds; do
  for h in --help -h; do
    if "$mfmt" "$c" "$h" >"$tmp/help.$c" 2>&1; then ok; else bad "mfmt $c $h: exit $?"; fi
    grep -q "^usage: mfmt $c " "$tmp/help.$c" && ok || bad "mfmt $c $h: no usage line"
  done
done
while read -r c opt; do
  grep -qe "$opt\b" "$tmp/help.$c" && ok || bad "mfmt $c --help does not name $opt"
done <"$tmp/options"

# 2. the man page
"$mfmt" help --man >"$tmp/man.want"
sed -n '/^\.\\" BEGIN OPTIONS/,/^\.\\" END OPTIONS/p' doc/mfmt.1 | sed '1d;$d' >"$tmp/man.have"
if cmp -s "$tmp/man.want" "$tmp/man.have"; then ok; else
  bad "doc/mfmt.1's option sections differ from 'mfmt help --man' (run make man):"
  diff "$tmp/man.have" "$tmp/man.want" | head -n 10
fi
while read -r c opt; do
  esc=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
  # the command's section: from its .SS line to the next one
  awk -v c="$c" '/^\.SS "/ {on = index($0, ".SS \"" c " ") == 1} on' doc/mfmt.1 >"$tmp/sec"
  grep -q -- "$esc" "$tmp/sec" && ok || bad "doc/mfmt.1: $c's section does not document $opt"
done <"$tmp/options"
for c in $cmds; do
  grep -q "^\.B mfmt $c\$" doc/mfmt.1 && ok || bad "doc/mfmt.1: $c missing from the SYNOPSIS"
done

# 3. unknown options, and --
for c in $cmds; do
  "$mfmt" "$c" --no-such-option x >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" = 2 ] && grep -q "unknown option --no-such-option" "$tmp/out"; then ok; else
    bad "mfmt $c --no-such-option: exit $rc: $(head -c 200 "$tmp/out")"
  fi
done
"$mfmt" detect -- --help >"$tmp/out" 2>&1
rc=$?
[ "$rc" != 0 ] && grep -q -- "--help: cannot open" "$tmp/out" && ok ||
  bad "detect -- --help should try to open a file named --help: exit $rc: $(cat "$tmp/out")"
printf 'GGUF\003\000\000\000' >"$tmp/-x.gguf"
(cd "$tmp" && "$mfmt" detect -- -x.gguf) >"$tmp/out" 2>&1
grep -q "^-x.gguf: gguf" "$tmp/out" && ok || bad "detect -- -x.gguf: $(cat "$tmp/out")"

# 4. output conventions, on the bundled examples
"$mfmt" inspect examples/tiny-llama.gguf >"$tmp/out" 2>&1
for want in "general.file_type = 1 (F16)" "layer_norm_rms_epsilon = 1e-06" "rope.freq_base = 10000\$"; do
  grep -q -- "$want" "$tmp/out" && ok || bad "inspect tiny-llama.gguf: no line matching '$want'"
done
"$mfmt" inspect examples/tiny.safetensors examples/tiny-llama.gguf >"$tmp/out" 2>&1
grep -q "^format:      safetensors\$" "$tmp/out" && ok || bad "inspect: the format line repeats words: $(grep ^format "$tmp/out")"
[ "$(grep -c '^path:' "$tmp/out")" = 2 ] && ok || bad "inspect of two paths: not two reports"
"$mfmt" validate --jsonl examples/tiny.safetensors examples/tiny-llama.gguf >"$tmp/out" 2>&1
[ "$(grep -c '"valid": *true' "$tmp/out")" = 2 ] && ok || bad "validate --jsonl: $(cat "$tmp/out")"
"$mfmt" validate -q examples/tiny.safetensors >"$tmp/out" 2>&1
[ ! -s "$tmp/out" ] && ok || bad "validate -q printed: $(cat "$tmp/out")"
"$mfmt" hash --format sha256sum examples/tiny.safetensors >"$tmp/sums" && sha256sum -c "$tmp/sums" >/dev/null 2>&1 && ok ||
  bad "sha256sum -c does not accept hash --format sha256sum"
sed 's/^./0/' "$tmp/sums" >"$tmp/sums.bad"
sha256sum -c "$tmp/sums.bad" >/dev/null 2>&1 && bad "sha256sum -c accepted a changed hash" || ok

echo "RESULT cli $passed $failed"
[ "$failed" = 0 ]
