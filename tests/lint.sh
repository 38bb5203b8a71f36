#!/bin/sh
# Static analysis of the project's C (make lint): cppcheck, then gcc's
# -fanalyzer on each file.  Any finding fails.
#
# usage: tests/lint.sh FILE.c...
# Environment: CPPCHECK (default cppcheck), ANALYZER_CC (default gcc),
# JSMN_INCLUDE (the directory holding jsmn.h, default /usr/include).
#
# cppcheck: warning, style, performance and portability checks, for the
# one configuration the Makefile builds (-D_GNU_SOURCE -DJSMN_PARENT_LINKS
# -DJSMN_STRICT).  jsmn.h is shown to it (a copy alone in a directory, so
# that it does not wander into the system headers); findings inside jsmn.h
# itself are not ours.  Suppressions, each with its reason, are in
# tests/cppcheck.supp; inline ones are `// cppcheck-suppress ID` comments.
#
# gcc -fanalyzer: per file, -O2, the Makefile's warning flags.  Known
# false positives of gcc 12's analyzer are turned off for the files they
# hit, listed below with the reason.
set -u
cd "$(dirname "$0")/.." || exit 1
cppcheck=${CPPCHECK:-cppcheck}
cc=${ANALYZER_CC:-gcc}
jsmn=${JSMN_INCLUDE:-/usr/include}
defs="-D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DJSMN_PARENT_LINKS -DJSMN_STRICT"

if [ $# -eq 0 ]; then
	echo "usage: tests/lint.sh FILE.c..." >&2
	exit 2
fi
for tool in "$cppcheck" "$cc"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "lint: $tool not found (Debian: apt-get install cppcheck gcc)" >&2
		exit 1
	fi
done
if [ ! -f "$jsmn/jsmn.h" ]; then
	echo "lint: $jsmn/jsmn.h not found: install libjsmn-dev" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-lint.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
mkdir "$tmp/include"
cp "$jsmn/jsmn.h" "$tmp/include/jsmn.h"

status=0

# Named codes and methods.  No JSON-RPC error code (-32700, -32600 ..
# -32603, -32000 .. -32099) is written as a number in a C file of ours:
# jsonrpc.h names each once (enum rpc_code); comments count too, so that
# a grep for a name finds every mention.  No method of mcp.h's table is
# written as a whole string literal, "tools/call" or \"tools/call\" in a
# JSON text: the file says MCP_TOOLS_CALL (a method named in a sentence
# of a message, "tools/list after tools/list_changed failed", is prose
# and may stay).  Whose files: for codes, the product's at the top and
# the tests and fuzzers that include its headers (tests/mock-server.c and
# the examples stand for servers others write, and keep their numbers);
# for methods, the product's alone: a test spells out the bytes it
# expects on the wire in its own words.
sed -n 's/^#define[ 	]*MCP_[A-Z_]*[ 	]*\("[^"]*"\).*/\1/p' mcp.h \
    > "$tmp/methods"
names=0
for f in "$@"; do
	case $f in
	*/*) grep -q '^#[ 	]*include[ 	]*"\.\./' "$f" || continue ;;
	esac
	if grep -n -- '-32[0-9][0-9][0-9]' "$f" > "$tmp/hits"; then
		sed "s|^|$f:|; s|\$| (a literal code: name it in jsonrpc.h)|" \
		    "$tmp/hits"
		names=$((names + $(wc -l < "$tmp/hits")))
	fi
	case $f in */*) continue ;; esac
	if grep -nF -f "$tmp/methods" "$f" > "$tmp/hits"; then
		sed "s|^|$f:|; s|\$| (a method: say its name in mcp.h)|" \
		    "$tmp/hits"
		names=$((names + $(wc -l < "$tmp/hits")))
	fi
done
if [ "$(wc -l < "$tmp/methods")" -lt 20 ]; then
	echo "lint: mcp.h: its table of methods was not read"
	status=1
elif [ "$names" -eq 0 ]; then
	echo "lint: error codes and methods: named"
else
	echo "lint: error codes and methods: $names literal(s)"
	status=1
fi

echo "lint: cppcheck $($cppcheck --version | sed 's/^Cppcheck //') on $# files"
# shellcheck disable=SC2086
if $cppcheck --std=c11 --enable=warning,style,performance,portability \
    --library=posix --inline-suppr --quiet --error-exitcode=1 \
    $defs -DWB_VERSION='"lint"' -DSAN_LOG_DIR='"/tmp"' \
    -I"$tmp/include" \
    --suppressions-list=tests/cppcheck.supp \
    --suppress=missingIncludeSystem \
    --suppress="*:$tmp/include/jsmn.h" \
    --template='{file}:{line}: cppcheck {severity} ({id}): {message}' \
    "$@" 2> "$tmp/cppcheck"; then
	echo "lint: cppcheck: clean"
else
	n=$(grep -c ': cppcheck ' "$tmp/cppcheck")
	echo "lint: cppcheck: $n finding(s):"
	cat "$tmp/cppcheck"
	status=1
fi

# Files whose gcc 12 analyzer false positives are switched off, and why:
# example/example-server.c, example/demo.c: -Wanalyzer-double-free.  Their
# xrealloc(p, n) wrappers around realloc(3) make gcc 12 follow the
# "realloc moved the buffer" path into a later xrealloc(NULL, n) and call
# that a double free "of '0'" (freeing NULL is not a free at all).
analyzer_extra() {
	case $1 in
	example/example-server.c | example/demo.c)
		echo "-Wno-analyzer-double-free" ;;
	esac
}

echo "lint: $cc -fanalyzer on $# files"
found=0
for f in "$@"; do
	# shellcheck disable=SC2086,SC2046
	$cc -std=c11 -Wall -Wextra $defs -DWB_VERSION='"lint"' \
	    -DSAN_LOG_DIR='"/tmp"' -O2 -fanalyzer \
	    -fdiagnostics-plain-output $(analyzer_extra "$f") \
	    -c -o /dev/null "$f" > "$tmp/analyzer" 2>&1
	if grep -q 'warning:\|error:' "$tmp/analyzer"; then
		found=$((found + $(grep -c 'warning:\|error:' "$tmp/analyzer")))
		grep 'warning:\|error:' "$tmp/analyzer"
		# The path that leads there, for the reader.
		sed 's/^/    /' "$tmp/analyzer" | head -n 80
	fi
done
if [ "$found" -eq 0 ]; then
	echo "lint: -fanalyzer: clean"
else
	echo "lint: -fanalyzer: $found finding(s)"
	status=1
fi
exit "$status"
