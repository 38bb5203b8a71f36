#!/bin/sh
# The Makefile honours CC, CPPFLAGS, CFLAGS and LDFLAGS, the jsmn check
# included (make check-flags).  A copy of the tree is built with
# CC=musl-gcc, which searches only musl's headers (Debian's gcc, even its
# cross compilers, would find jsmn.h in /usr/include anyway), so jsmn.h
# can come from nowhere but CPPFLAGS:
#	- without CPPFLAGS, make stops and names libjsmn-dev and CPPFLAGS;
#	- with jsmn.h alone in a private directory given as CPPFLAGS=-I...,
#	  CFLAGS=-O1 and LDFLAGS=-static, every compile has the -I and -O1,
#	  every link -static; the programs are static and the unit tests and
#	  --version run.
#
# usage: tests/flags.sh
# Environment: MUSL_CC (default musl-gcc), JSMN_INCLUDE (default
# /usr/include), MAKE (default make).
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
cc=${MUSL_CC:-musl-gcc}
jsmn=${JSMN_INCLUDE:-/usr/include}
make=${MAKE:-make}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "flags: $cc not found (Debian: apt-get install musl-tools)" >&2
	exit 1
fi
if [ ! -f "$jsmn/jsmn.h" ]; then
	echo "flags: $jsmn/jsmn.h not found: install libjsmn-dev" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-flags.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
src=$tmp/src
private=$tmp/private
mkdir -p "$src/tests" "$src/example" "$private"
cp -p Makefile README.md ./*.[ch] "$src" &&
    cp -p tests/*.c "$src/tests" &&
    cp -p example/*.c example/*.json "$src/example" &&
    cp "$jsmn/jsmn.h" "$private/jsmn.h" || exit 1

# Otherwise the test would prove nothing.
if printf '#include <jsmn.h>\n' | $cc -E -x c - >/dev/null 2>&1; then
	fail "$cc alone does not find jsmn.h"
else
	ok "$cc alone does not find jsmn.h"
fi

# Flags given on our command line are all that count: MAKEFLAGS of an
# outer make may carry other values.
unset MAKEFLAGS MFLAGS

# Without CPPFLAGS: stopped, with what to do.
if (cd "$src" && $make CC="$cc" CPPFLAGS= CFLAGS=-O1 LDFLAGS=-static \
    mcp-workbench) > "$tmp/without" 2>&1; then
	fail "without CPPFLAGS: make fails"
else
	ok "without CPPFLAGS: make fails"
fi
if grep -q "jsmn.h not found by $cc; install Debian's libjsmn-dev" \
    "$tmp/without" && grep -q 'CPPFLAGS=-I' "$tmp/without"; then
	ok "without CPPFLAGS: names libjsmn-dev and CPPFLAGS"
else
	fail "without CPPFLAGS: names libjsmn-dev and CPPFLAGS"
	quote "$tmp/without"
fi

# With jsmn.h in the private directory, through CPPFLAGS alone.
if (cd "$src" && $make CC="$cc" CPPFLAGS="-I$private" CFLAGS=-O1 \
    LDFLAGS=-static mcp-workbench tests/unit example/example-server) \
    > "$tmp/with" 2>&1; then
	ok "with CPPFLAGS=-I$private: make succeeds"
else
	fail "with CPPFLAGS=-I$private: make succeeds"
	tail -n 20 "$tmp/with" | quote
fi
grep "^$cc " "$tmp/with" > "$tmp/commands"
n=$(wc -l < "$tmp/commands")
if [ "$n" -ge 3 ]; then
	ok "with CPPFLAGS: $n compiler commands"
else
	fail "with CPPFLAGS: compiler commands seen ($n)"
fi
# Every compile has CPPFLAGS and CFLAGS; every link CFLAGS and LDFLAGS.
if grep -E ' -c |\.c( |$)' "$tmp/commands" |
    grep -v -e " -I$private " -e " -I$private\$" | grep -q .; then
	fail "every compile has CPPFLAGS"
	grep -v -e " -I$private" "$tmp/commands" | quote
else
	ok "every compile has CPPFLAGS"
fi
if grep -v ' -O1 ' "$tmp/commands" | grep -q .; then
	fail "every command has CFLAGS"
	grep -v ' -O1 ' "$tmp/commands" | quote
else
	ok "every command has CFLAGS"
fi
if grep -v ' -c ' "$tmp/commands" | grep -v ' -static ' | grep -q .; then
	fail "every link has LDFLAGS"
	grep -v ' -c ' "$tmp/commands" | grep -v ' -static ' | quote
else
	ok "every link has LDFLAGS"
fi
for f in mcp-workbench tests/unit example/example-server; do
	if [ -x "$src/$f" ] && ! readelf -lW "$src/$f" | grep -q INTERP; then
		ok "$f is static (LDFLAGS=-static)"
	else
		fail "$f is static (LDFLAGS=-static)"
	fi
done
out=$("$src/tests/unit" 2>&1 | tail -n 1)
case $out in
*' passed, 0 failed') ok "unit tests: $out" ;;
*) fail "unit tests: $out" ;;
esac
out=$("$src/mcp-workbench" --version 2>&1)
case $out in
'mcp-workbench '[0-9]*) ok "--version: $out" ;;
*) fail "--version: $out" ;;
esac
tally flags
