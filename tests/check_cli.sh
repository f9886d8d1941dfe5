#!/bin/sh
# check_cli.sh - the command line's conventions, checked by `make check`:
#  1. every command answers --help and -h with its usage (exit 0), and the
#     usage names every option of the command's table (mfmt help --options
#     lists them, each alias too);
#  2. doc/mfmt.1's "OPTIONS OF EACH COMMAND" block is what `mfmt help --man`
#     makes from those tables (regenerate: make man), and every option of
#     every command appears in its command's section of the page;
#  3. an unknown option is a usage error (exit 2), never opened as a path;
#     "--" ends the options (what follows is a path, even "--help");
#  4. output conventions on the bundled examples;
#  5. -q/--quiet on every command, --jsonl on every read command of several
#     paths, "-" for standard input (detect, hash, scan).
# Prints one line per failed rule and "RESULT cli PASSED FAILED SKIPPED".
set -u
CHECK_NAME=cli
. "$(dirname "$0")/check_lib.sh"

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
  # (\b needs a word character: "-@" is looked for followed by a space)
  { grep -qe "$opt\b" "$tmp/help.$c" || grep -qF -- "$opt " "$tmp/help.$c"; } && ok \
    || bad "mfmt $c --help does not name $opt"
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

# 5. -q/--quiet on every command; --jsonl on every read command of several
#    paths (one object a line, one line per path); "-" is standard input
for c in $cmds; do
  grep -q "^$c --quiet\$" "$tmp/options" && grep -q "^$c -q\$" "$tmp/options" && ok ||
    bad "$c has no -q/--quiet in its option table"
done
st=examples/tiny.safetensors
gg=examples/tiny-llama.gguf
for c in detect hash validate scan inspect; do
  "$mfmt" "$c" --jsonl "$st" "$gg" >"$tmp/out" 2>"$tmp/err"
  n=$(grep -c . "$tmp/out")
  if [ "$n" = 2 ] && /usr/bin/python3 -c '
import json, sys
ps = [json.loads(l)["path"] for l in open(sys.argv[1])]
sys.exit(ps != sys.argv[2:])' "$tmp/out" "$st" "$gg"; then ok; else
    bad "$c --jsonl of two paths: not two JSON lines naming them: $(head -c 300 "$tmp/out") $(cat "$tmp/err")"
  fi
  "$mfmt" "$c" --json --jsonl "$st" >/dev/null 2>&1
  [ $? = 2 ] && ok || bad "$c --json --jsonl: not a usage error"
done
"$mfmt" hash --sha256 "$gg" >"$tmp/manifest" 2>&1
"$mfmt" hash --jsonl --check "$tmp/manifest" "$gg" >"$tmp/out" 2>&1
[ "$(grep -c . "$tmp/out")" = 1 ] && grep -q '"result":"Success"' "$tmp/out" && ok ||
  bad "hash --jsonl --check: $(head -c 300 "$tmp/out")"
"$mfmt" hash -q --check "$tmp/manifest" "$gg" >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && ok || bad "hash -q --check of a matching model: exit $rc: $(head -c 300 "$tmp/out")"
sed 's/^\(sha256 *\)./\10/' "$tmp/manifest" >"$tmp/manifest.bad"
"$mfmt" hash -q --check "$tmp/manifest.bad" "$gg" >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q Mismatch "$tmp/out" && ! grep -q " Ok\$" "$tmp/out" && ok ||
  bad "hash -q --check of a changed manifest: exit $rc: $(head -c 300 "$tmp/out")"
for c in detect inspect; do
  "$mfmt" "$c" -q "$st" >"$tmp/out" 2>&1
  [ $? = 0 ] && [ ! -s "$tmp/out" ] && ok || bad "$c -q printed: $(head -c 200 "$tmp/out")"
  "$mfmt" "$c" -q "$tmp/no-such-file" >"$tmp/out" 2>&1
  [ $? = 2 ] && grep -q "no-such-file" "$tmp/out" && ok || bad "$c -q hid an error: $(cat "$tmp/out")"
done
"$mfmt" diff -q "$gg" "$gg" >"$tmp/out" 2>&1
[ $? = 0 ] && [ ! -s "$tmp/out" ] && ok || bad "diff -q A A: $(head -c 200 "$tmp/out")"
"$mfmt" diff -q "$st" "$gg" >"$tmp/out" 2>&1
[ $? = 1 ] && [ ! -s "$tmp/out" ] && ok || bad "diff -q A B: $(head -c 200 "$tmp/out")"
# diff compares metadata too: an edited chat template is a difference
"$mfmt" edit -q "$gg" "$tmp/tmpl.gguf" --set 'tokenizer.chat_template={{ messages }}' >"$tmp/out" 2>&1
"$mfmt" diff "$gg" "$tmp/tmpl.gguf" >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q '^key-only-b  *tokenizer.chat_template  string "{{ messages }}"' "$tmp/out" && ok ||
  bad "diff of an edited template: $(head -c 300 "$tmp/out")"
"$mfmt" diff --tensors-only "$gg" "$tmp/tmpl.gguf" >"$tmp/out" 2>&1
[ $? = 0 ] && ! grep -q 'key-' "$tmp/out" && ok || bad "diff --tensors-only: $(head -c 300 "$tmp/out")"
"$mfmt" edit -q "$tmp/tmpl.gguf" "$tmp/tmpl2.gguf" --set 'tokenizer.chat_template={{ other }}' >"$tmp/out" 2>&1
"$mfmt" diff --metadata-only --json "$tmp/tmpl.gguf" "$tmp/tmpl2.gguf" >"$tmp/out" 2>&1
[ $? = 1 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = d["metadata"]
assert "tensors" not in d and d["equal"] is False and len(k) == 1, d
assert k[0]["key"] == "tokenizer.chat_template" and k[0]["result"] == "changed", k
assert k[0]["a"] == {"type": "string", "value": "{{ messages }}"}, k
assert k[0]["b"] == {"type": "string", "value": "{{ other }}"}, k' "$tmp/out" && ok ||
  bad "diff --metadata-only --json of a changed template: $(head -c 400 "$tmp/out")"
"$mfmt" diff --metadata-only --tensors-only "$gg" "$gg" >"$tmp/out" 2>&1
[ $? = 2 ] && ok || bad "diff --metadata-only --tensors-only is not a usage error"
# validate: a safetensors file aligned to 8 as the Rust writer aligns it is OK
# without warnings (one note), and every verdict line is on stdout
/usr/bin/python3 -c '
import json, struct, sys
hdr = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + bytes(16))' "$tmp/align8.safetensors"
"$mfmt" validate "$tmp/align8.safetensors" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && [ ! -s "$tmp/err" ] && grep -q ': note: .*not 64-byte aligned' "$tmp/out" &&
  grep -q ': OK (safetensors, 2 tensors)$' "$tmp/out" && ok ||
  bad "validate of an 8-aligned safetensors: $(cat "$tmp/out" "$tmp/err" | head -c 400)"
head -c 150 examples/tiny.safetensors >"$tmp/cut.safetensors"
"$mfmt" validate "$tmp/cut.safetensors" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && [ ! -s "$tmp/err" ] && grep -q 'INVALID, 1 problem' "$tmp/out" && grep -q 'byte 150' "$tmp/out" && ok ||
  bad "validate of a cut file: not one stream: $(cat "$tmp/out" "$tmp/err" | head -c 400)"
# --json: one path gives its object, several paths one array of the objects
for c in detect hash "hash --tensors" inspect; do
  "$mfmt" $c --json "$st" >"$tmp/one.json" 2>&1 && "$mfmt" $c --json "$st" "$gg" >"$tmp/two.json" 2>&1 &&
    /usr/bin/python3 -c '
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:3])
assert isinstance(one, dict) and one["path"] == sys.argv[3], one
assert isinstance(two, list) and [o["path"] for o in two] == sys.argv[3:5], two
assert two[0] == one' "$tmp/one.json" "$tmp/two.json" "$st" "$gg" && ok ||
    bad "$c --json of one and of two paths: $(head -c 300 "$tmp/two.json")"
done
# commands that do not read standard input say so (not "cannot open -")
for c in estimate dequantize edit; do
  "$mfmt" $c - "$tmp/x.out" </dev/null >"$tmp/out" 2>&1
  [ $? = 2 ] && grep -q "'-' (standard input) is not read by this command" "$tmp/out" && ok ||
    bad "$c - : $(head -c 300 "$tmp/out")"
done
"$mfmt" quantize --help | grep -q '^ *15  or  Q4_K_M   : mostly Q4_K$' && ok || bad "quantize --help lists no types"
# hash labels each line: the whole file, the tensor content, a tensor
"$mfmt" hash --content "$gg" >"$tmp/out" 2>&1
[ "$(sed -n 1p "$tmp/out")" = "sha256  $(sha256sum "$gg" | cut -d' ' -f1)  $gg (file)" ] &&
  grep -q "  $gg (tensor content)\$" "$tmp/out" && ok || bad "hash --content labels: $(cat "$tmp/out")"
# edit refuses another general.architecture unless forced (llama.cpp would load another model)
"$mfmt" edit -q "$gg" "$tmp/arch.gguf" --set general.architecture=qwen2 >"$tmp/out" 2>&1
[ $? = 2 ] && [ ! -e "$tmp/arch.gguf" ] && grep -q 'general.architecture: changing "llama" to "qwen2"' "$tmp/out" && ok ||
  bad "edit of general.architecture without --force: $(head -c 300 "$tmp/out")"
"$mfmt" edit -q --force "$gg" "$tmp/arch.gguf" --set general.architecture=qwen2 >"$tmp/out" 2>&1 &&
  "$mfmt" inspect --json "$tmp/arch.gguf" | grep -q '"general.architecture": "qwen2"' && ok ||
  bad "edit --force of general.architecture: $(head -c 300 "$tmp/out")"
"$mfmt" estimate -q "$gg" >"$tmp/out" 2>&1
want=$("$mfmt" estimate --json "$gg" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["total_bytes"])')
[ "$(cat "$tmp/out")" = "$want" ] && ok || bad "estimate -q: $(cat "$tmp/out"), want $want"
# the writing commands: no progress, no summary; the output still written
"$mfmt" convert -q "$gg" "$tmp/q.safetensors" >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && [ -s "$tmp/q.safetensors" ] && ok || bad "convert -q: $(head -c 200 "$tmp/out")"
"$mfmt" quantize -q "$gg" "$tmp/q.gguf" COPY >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && [ -s "$tmp/q.gguf" ] && ok || bad "quantize -q: $(head -c 200 "$tmp/out")"
"$mfmt" dequantize -q "$tmp/q.gguf" "$tmp/d.safetensors" >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && [ -s "$tmp/d.safetensors" ] && ok || bad "dequantize -q: $(head -c 200 "$tmp/out")"
"$mfmt" split -q --split-max-tensors 4 "$gg" "$tmp/sp" >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && [ -s "$tmp/sp-00001-of-00003.gguf" ] && ok || bad "split -q: $(head -c 200 "$tmp/out")"
"$mfmt" merge -q "$tmp/sp-00001-of-00003.gguf" "$tmp/m.gguf" >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && cmp -s "$tmp/m.gguf" "$gg" && ok || bad "merge -q: $(head -c 200 "$tmp/out")"
"$mfmt" edit -q "$gg" "$tmp/e.gguf" --set general.name=x >"$tmp/out" 2>&1 &&
  [ ! -s "$tmp/out" ] && [ -s "$tmp/e.gguf" ] && ok || bad "edit -q: $(head -c 200 "$tmp/out")"
"$mfmt" quantize -q "$tmp/no-such.gguf" "$tmp/x.gguf" Q8_0 >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "no-such.gguf" "$tmp/out" && ok || bad "quantize -q hid an error: $(cat "$tmp/out")"
# standard input: the same answers as the file (its copy made in a
# directory of this run's own)
mkdir "$tmp/spool"
TMPDIR="$tmp/spool"
export TMPDIR
for f in "$st" "$gg" tests/data/scan/benign_counter_p2.pkl tests/data/scan/uuid_command.pkl; do
  for c in detect "hash" "hash --content" scan "scan --jsonl" inspect "inspect --json" validate \
      "validate --jsonl"; do
    # shellcheck disable=SC2086
    "$mfmt" $c "$f" >"$tmp/want" 2>&1
    rw=$?
    # shellcheck disable=SC2086
    "$mfmt" $c - <"$f" >"$tmp/have" 2>&1
    rh=$?
    sed "s|$f|-|g" "$tmp/want" >"$tmp/want-"
    [ "$rw" = "$rh" ] && cmp -s "$tmp/want-" "$tmp/have" && ok ||
      bad "$c - <$f: exit $rh (file: $rw): $(head -c 300 "$tmp/have") vs $(head -c 300 "$tmp/want-")"
  done
done
# inspect and hash read "-" into memory and open it in place
# (mf_open_buffer): no copy in the spool directory
rm -f "$tmp/spool"/*
for c in inspect "hash --tensors"; do
  # shellcheck disable=SC2086
  cat "$gg" | "$mfmt" $c - >/dev/null 2>&1 && [ -z "$(ls "$tmp/spool")" ] && ok ||
    bad "$c - made a copy of standard input: $(ls "$tmp/spool")"
done
# "-" is read into memory up to MFMT_MAX_READ (default 4 GiB), then refused
# (an endless pipe ends the command, it does not exhaust memory)
head -c 2048 /dev/zero | MFMT_MAX_READ=1K "$mfmt" inspect - >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "more than 1024 bytes.*MFMT_MAX_READ" "$tmp/out" && ok ||
  bad "inspect - past MFMT_MAX_READ: $(cat "$tmp/out")"
(cat "$gg"; cat /dev/zero) | MFMT_MAX_READ=1M "$mfmt" hash --tensors - >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "more than 1048576 bytes" "$tmp/out" && ok ||
  bad "hash - of an endless pipe: $(cat "$tmp/out")"
cat "$gg" | MFMT_MAX_READ=$(wc -c <"$gg") "$mfmt" inspect - >/dev/null 2>&1 && ok ||
  bad "inspect - of exactly MFMT_MAX_READ bytes failed"
# the commands that copy "-" to a temporary file stop at the same bound (an
# endless pipe does not fill $TMPDIR) and leave no copy behind
mkdir -p "$tmp/spool2"
cat /dev/zero | TMPDIR="$tmp/spool2" MFMT_MAX_READ=1M "$mfmt" scan - >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "more than 1048576 bytes.*temporary file" "$tmp/out" && [ -z "$(ls "$tmp/spool2")" ] && ok ||
  bad "scan - of an endless pipe: $(cat "$tmp/out") $(ls "$tmp/spool2")"
cat "$gg" | TMPDIR="$tmp/spool2" MFMT_MAX_READ=$(wc -c <"$gg") "$mfmt" scan - >/dev/null 2>&1 && ok ||
  bad "scan - of exactly MFMT_MAX_READ bytes failed"
# a model that spans several files cannot come from standard input
"$mfmt" inspect - <tests/data/api/onnx/external_data/model.onnx >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "must be given by its path" "$tmp/out" && ! grep -q "mem:" "$tmp/out" && ok ||
  bad "inspect - of ONNX with external data: $(cat "$tmp/out")"
# a pipe, not a file: spooled (detect, scan) or streamed (hash)
cat "$st" | "$mfmt" detect - >"$tmp/out" 2>&1 && grep -q "^-: safetensors" "$tmp/out" && ok ||
  bad "detect - from a pipe: $(cat "$tmp/out")"
h=$(sha256sum "$gg" | cut -d' ' -f1)
cat "$gg" | "$mfmt" hash --format sha256sum - >"$tmp/out" 2>&1 && [ "$(cat "$tmp/out")" = "$h  -" ] && ok ||
  bad "hash --format sha256sum - from a pipe: $(cat "$tmp/out"), want $h  -"
cat "$gg" | "$mfmt" hash --check "$tmp/manifest" - >"$tmp/out" 2>&1 && grep -q "Success" "$tmp/out" && ok ||
  bad "hash --check MANIFEST - from a pipe: $(tail -n 2 "$tmp/out")"
# llama-quantize without OUT: [IN's folder]/ggml-model-[TYPE].gguf (TYPE as
# a name or LLAMA_FTYPE number, then the thread count)
mkdir "$tmp/noout" && cp "$gg" "$tmp/noout/in.gguf"
"$mfmt" quantize -q "$tmp/noout/in.gguf" 1 2 && "$mfmt" quantize -q "$gg" "$tmp/q-named.gguf" F16 &&
  cmp -s "$tmp/noout/ggml-model-F16.gguf" "$tmp/q-named.gguf" && ok ||
  bad "quantize IN TYPE NTHREADS: $(ls "$tmp/noout")"
# writing commands read "-" too: the same output as from the file
"$mfmt" quantize -q "$gg" "$tmp/q-file.gguf" F16 && "$mfmt" quantize -q - "$tmp/q-pipe.gguf" F16 <"$gg" &&
  cmp -s "$tmp/q-file.gguf" "$tmp/q-pipe.gguf" && ok || bad "quantize - differs from quantize FILE"
"$mfmt" convert -q "$gg" "$tmp/c-file.safetensors" && cat "$gg" | "$mfmt" convert -q - "$tmp/c-pipe.safetensors" &&
  cmp -s "$tmp/c-file.safetensors" "$tmp/c-pipe.safetensors" && ok || bad "convert - differs from convert FILE"
cat tests/data/scan/uuid_command.pkl | "$mfmt" convert - "$tmp/c-bad.safetensors" >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "^mfmt convert: - is dangerous to load (-: uuid" "$tmp/out" && [ ! -e "$tmp/c-bad.safetensors" ] &&
  ok || bad "convert - of a dangerous pickle: $(cat "$tmp/out")"
# a BPE tokenizer whose check-text hash llama.cpp's table does not know: a
# note says the pre-tokenizer was named from its family (-q: silent)
sc2=../shared/convert-ref-arch/dirs/starcoder2-tiny
if [ -d "$sc2" ]; then
  "$mfmt" convert "$sc2" "$tmp/sc2.gguf" >"$tmp/out" 2>&1 &&
    grep -q '^mfmt: note: tokenizer.ggml.pre = "starcoder", from the tokenizer.s family: the check-text hash [0-9a-f]\{64\} is not in llama.cpp.s table' "$tmp/out" &&
    ok || bad "convert of an unknown BPE hash: $(cat "$tmp/out")"
  "$mfmt" convert -q "$sc2" "$tmp/sc2q.gguf" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ] && cmp -s "$tmp/sc2.gguf" "$tmp/sc2q.gguf" &&
    ok || bad "convert -q still printed: $(cat "$tmp/out")"
fi
# MLX out (doc/mlx.md): an HF directory quantized, MLX back to GGUF (no
# temporary directory left), the MLX options refused without --mlx
l8=tests/data/mlx/models/llama8-f32
"$mfmt" convert -q "$l8" "$tmp/mlx8" --mlx --q-bits 3 --quant-predicate mixed_3_6 >"$tmp/out" 2>&1 &&
  grep -q '"bits": 6' "$tmp/mlx8/config.json" && [ "$("$mfmt" detect "$tmp/mlx8" | awk '{print $2}')" = mlx ] &&
  ok || bad "convert --mlx: $(cat "$tmp/out")"
lt=../shared/corpus/hf-dir/llama-tiny
if [ -d "$lt" ]; then
  # the bytes llama.cpp's converter writes from the dequantized directory
  # (tests/data/mlx/gguf_e2e/ref.tsv): general.name comes from the MLX
  # directory's name, so it is named like the source
  want=$(awk '$1 == "deq" && $2 == "llama-tiny" && $3 == "f16" {print $4}' tests/data/mlx/gguf_e2e/ref.tsv)
  mkdir -p "$tmp/mlxq" && "$mfmt" convert -q "$lt" "$tmp/mlxq/llama-tiny" --mlx --q-bits 4 --q-group-size 32 &&
    "$mfmt" convert -q "$tmp/mlxq/llama-tiny" "$tmp/mlxt.gguf" --type f16 >"$tmp/out" 2>&1 &&
    [ "$(sha256sum <"$tmp/mlxt.gguf" | cut -c1-64)" = "$want" ] &&
    [ -z "$(ls -d "$tmp"/mlxt.gguf.mlx.* 2>/dev/null)" ] && ok || bad "MLX -> GGUF: $(cat "$tmp/out")"
else
  echo "SKIP cli: MLX -> GGUF needs $lt"
fi
"$mfmt" convert "$l8" "$tmp/x.safetensors" --q-bits 4 >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "are for MLX output" "$tmp/out" && [ ! -e "$tmp/x.safetensors" ] && ok ||
  bad "--q-bits without --mlx: $(cat "$tmp/out")"
# a broken file from standard input: the error names "-", not the copy
head -c 100 "$gg" | "$mfmt" inspect - >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "^mfmt: -: byte 16" "$tmp/out" && ! grep -q "mfmt-stdin" "$tmp/out" && ok ||
  bad "inspect - of a cut GGUF: $(cat "$tmp/out")"
# validate of a GGUF cut inside its data: each tensor past the end said once;
# the offsets are judged by the running padded size (gguf.cpp), not the
# last tensor that fitted; JSON problems name "-" too
head -c 3000 "$gg" | "$mfmt" validate --json - >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q 'runs past the end of the file' "$tmp/out" && ! grep -q 'it must be' "$tmp/out" &&
  ! grep -q "mfmt-stdin" "$tmp/out" && ok || bad "validate --json - of a cut GGUF: $(head -c 600 "$tmp/out")"
# scan --format sarif: a SARIF 2.1.0 log (tests/sarif_check.py: the
# schema's required parts; the OASIS schema itself when MFMT_SARIF_SCHEMA
# names it and python3-jsonschema is there), the same exit status as text
for f in tests/data/scan/uuid_command.pkl tests/data/scan/benign_counter_p2.pkl \
    tests/data/scan/templates/attack/09-format-filter.jinja "$gg"; do
  "$mfmt" scan "$f" >/dev/null 2>&1
  rt=$?
  "$mfmt" scan --format sarif "$f" >"$tmp/sarif.json" 2>"$tmp/err"
  rs=$?
  [ "$rt" = "$rs" ] && ok || bad "scan --format sarif $f: exit $rs, text $rt"
  if command -v python3 >/dev/null 2>&1; then
    python3 tests/sarif_check.py "$tmp/sarif.json" >"$tmp/out" 2>&1 && ok ||
      bad "scan --format sarif $f: $(tail -n 5 "$tmp/out")"
  else
    echo "SKIP sarif_check.py: no python3"
  fi
done
"$mfmt" scan --format sarif tests/data/scan/templates/attack/09-format-filter.jinja >"$tmp/sarif.json" 2>&1
grep -q '"ruleId": "MFS002"' "$tmp/sarif.json" && grep -q '"level": "error"' "$tmp/sarif.json" &&
  grep -q '"byteOffset": [0-9]' "$tmp/sarif.json" && ok || bad "sarif of a template attack: $(head -c 400 "$tmp/sarif.json")"
"$mfmt" scan --format xml "$gg" >"$tmp/out" 2>&1
[ $? = 2 ] && ok || bad "scan --format xml is not a usage error"

# scan's exit status for CI (doc/scan.md "Exit status"): 0 safe, 1 dangerous,
# 2 error, 3 unknown; several files: 1 over 2 over 3. --allow / --allow-file
# lift names the scanner calls unknown (the user's own classes), recorded in
# the output; a name known to run code stays dangerous.
own=tests/data/scan_allow/own_class.pkl evil=tests/data/scan/uuid_command.pkl
safe_pk=tests/data/scan/benign_counter_p2.pkl
scan_rc() { "$mfmt" scan "$@" >"$tmp/out" 2>&1; echo $?; }
[ "$(scan_rc "$safe_pk")" = 0 ] && ok || bad "scan of a safe pickle: not exit 0"
[ "$(scan_rc "$evil")" = 1 ] && ok || bad "scan of a dangerous pickle: not exit 1"
[ "$(scan_rc "$own")" = 3 ] && ok || bad "scan of an unknown class: not exit 3"
[ "$(scan_rc "$tmp/no-such.pkl")" = 2 ] && ok || bad "scan of a missing file: not exit 2"
[ "$(scan_rc "$own" "$evil")" = 1 ] && ok || bad "scan unknown + dangerous: not exit 1"
[ "$(scan_rc "$own" "$tmp/no-such.pkl")" = 2 ] && ok || bad "scan unknown + missing: not exit 2"
[ "$(scan_rc "$own" "$safe_pk")" = 3 ] && ok || bad "scan unknown + safe: not exit 3"
[ "$(scan_rc --format sarif "$own")" = 3 ] && ok || bad "scan --format sarif of an unknown class: not exit 3"
printf '%s\n%s\n' "$own" "$evil" | "$mfmt" scan --jsonl -@ >/dev/null 2>&1
[ $? = 1 ] && ok || bad "scan -@ unknown + dangerous: not exit 1"
[ "$(scan_rc --allow mypkg.layers.Config "$own")" = 0 ] && grep -q "^  allowed   mypkg.layers.Config" "$tmp/out" &&
  ok || bad "scan --allow of the user's class: $(cat "$tmp/out")"
[ "$(scan_rc --allow 'mypkg.*' "$own")" = 0 ] && ok || bad "scan --allow mypkg.*: not exit 0"
[ "$(scan_rc --allow mypkg.layers.Other "$own")" = 3 ] && ok || bad "scan --allow of another name lifted the class"
[ "$(scan_rc --allow-file tests/data/scan_allow/allow.txt "$own")" = 0 ] && ok || bad "scan --allow-file: not exit 0"
[ "$(scan_rc --allow uuid._get_command_stdout "$evil")" = 1 ] && ok || bad "scan --allow lifted a dangerous name"
[ "$(scan_rc --allow notaname "$own")" = 2 ] && grep -q "not a Python name" "$tmp/out" && ok ||
  bad "scan --allow notaname: $(cat "$tmp/out")"
"$mfmt" scan --json --allow mypkg.layers.Config "$own" >"$tmp/out" 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=d["files"][0]
assert d["verdict"] == "safe" and d["allowlist"] == ["mypkg.layers.Config"], d
assert f["allowed"] == ["mypkg.layers.Config"] and f["globals"][0]["allowed"] is True, f' "$tmp/out" &&
  ok || bad "scan --json --allow: $(head -c 400 "$tmp/out")"

# convert_hf_to_gguf.py's flags: the default output name and general.* keys
# against gguf-py's Metadata/naming_convention (tests/converter_names.py;
# LLAMA_CPP names a llama.cpp checkout, else tests/data/convert_flags/
# expected.txt, which it made), --outfile into a directory, {ftype}
# templates, --split-max-tensors through llama-gguf-split's writer (merged
# back: the converter's own file, byte for byte)
hfd=../shared/corpus/hf-dir/llama-tiny
if [ -d "$hfd" ] && command -v python3 >/dev/null 2>&1; then
  python3 tests/converter_names.py ../shared/corpus/hf-dir "$tmp/names" "$mfmt" >"$tmp/out" 2>&1 && ok ||
    bad "converter names: $(grep -v '^RESULT' "$tmp/out" | head -n 8)"
  grep '^SKIP' "$tmp/out"
  mkdir -p "$tmp/odir"
  "$mfmt" convert -q "$hfd" --outfile "$tmp/odir" && [ -f "$tmp/odir/Llama-Tiny-115K-F16.gguf" ] &&
    cmp -s "$tmp/odir/Llama-Tiny-115K-F16.gguf" ../shared/convert-ref/llama-tiny-f16.gguf && ok ||
    bad "convert --outfile DIR: $(ls "$tmp/odir")"
  "$mfmt" convert -q "$hfd" --outtype q8_0 --outfile "$tmp/odir/t-{ftype}-{FTYPE}.gguf" &&
    [ -f "$tmp/odir/t-q8_0-Q8_0.gguf" ] && ok || bad "convert --outfile with {ftype}: $(ls "$tmp/odir")"
  "$mfmt" convert -q "$hfd" --outfile "$tmp/odir/t-{nope}.gguf" >"$tmp/out" 2>&1
  [ $? = 2 ] && grep -q "output name template" "$tmp/out" && ok || bad "convert --outfile {nope}: $(cat "$tmp/out")"
  "$mfmt" convert -q "$hfd" --outfile "$tmp/odir/sp.gguf" --split-max-tensors 8 &&
    [ -f "$tmp/odir/sp-00003-of-00003.gguf" ] && [ ! -e "$tmp/odir/sp.gguf" ] &&
    "$mfmt" merge -q "$tmp/odir/sp-00001-of-00003.gguf" "$tmp/odir/merged.gguf" &&
    cmp -s "$tmp/odir/merged.gguf" ../shared/convert-ref/llama-tiny-f16.gguf && ok ||
    bad "convert --split-max-tensors 8: $(ls "$tmp/odir")"
  "$mfmt" convert -q "$hfd" --outfile "$tmp/odir/one.gguf" --split-max-size 1G &&
    [ -f "$tmp/odir/one.gguf" ] && [ ! -e "$tmp/odir/one-00001-of-00001.gguf" ] && ok ||
    bad "convert --split-max-size larger than the model: not one plain file"
  "$mfmt" convert -q "$hfd" "$tmp/odir/a.gguf" --outfile "$tmp/odir/b.gguf" >/dev/null 2>&1
  [ $? = 2 ] && ok || bad "convert OUT and --outfile both: not a usage error"
  "$mfmt" convert -q "$hfd" "$tmp/odir/st.safetensors" --model-name x >/dev/null 2>&1
  [ $? = 2 ] && ok || bad "convert --model-name to safetensors: not a usage error"
else
  echo "SKIP convert_hf_to_gguf.py flags: no ../shared/corpus/hf-dir or python3"
fi

# convert x.pt OUT/: save_pretrained's weights layout (shards + index) for a
# model that is not a GGUF; inspect of that directory (no config.json) shows
# its weights with a note, instead of failing as a model directory
pt=../shared/corpus/pytorch/dtypes.pt
if [ -f "$pt" ]; then
  "$mfmt" convert -q "$pt" "$tmp/wdir/" --max-shard-size 40 >/dev/null 2>&1 &&
    [ -f "$tmp/wdir/model.safetensors.index.json" ] && [ -f "$tmp/wdir/model-00001-of-00006.safetensors" ] &&
    "$mfmt" diff -q "$pt" "$tmp/wdir/model.safetensors.index.json" >/dev/null 2>&1 && ok ||
    bad "convert x.pt DIR/: $(ls "$tmp/wdir" 2>&1)"
  "$mfmt" inspect "$tmp/wdir" >"$tmp/out" 2>"$tmp/err" && grep -q "^tensors: *10," "$tmp/out" &&
    grep -q "has no config.json" "$tmp/err" && ok || bad "inspect of a weights-only directory: $(cat "$tmp/err")"
  "$mfmt" validate "$tmp/wdir" >/dev/null 2>&1
  [ $? = 1 ] && ok || bad "validate of a directory without config.json is not a breach"
else
  echo "SKIP convert x.pt DIR/: no ../shared/corpus/pytorch"
fi

# diff HF_DIR model.gguf: names and layouts through the converter's tables;
# against llama.cpp's own converter output (f16: every tensor the same
# values, q/k permutes undone) and gguf-py's dequantization (q8_0: each
# tensor's RMSE and cosine, the summary; tests/diff_oracle.py)
if [ -d ../shared/corpus/hf-dir/llama-tiny ] && [ -f ../shared/convert-ref/llama-tiny-q8_0.gguf ]; then
  "$mfmt" diff ../shared/corpus/hf-dir/llama-tiny ../shared/convert-ref/llama-tiny-f16.gguf >"$tmp/out" 2>&1 &&
    head -n 1 "$tmp/out" | grep -q "^model: .* 21 tensors compared, 115008 parameters; weighted RMSE 0, mean cosine 1.000000000" &&
    grep -q "^21 same bytes, 0 same values\|^0 same bytes, 21 same values" "$tmp/out" && ok ||
    bad "diff HF_DIR f16.gguf: $(head -n 3 "$tmp/out")"
  "$mfmt" diff -q ../shared/convert-ref/llama-tiny-f16.gguf ../shared/corpus/hf-dir/llama-tiny && ok ||
    bad "diff f16.gguf HF_DIR (GGUF first): not equal"
  "$mfmt" diff --no-map ../shared/corpus/hf-dir/llama-tiny ../shared/convert-ref/llama-tiny-f16.gguf >"$tmp/out" 2>&1
  [ $? = 1 ] && grep -q "^only-b  *token_embd.weight" "$tmp/out" && ok || bad "diff --no-map: names were mapped"
  "$mfmt" diff ../shared/corpus/hf-dir/llama-tiny ../shared/convert-ref/llama-tiny-q8_0.gguf >"$tmp/out" 2>&1
  [ $? = 1 ] && head -n 1 "$tmp/out" | grep -q "worst model.layers" && ok || bad "diff HF_DIR q8_0.gguf: $(head -n 2 "$tmp/out")"
  py=python3 # the oracle needs numpy: the first python3 that has it
  for p in python3 /usr/bin/python3; do "$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }; done
  if "$py" -c 'import numpy' 2>/dev/null; then
    "$py" tests/diff_oracle.py ../shared/corpus/hf-dir/llama-tiny ../shared/convert-ref/llama-tiny-q8_0.gguf \
      "$mfmt" >"$tmp/out" 2>&1 && ok || bad "diff against gguf-py: $(tail -n 5 "$tmp/out")"
    grep '^SKIP' "$tmp/out"
  else
    echo "SKIP diff against gguf-py: no python3 with numpy"
  fi
  ls "${TMPDIR:-/tmp}" | grep -q "^mfmt-diff-" && bad "diff left its temporary directory" || ok
  # the GGUF side is read through the converter as it streams, not written
  # out first: without a usable temporary directory diff and report
  # --against still work (they wrote an F32 copy of the model there before)
  TMPDIR="$tmp/no-such-dir" "$mfmt" diff -q ../shared/corpus/hf-dir/llama-tiny \
    ../shared/convert-ref/llama-tiny-f16.gguf && ok || bad "diff HF_DIR f16.gguf needed a temporary directory"
  TMPDIR="$tmp/no-such-dir" "$mfmt" report -q --json --no-hash --no-scan \
    --against ../shared/corpus/hf-dir/llama-tiny ../shared/convert-ref/llama-tiny-q8_0.gguf >"$tmp/out" 2>&1 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["against"]["tensors_compared"] == 21)' "$tmp/out" &&
    ok || bad "report --against HF_DIR needed a temporary directory: $(tail -n 3 "$tmp/out")"
else
  echo "SKIP diff HF_DIR model.gguf: no ../shared/corpus/hf-dir or convert-ref"
fi

# diff --arch-file: Grok is in no built-in table, so its names map only
# through tests/data/arch/grok.json's rows (as convert --arch-file); the
# GGUFs are llama.cpp's converter's (tests/data/arch_ref/README.md)
ar=tests/data/arch_ref
if [ -d "$ar/dirs/grok-tiny" ]; then
  "$mfmt" diff "$ar/dirs/grok-tiny" "$ar/grok-tiny-f16.gguf" >"$tmp/out" 2>&1
  [ $? = 1 ] && grep -q "not mapped through the converter" "$tmp/out" && ok || bad "diff of grok without --arch-file was mapped"
  "$mfmt" diff --arch-file tests/data/arch/grok.json "$ar/dirs/grok-tiny" "$ar/grok-tiny-f16.gguf" >"$tmp/out" 2>&1 &&
    head -n 1 "$tmp/out" | grep -q "through the arch file's rows: 45 tensors compared, 64032 parameters; weighted RMSE 0, mean cosine 1.000000000" &&
    grep -q "^0 same bytes, 45 same values in another dtype, 0 differ, 0 shape mismatches, 0 only in A, 0 only in B" "$tmp/out" &&
    ok || bad "diff --arch-file grok f16: $(head -n 2 "$tmp/out")"
  "$mfmt" diff --arch-file tests/data/arch/grok.json --json "$ar/grok-tiny-q8_0.gguf" "$ar/dirs/grok-tiny" >"$tmp/out" 2>&1
  [ $? = 1 ] && grep -q '"mapping": "arch file (GGUF -> HF)"' "$tmp/out" && grep -q '"tensors": 45,' "$tmp/out" && ok ||
    bad "diff --arch-file grok q8_0 (GGUF first): $(head -c 300 "$tmp/out")"
  "$mfmt" diff --arch-file tests/data/arch/llama.json "$ar/dirs/grok-tiny" "$ar/grok-tiny-f16.gguf" >"$tmp/out" 2>&1
  [ $? = 2 ] && grep -q 'general.architecture is "grok"' "$tmp/out" && ! grep -q "^model:" "$tmp/out" && ok ||
    bad "diff --arch-file of another family is not refused: $(head -c 300 "$tmp/out")"
  "$mfmt" diff --arch-file tests/data/arch/grok.json --no-map "$ar/dirs/grok-tiny" "$ar/grok-tiny-f16.gguf" >/dev/null 2>&1
  [ $? = 2 ] && ok || bad "diff --arch-file --no-map is not a usage error"
else
  echo "SKIP diff --arch-file: no tests/data/arch_ref/dirs/grok-tiny"
fi

# report: one self-contained HTML page (tests/report_check.py: well-formed,
# nothing loaded from elsewhere, the sections, per-layer bars; parameters,
# verdict and sha256 as inspect, scan and sha256sum say; the memory table as
# mfmt estimate says); --against: every number against numpy
# (tests/report_against.py); rendered in headless Chromium
# (tests/report_render.py: screenshot not blank, no console message)
q8=../shared/convert-ref/llama-tiny-q8_0.gguf
if [ -f "$q8" ] && command -v python3 >/dev/null 2>&1; then
  np=$("$mfmt" inspect --json "$q8" | python3 -c 'import json,sys; print(json.load(sys.stdin)["n_params"])')
  sum=$(sha256sum "$q8" | cut -d' ' -f1)
  "$mfmt" report -q "$q8" -o "$tmp/report.html" &&
    python3 tests/report_check.py "$tmp/report.html" "$np" safe "$sum" --estimate "$mfmt" "$q8" \
    >"$tmp/out" 2>&1 && ok || bad "report of a GGUF: $(tail -n 5 "$tmp/out")"
  "$mfmt" report -q "$evil" -o "$tmp/report-evil.html" &&
    python3 tests/report_check.py "$tmp/report-evil.html" 0 dangerous >"$tmp/out" 2>&1 &&
    grep -q "uuid._get_command_stdout" "$tmp/report-evil.html" &&
    grep -q "No estimate: " "$tmp/report-evil.html" && ok || bad "report of a dangerous pickle: $(tail -n 5 "$tmp/out")"
  "$mfmt" report -q ../shared/corpus/hf-dir/llama-tiny -o "$tmp/report-dir.html" --no-hash &&
    python3 tests/report_check.py "$tmp/report-dir.html" 115008 safe --estimate "$mfmt" ../shared/corpus/hf-dir/llama-tiny \
    >"$tmp/out" 2>&1 && ok || bad "report of an HF directory: $(tail -n 5 "$tmp/out")"
  "$mfmt" report -q "$q8" >/dev/null 2>&1
  [ $? = 2 ] && ok || bad "report without -o or --json is not a usage error"
  "$mfmt" report -q --json --no-hash --no-scan "$q8" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(not (d["parameters"] == 115008 and d["memory"]["rows"] and "against" not in d))' &&
    ok || bad "report --json"
  py=python3 # numpy: the first python3 that has it
  for p in python3 /usr/bin/python3; do "$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }; done
  if "$py" -c 'import numpy' 2>/dev/null; then
    # Q4_K_M (llama-quantize's: Q4_K/Q6_K of quant-ref/mix, and llama-tiny's fallbacks Q5_0/Q8_0,
    # tests/data/report_against/README.md) against the F16/F32 GGUF it came from; the converter's
    # q8_0 against the HF directory (through the converter's tables) and against the f16
    mix=../shared/quant-ref/mix
    for pair in "tests/data/report_against/llama-tiny-Q4_K_M.gguf ../shared/convert-ref/llama-tiny-f32.gguf" \
                "$mix/model-Q4_K_M.gguf $mix/model-F16.gguf" \
                "$q8 ../shared/corpus/hf-dir/llama-tiny" "$q8 ../shared/convert-ref/llama-tiny-f16.gguf"; do
      set -- $pair
      n=$("$mfmt" inspect --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["n_params"])')
      "$mfmt" report -q --no-hash --against "$2" "$1" -o "$tmp/report-against.html" &&
        python3 tests/report_check.py "$tmp/report-against.html" "$n" safe >"$tmp/out" 2>&1 &&
        "$py" tests/report_against.py "$1" "$2" "$mfmt" "$tmp/report-against.html" >"$tmp/out" 2>&1 && ok ||
        bad "report --against $2 $1: $(tail -n 5 "$tmp/out")"
      if grep -q '^SKIP' "$tmp/out"; then skip "report --against $2 $1: $(grep '^SKIP' "$tmp/out")"; fi
    done
  else
    skip "report --against: no python3 with numpy"
  fi
  "$mfmt" report -q --against ../shared/quant-ref/input.safetensors "$q8" -o "$tmp/report-x.html" 2>"$tmp/out"
  [ $? = 1 ] && [ ! -e "$tmp/report-x.html" ] && ok || bad "report --against a model with no tensor in common: $(cat "$tmp/out")"
  ls "${TMPDIR:-/tmp}" | grep -q "^mfmt-diff-" && bad "report --against left its temporary directory" || ok
  chrome=$(command -v chromium || command -v chromium-browser || true)
  if [ -n "$chrome" ]; then
    "$mfmt" report -q --no-hash --against ../shared/corpus/hf-dir/llama-tiny "$q8" -o "$tmp/report-full.html" &&
      python3 tests/report_render.py "$chrome" "$tmp/report-full.html" "$tmp/chromium" >"$tmp/out" 2>&1 && ok ||
      bad "report in headless chromium: $(tail -n 6 "$tmp/out")"
    grep '^chromium: ' "$tmp/out"
  else
    skip "report in headless chromium: not installed (apt-get install chromium)"
  fi
else
  skip "report: no ../shared/convert-ref or python3"
fi

# a pre-quantized directory (GPTQ, AWQ, bitsandbytes) to OUT/: its float
# twin, as mf_convert_to_hf writes it (the references: tests/data/prequant,
# made from the producing tools' layouts), quantization_config gone
for case in gptq-llama-tiny awq-gemm-g32 awq-gemv-g64 bnb-fp4; do
  d=tests/data/prequant/$case
  rm -rf "$tmp/float"
  if "$mfmt" convert -q "$d/" "$tmp/float/" --dtype f32 >"$tmp/out" 2>&1; then
    got=$("$mfmt" hash --tensors "$tmp/float/model.safetensors" | awk '/tensor content/ {print $2}')
    want=$("$mfmt" hash --tensors "$d.ref.safetensors" | awk '/tensor content/ {print $2}')
    [ -n "$got" ] && [ "$got" = "$want" ] && ok || bad "convert $d/ OUT/: tensors differ from $case.ref.safetensors"
    grep -q quantization_config "$tmp/float/config.json" && bad "convert $d/ OUT/: config.json keeps quantization_config" || ok
  else
    bad "convert $d/ OUT/: $(cat "$tmp/out")"
  fi
done

# killed while it copies standard input: the copy goes too
mkfifo "$tmp/fifo"
"$mfmt" detect - <"$tmp/fifo" >/dev/null 2>&1 &
pid=$!
exec 9>"$tmp/fifo"
printf 'GGUF' >&9
i=0
while [ -z "$(ls "$tmp/spool")" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -n "$(ls "$tmp/spool")" ] && ok || bad "no copy of standard input appeared"
kill -TERM "$pid"
wait "$pid" 2>/dev/null
exec 9>&-
[ -z "$(ls "$tmp/spool")" ] && ok || bad "a copy of standard input was left: $(ls "$tmp/spool")"

check_result
