#!/bin/sh
# check_readme.sh - every command README.md shows is run (make check):
#  - each "$ mfmt ..." line of a code block runs from the repository root,
#    with build/mfmt for mfmt, and must exit 0 (or as the README says, for
#    validate/scan of a bad file: the next shown line is the verdict); the
#    output lines shown under it must be lines it prints, whole and in the
#    order shown (others may come between; "..." lines and lines after them
#    are elisions and are not compared);
#  - the install line's packages exist (apt-cache show; skipped where there
#    is no apt) and it asks for sudo only where the shell is not root.
# Prints "RESULT readme PASSED FAILED".
set -u
CHECK_NAME=readme
. "$(dirname "$0")/check_lib.sh"
mkdir -p "$tmp/bin"
ln -s "$mfmt" "$tmp/bin/mfmt"

# the code blocks' "$ " commands and the output shown under each, as
# records: "CMD<TAB>command" then "OUT<TAB>line"...
awk '/^```/ {inb = !inb; cmd = 0; next}
     inb && /^\$ / {print "CMD\t" substr($0, 3); cmd = 1; elided = 0; next}
     inb && cmd && /^$/ {cmd = 0; next}
     inb && cmd && /^ *\.\.\.$/ {elided = 1; next}
     inb && cmd && !elided {print "OUT\t" $0}' README.md >"$tmp/records"
[ "$(grep -c '^CMD' "$tmp/records")" -ge 8 ] && ok || bad "fewer than 8 commands found in README.md"

run_case() { # $1: command, $2: file of expected lines
  (cd "$root" && PATH="$tmp/bin:$PATH" sh -c "$1") >"$tmp/actual" 2>&1
  rc=$?
  case "$1" in
  *"mfmt validate "*|*"mfmt scan "*) [ "$rc" -le 1 ] && ok || bad "$1: exit $rc" ;;
  *) [ "$rc" = 0 ] && ok || bad "$1: exit $rc: $(head -c 300 "$tmp/actual")" ;;
  esac
  pos=1 # each shown line is looked for, as a whole line, after the previous one
  while IFS= read -r line; do
    at=$(tail -n "+$pos" "$tmp/actual" | grep -nxF -- "$line" | head -n 1 | cut -d: -f1)
    if [ -n "$at" ]; then
      ok
      pos=$((pos + at))
    elif grep -qxF -- "$line" "$tmp/actual"; then
      bad "$1: README shows '$line' out of order"
    else
      bad "$1: README shows '$line', not printed as such; got: $(head -c 400 "$tmp/actual")"
    fi
  done <"$2"
}

cmd=
: >"$tmp/expect"
while IFS= read -r rec; do
  kind=${rec%%	*}
  text=${rec#*	}
  if [ "$kind" = CMD ]; then
    [ -n "$cmd" ] && run_case "$cmd" "$tmp/expect"
    cmd=$text
    : >"$tmp/expect"
  else
    printf '%s\n' "$text" >>"$tmp/expect"
  fi
done <"$tmp/records"
[ -n "$cmd" ] && run_case "$cmd" "$tmp/expect"

# the install line
inst=$(grep -m1 'apt-get install' README.md)
case "$inst" in
*"sudo apt-get"*) bad "the install line says sudo: it must work as root (say sudo where needed)" ;;
*) ok ;;
esac
if command -v apt-cache >/dev/null 2>&1; then
  for p in $(printf '%s\n' "$inst" | sed 's/.*install -y//; s/&&.*//'); do
    apt-cache show "$p" >/dev/null 2>&1 && ok || bad "install line: no Debian package $p"
  done
fi
check_result
