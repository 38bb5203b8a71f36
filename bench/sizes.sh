#!/bin/sh
# The size table of the README (make sizes): each build's mcp-workbench in
# bytes, as built, stripped with that target's strip, and its text (code
# and read-only data, from size(1); a stripped file also holds the padding
# that aligns its segments to the target's largest page).  The table is
# printed and written into README between its two "make sizes" marks.
#
# With --check (make check-sizes), only the native build is measured, and
# its row of the table must say the same for the same build: machine,
# flags and compiler, which the row names.  The stripped size and the text
# are compared; the bytes as built are not, since the debug information
# (-g) names the directory the build ran in.  A table with no row for this
# build cannot be checked here, and that fails too, saying so.  The
# check also holds the full native build, stripped, to SIZE_MAX_FULL
# bytes, and the minimal one (make HTTP=0 SHARE=0, built for size,
# MIN_DIR/mcp-workbench) to SIZE_MAX_MINIMAL.
#
# Each build is measured twice: in full and minimal (HTTP=0 SHARE=0,
# built into MIN_DIR, build-minimal, beside the full one).
#
# usage: bench/sizes.sh README CROSS_DIR [TRIPLET...]
#        bench/sizes.sh --check README
# Environment: CC and CFLAGS (the native build, ./mcp-workbench),
# MUSL_CC and STATIC_CFLAGS (./mcp-workbench-static), CROSS_CFLAGS (the
# cross builds, CROSS_DIR/TRIPLET/mcp-workbench), MIN_DIR (default
# build-minimal), SIZE_MAX_FULL and SIZE_MAX_MINIMAL (the bounds).
set -u
cd "$(dirname "$0")/.." || exit 1

check=0
if [ "${1-}" = --check ] && [ $# -eq 2 ]; then
	check=1
	readme=$2
	crossdir=
	shift 2
elif [ $# -lt 2 ] || [ "$1" = --check ]; then
	echo "usage: bench/sizes.sh README CROSS_DIR [TRIPLET...]" >&2
	echo "       bench/sizes.sh --check README" >&2
	exit 2
else
	readme=$1
	crossdir=$2
	shift 2
fi
cc=${CC:-cc}
mindir=${MIN_DIR:-build-minimal}
max_full=${SIZE_MAX_FULL:-330000}
max_minimal=${SIZE_MAX_MINIMAL:-200000}
minimal='HTTP=0 SHARE=0'
begin='<!-- make sizes: begin -->'
end='<!-- make sizes: end -->'
if ! grep -qx -- "$begin" "$readme" || ! grep -qx -- "$end" "$readme"; then
	echo "sizes: $readme lacks the lines $begin and $end" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-sizes.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

# bytes N: N with a comma between each three digits.
bytes() {
	printf '%s\n' "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'
}

# compiler CC: "gcc 12.2.0" or "clang 14.0.6".
compiler() {
	case $($1 --version 2>/dev/null | head -n 1) in
	*clang*)	printf 'clang %s\n' "$($1 -dumpversion)" ;;
	*)		printf 'gcc %s\n' "$($1 -dumpfullversion 2>/dev/null ||
			    $1 -dumpversion)" ;;
	esac
}

# flags FLAGS: the compiler flags as shown in the table.
flags() {
	if [ -n "$1" ]; then
		printf '`%s`\n' "$1"
	else
		echo 'no flags'
	fi
}

# row BINARY PREFIX DESCRIPTION: one line of the table; PREFIX is that of
# the target's binutils (strip, size).
row() {
	if [ ! -f "$1" ]; then
		echo "sizes: $1 is missing" >&2
		exit 1
	fi
	if ! "${2}strip" -o "$tmp/stripped" "$1"; then
		echo "sizes: ${2}strip failed on $1" >&2
		exit 1
	fi
	text=$("${2}size" "$1" | awk 'NR == 2 { print $1 }')
	printf '| %s | `%s` | %s | %s | %s |\n' "$3" "$1" \
	    "$(bytes "$(wc -c < "$1" | tr -d ' ')")" \
	    "$(bytes "$(wc -c < "$tmp/stripped" | tr -d ' ')")" \
	    "$(bytes "$text")"
}

host=$(uname -m)
native="$host, glibc, dynamic, $(flags "${CFLAGS-}"), $(compiler "$cc")"

# cell N LINE: the Nth cell of a table line, without its blanks.
cell() {
	printf '%s\n' "$2" | awk -F'|' -v n="$(($1 + 1))" '{
		sub(/^[ \t]+/, "", $n); sub(/[ \t]+$/, "", $n); print $n }'
}

# stripped BINARY: the size of BINARY stripped, in bytes.
stripped() {
	strip -o "$tmp/bound" "$1" && wc -c < "$tmp/bound" | tr -d ' '
}

# check BINARY DESCRIPTION: this build's row against the table's row for
# it; says why and returns 1 when they differ.
check() {
	built=$(row "$1" "" "$2") || return 1
	table=$(awk -v begin="$begin" -v end="$end" '
		$0 == end { inside = 0 }
		inside && /^\| / && !/^\| build \|/ { print }
		$0 == begin { inside = 1 }' "$readme")
	have=$(printf '%s\n' "$table" | while IFS= read -r line; do
		[ "$(cell 1 "$line")" = "$2" ] && printf '%s\n' "$line"
	done)
	if [ -z "$have" ]; then
		echo "sizes: $readme has no size row for this build," >&2
		echo "  $2;" >&2
		echo "  its rows for $host are:" >&2
		printf '%s\n' "$table" | while IFS= read -r line; do
			case $(cell 1 "$line") in
			"$host, glibc, dynamic,"*) echo "  $(cell 1 "$line")" >&2 ;;
			esac
		done
		echo "  Build with that compiler and those flags to check the" \
		    "table (CI: Debian 12), or run make sizes there." >&2
		return 1
	fi
	if [ "$(cell 4 "$have")" != "$(cell 4 "$built")" ] ||
	    [ "$(cell 5 "$have")" != "$(cell 5 "$built")" ]; then
		echo "sizes: $readme's size table is stale for $2:" >&2
		echo "  stripped $(cell 4 "$have") and text $(cell 5 "$have")" \
		    "there, $(cell 4 "$built") and $(cell 5 "$built") built;" >&2
		echo "  run make sizes and commit the table." >&2
		return 1
	fi
	echo "sizes: $readme agrees for $2: stripped $(cell 4 "$built")," \
	    "text $(cell 5 "$built")"
}

# bound BINARY MAX WHAT: BINARY, stripped, is at most MAX bytes.
bound() {
	n=$(stripped "$1") || return 1
	if [ "$n" -gt "$2" ]; then
		echo "sizes: the $3 build, stripped, is $(bytes "$n") bytes," \
		    "over its bound of $(bytes "$2") ($1)" >&2
		return 1
	fi
	echo "sizes: the $3 build, stripped, is $(bytes "$n") bytes," \
	    "within $(bytes "$2")"
}

if [ "$check" -eq 1 ]; then
	status=0
	bound mcp-workbench "$max_full" full || status=1
	bound "$mindir/mcp-workbench" "$max_minimal" "minimal ($minimal)" ||
	    status=1
	check mcp-workbench "$native" || status=1
	check "$mindir/mcp-workbench" "$native, $minimal" || status=1
	exit $status
fi

{
	echo '| build | binary | bytes | stripped | text |'
	echo '|---|---|---|---|---|'
	row mcp-workbench "" "$native"
	row "$mindir/mcp-workbench" "" "$native, $minimal"
	static="$host, musl, static, $(flags "${STATIC_CFLAGS-}"), $(compiler "${MUSL_CC:-musl-gcc}")"
	row mcp-workbench-static "" "$static"
	row "$mindir/mcp-workbench-static" "" "$static, $minimal"
	for t in "$@"; do
		d="$t, glibc, dynamic, $(flags "${CROSS_CFLAGS-}"), $(compiler "$t-gcc")"
		row "$crossdir/$t/mcp-workbench" "$t-" "$d"
		row "$crossdir/$t/$mindir/mcp-workbench" "$t-" "$d, $minimal"
	done
} > "$tmp/table" || exit 1

cat "$tmp/table"
awk -v begin="$begin" -v end="$end" -v table="$tmp/table" '
	$0 == end { skip = 0 }
	!skip { print }
	$0 == begin {
		while ((getline line < table) > 0)
			print line
		skip = 1
	}' "$readme" > "$tmp/readme" && cat "$tmp/readme" > "$readme" &&
	echo "sizes: written into $readme"
