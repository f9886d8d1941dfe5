#!/bin/sh
# check_layers.sh - the shape of the library, checked by `make check`:
#  1. libmfmt.so exports exactly the functions include/ declares with MF_API
#     (nm -D --defined-only), nothing internal;
#  2. it has the SONAME libmfmt.so.MAJOR (readelf -d), MAJOR from mfmt.h;
#  3. cli/ includes only <mfmt.h> and its own headers (the CLI is built on
#     the public API), and the Makefile compiles it without -Ilib;
#  4. arrows point down: lib/core < lib/quant < lib/formats < lib/ops; a
#     file includes nothing from a higher layer;
#  5. a format family's internals (lib/formats/FAMILY/*_int.h) are included
#     only inside that family: other families and other layers go through
#     the family's public header (FAMILY/FAMILY.h and the like);
#  6. lib/ops names no format family: of lib/formats it includes only
#     formats/formats.h (the registry, the readers' hooks, and the HF
#     directory files the operations on such directories read);
#  7. the converter wing lib/ops/hfconv/ (HF <-> GGUF) is closed: no other
#     file of lib/ops includes a header of it (generic operations - diff,
#     hash, scan, estimate, ... - call no converter code; the public entry
#     points of include/mfmt/convert.h are implemented inside the wing).
#     Were one ever to need it, the way in is the wing's declared interface
#     ops/hfconv/hfconv.h, added to WING_IFACE below - nothing else.
#  8. no call up the layers: an mf_/mq_ function a layer's objects use is
#     defined in that layer or below (nm over build/lib/LAYER/*.o).
# Prints one line per failed rule and "RESULT layers PASSED FAILED" (the
# form tests/run.sh counts). BUILD: the build directory (default build).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
cd "$root" || exit 2
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL layers: $*"; }

# ---------------------------------------------------------------- 1. exports
api=$(mktemp)
exp=$(mktemp)
trap 'rm -f "$api" "$exp"' EXIT
# every "MF_API type name(" in the public headers (declarations may wrap)
grep -hv '^[[:space:]]*#' include/mfmt.h include/mfmt/*.h | tr '\n' ' ' |
  grep -oE 'MF_API +[A-Za-z_][A-Za-z0-9_ *]*\(' |
  sed -E 's/ *\($//; s/.*[ *]([A-Za-z_][A-Za-z0-9_]*)$/\1/' | sort -u >"$api"
so="$build/libmfmt.so"
if [ ! -e "$so" ]; then
  bad "$so is missing (make all)"
else
  nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | sort -u >"$exp"
  extra=$(comm -13 "$api" "$exp")
  missing=$(comm -23 "$api" "$exp")
  if [ -n "$extra" ]; then
    bad "exported but not declared MF_API in include/: $(echo $extra | cut -c1-300)"
  else
    ok
  fi
  if [ -n "$missing" ]; then
    bad "declared MF_API but not exported: $(echo $missing | cut -c1-300)"
  else
    ok
  fi
  n_api=$(wc -l <"$api")
  [ "$n_api" -gt 50 ] && ok || bad "only $n_api MF_API functions found in include/ (parser broken?)"
  # --------------------------------------------------------------- 2. soname
  major=$(sed -n 's/^#define MF_VERSION_MAJOR \([0-9]*\)$/\1/p' include/mfmt.h)
  soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
  [ -n "$major" ] && [ "$soname" = "libmfmt.so.$major" ] && ok ||
    bad "SONAME is '$soname', want libmfmt.so.$major"
fi

# ------------------------------------------------------------ 3. the CLI
cli_bad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' cli/*.c cli/*.h |
  while IFS= read -r line; do
    inc=$(printf '%s\n' "$line" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
    [ -f "cli/$inc" ] || printf '%s\n' "$line"
  done)
[ -z "$cli_bad" ] && ok || bad "cli/ includes a header outside cli/: $cli_bad"
cli_sys=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(core\|quant\|formats\|ops\)/' cli/*.c cli/*.h)
[ -z "$cli_sys" ] && ok || bad "cli/ includes a library header: $cli_sys"
grep -q '^CLI_INC *= *-Iinclude *$' Makefile && ok || bad "Makefile: CLI_INC must be -Iinclude alone"

# ------------------------------------------------------------ 4. layers
rank() {
  case "$1" in core) echo 0 ;; quant) echo 1 ;; formats) echo 2 ;; ops) echo 3 ;; *) echo -1 ;; esac
}
layer_bad=""
for f in $(find lib -name '*.c' -o -name '*.h' | sort); do
  own=$(echo "$f" | cut -d/ -f2)
  r_own=$(rank "$own")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\)\/.*/\1/p' "$f" | sort -u); do
    r=$(rank "$inc")
    [ "$r" -lt 0 ] && continue
    [ "$r" -gt "$r_own" ] && layer_bad="$layer_bad $f->$inc"
  done
done
[ -z "$layer_bad" ] && ok || bad "a lower layer includes a higher one:$layer_bad"

# ------------------------------------------------- 5. family internals
fam_bad=""
for f in $(find lib -name '*.c' -o -name '*.h' | sort); do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(formats\/[^"]*_int\.h\)".*/\1/p' "$f"); do
    fam=$(echo "$inc" | cut -d/ -f2)
    case "$f" in lib/formats/"$fam"/*) ;; *) fam_bad="$fam_bad $f->$inc" ;; esac
  done
done
[ -z "$fam_bad" ] && ok || bad "a family's internals included from outside it:$fam_bad"

# ------------------------------------------------- 6. ops name no family
ops_bad=""
for f in $(find lib/ops -name '*.c' -o -name '*.h' | sort); do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(formats\/[^"]*\)".*/\1/p' "$f"); do
    case "$f:$inc" in
      *:formats/formats.h) ;;
      *) ops_bad="$ops_bad $f->$inc" ;;
    esac
  done
done
[ -z "$ops_bad" ] && ok || bad "lib/ops includes a format family's header:$ops_bad"

# ------------------------------------------------- 7. the converter wing
WING_IFACE=""  # e.g. "ops/hfconv/hfconv.h"; empty: nothing outside includes the wing
wing_bad=""
for f in $(find lib/ops -path lib/ops/hfconv -prune -o \( -name '*.c' -o -name '*.h' -o -name '*.inc' \) -print | sort); do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(ops\/hfconv\/[^"]*\)".*/\1/p' "$f"); do
    [ -n "$WING_IFACE" ] && [ "$inc" = "$WING_IFACE" ] || wing_bad="$wing_bad $f->$inc"
  done
done
[ -z "$wing_bad" ] && ok || bad "a generic operation of lib/ops includes the converter wing lib/ops/hfconv/:$wing_bad"
# ------------------------------------------- 8. no call up the layers
# what rule 4 cannot see: a lower layer's object calling a function that
# only a higher layer defines (an mf_/mq_ symbol undefined in core's
# objects must be defined by core's; quant's by core's or quant's; ...).
sym_bad=""
if [ -d "$build/lib/core" ]; then
  defs=$(mktemp)
  for layer in core quant formats ops; do
    objs=$(find "$build/lib/$layer" -name '*.o' 2>/dev/null | sort)
    [ -n "$objs" ] || continue
    nm --defined-only $objs 2>/dev/null | awk 'NF == 3 {print $3}' >>"$defs"
    sort -u -o "$defs" "$defs"
    up=$(nm --undefined-only $objs 2>/dev/null | awk '{print $NF}' | grep -E '^m[fq]_' | sort -u |
      comm -23 - "$defs")
    [ -z "$up" ] || sym_bad="$sym_bad lib/$layer calls $(echo $up | cut -c1-200)"
  done
  rm -f "$defs"
  [ -z "$sym_bad" ] && ok || bad "a lower layer calls a higher one:$sym_bad"
else
  bad "$build/lib/core is missing (make all): cannot check the calls"
fi

echo "RESULT layers $passed $failed"
[ "$failed" -eq 0 ]
