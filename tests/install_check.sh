#!/bin/sh
# make install-check: installs into a fresh temporary prefix, then builds and
# runs a small program against the installed header and library through
# pkg-config (shared, then static), and checks the man page and the CLI.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
make -s -C "$root" install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists mfmt
[ "$(pkg-config --modversion mfmt)" = "$("$prefix/bin/mfmt" --version | cut -d' ' -f2)" ]
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
    printf("%s %zu %s\n", mf_format_name(m->format), m->n_tensors, hex);
    mf_close(m);
    return rc != 0 || strlen(hex) != 64;
}
C
cc $(pkg-config --cflags mfmt) -o "$work/use-shared" "$work/use.c" $(pkg-config --libs mfmt)
LD_LIBRARY_PATH="$prefix/lib" "$work/use-shared" "$root/examples/tiny-llama.gguf" >"$work/a"
cc $(pkg-config --cflags mfmt) -o "$work/use-static" "$work/use.c" "$prefix/lib/libmfmt.a" \
  $(pkg-config --static --libs mfmt | sed 's/-lmfmt//')
"$work/use-static" "$root/examples/tiny-llama.gguf" >"$work/b"
cmp -s "$work/a" "$work/b"
grep -q '^gguf 12 ' "$work/a"
MANPATH="$prefix/share/man" man -w mfmt >/dev/null 2>&1 || [ -f "$prefix/share/man/man1/mfmt.1" ]
"$prefix/bin/mfmt" detect "$root/examples/tiny.safetensors" >/dev/null
echo "install-check: ok ($(cat "$work/a" | cut -c1-40)...)"
