#!/bin/sh
# make install-check: installs into a fresh temporary prefix, then builds and
# runs programs against the installed headers and library through
# pkg-config (shared, then static), and checks the man page, the shared
# library's names (libmfmt.so -> libmfmt.so.0 -> libmfmt.so.0.X.Y) and the
# CLI. examples/tour.c, built the same way, runs over the conformance corpus
# (../shared/corpus, or MFMT_SHARED/corpus) when it is there.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
make -s -C "$root" install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists mfmt
version=$(pkg-config --modversion mfmt)
[ "$version" = "$("$prefix/bin/mfmt" --version | cut -d' ' -f2)" ]
# the names a Debian package ships: the real file, the soname link, the dev link
major=${version%%.*}
[ -f "$prefix/lib/libmfmt.so.$version" ] && [ ! -L "$prefix/lib/libmfmt.so.$version" ]
[ "$(readlink "$prefix/lib/libmfmt.so.$major")" = "libmfmt.so.$version" ]
[ "$(readlink "$prefix/lib/libmfmt.so")" = "libmfmt.so.$major" ]
readelf -d "$prefix/lib/libmfmt.so.$version" | grep -q "Library soname: \[libmfmt.so.$major\]"
[ -f "$prefix/include/mfmt.h" ] && [ -f "$prefix/include/mfmt/scan.h" ]
cat > "$work/use.c" <<'C'
#include <mfmt.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    mf_status st;
    mf_status_init(&st);
    mf_model *m;
    if (argc < 2 || mf_open(argv[1], NULL, &m, &st) != 0) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    char hex[129];
    int rc = mf_hash_tensor_content(m, MF_SHA256, hex, &st);
    printf("%s %zu %s\n", mf_format_name(mf_model_format(m)), mf_model_tensor_count(m), hex);
    mf_close(m);
    return rc != 0 || strlen(hex) != 64;
}
C
cc $(pkg-config --cflags mfmt) -o "$work/use-shared" "$work/use.c" $(pkg-config --libs mfmt)
# the program records the soname, not the dev link
readelf -d "$work/use-shared" | grep -q "Shared library: \[libmfmt.so.$major\]"
LD_LIBRARY_PATH="$prefix/lib" "$work/use-shared" "$root/examples/tiny-llama.gguf" >"$work/a"
cc $(pkg-config --cflags mfmt) -o "$work/use-static" "$work/use.c" "$prefix/lib/libmfmt.a" \
  $(pkg-config --static --libs mfmt | sed 's/-lmfmt//')
"$work/use-static" "$root/examples/tiny-llama.gguf" >"$work/b"
cmp -s "$work/a" "$work/b"
grep -q '^gguf 12 ' "$work/a"
MANPATH="$prefix/share/man" man -w mfmt >/dev/null 2>&1 || [ -f "$prefix/share/man/man1/mfmt.1" ]
"$prefix/bin/mfmt" detect "$root/examples/tiny.safetensors" >/dev/null
echo "install-check: ok ($(cut -c1-40 "$work/a")...)"

# examples/tour.c: the whole API from the installed headers only
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags mfmt jansson) -o "$work/tour" \
  "$root/examples/tour.c" $(pkg-config --libs mfmt jansson) -lm
shared=${MFMT_SHARED:-$root/../shared}
if [ -f "$shared/corpus/manifest.json" ]; then
  mkdir -p "$work/out"
  LD_LIBRARY_PATH="$prefix/lib" "$work/tour" "$shared/corpus" "$work/out" >"$work/tour.log" ||
    { cat "$work/tour.log"; exit 1; }
  echo "install-check: examples/tour.c: $(tail -n 1 "$work/tour.log") ($(grep -c '^   ' "$work/tour.log") lines of checks)"
else
  echo "install-check: examples/tour.c built; $shared/corpus is absent, so it was not run"
fi
