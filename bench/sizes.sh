#!/bin/sh
# The size table of the README (make sizes): each build's mcp-workbench in
# bytes, as built, stripped with that target's strip, and its text (code
# and read-only data, from size(1); a stripped file also holds the padding
# that aligns its segments to the target's largest page).  The table is
# printed and written into README between its two "make sizes" marks.
#
# usage: bench/sizes.sh README CROSS_DIR [TRIPLET...]
# Environment: CC and CFLAGS (the native build, ./mcp-workbench),
# MUSL_CC and STATIC_CFLAGS (./mcp-workbench-static), CROSS_CFLAGS (the
# cross builds, CROSS_DIR/TRIPLET/mcp-workbench).
set -u
cd "$(dirname "$0")/.." || exit 1

if [ $# -lt 2 ]; then
	echo "usage: bench/sizes.sh README CROSS_DIR [TRIPLET...]" >&2
	exit 2
fi
readme=$1
crossdir=$2
shift 2
cc=${CC:-cc}
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
{
	echo '| build | binary | bytes | stripped | text |'
	echo '|---|---|---|---|---|'
	row mcp-workbench "" \
	    "$host, glibc, dynamic, $(flags "${CFLAGS-}"), $(compiler "$cc")"
	row mcp-workbench-static "" \
	    "$host, musl, static, $(flags "${STATIC_CFLAGS-}"), $(compiler "${MUSL_CC:-musl-gcc}")"
	for t in "$@"; do
		row "$crossdir/$t/mcp-workbench" "$t-" \
		    "$t, glibc, dynamic, $(flags "${CROSS_CFLAGS-}"), $(compiler "$t-gcc")"
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
