#!/bin/sh
# tests/layers.sh: the layers of ARCHITECTURE.md, checked against the
# #include "..." lines of the product's sources (make lint, make check).
#
#	sh tests/layers.sh [ARCHITECTURE.md]
#
# The layer table (the rows "| N | headers | files | ... |") names every
# header and source file of the top directory with its layer.  Fails,
# saying which, when a file is in no layer, when a file includes a header
# of a higher layer, when a private header (NAME_int.h) is included from
# another layer, when includes run in a cycle, or when a file but the
# loop's calls poll().
set -eu

cd "$(dirname "$0")/.."
doc=${1:-ARCHITECTURE.md}
[ -f "$doc" ] || { echo "layers: $doc not found" >&2; exit 1; }

{
	# The table: "L name" for every file it names.
	awk -F'|' '$2 ~ /^ *[0-9]+ *$/ {
		l = $2 + 0
		for (c = 3; c <= 4; c++) {
			s = $c
			while (match(s, /`[^`]+`/)) {
				print "L", substr(s, RSTART + 1, RLENGTH - 2), l
				s = substr(s, RSTART + RLENGTH)
			}
		}
	}' "$doc"
	# The files, and their includes: "F file", "I file header".
	for f in *.c *.h; do
		echo "F $f"
		sed -n 's/^#[ 	]*include[ 	]*"\([^"]*\)".*/I '"$f"' \1/p' "$f"
	done
} | awk '
$1 == "L" { layer[$2] = $3; next }
$1 == "F" { files[++nf] = $2; next }
$1 == "I" { from[++ne] = $2; to[ne] = $3; next }
function fail(msg) { print "layers: " msg > "/dev/stderr"; bad = 1 }
END {
	for (i = 1; i <= nf; i++)
		if (!(files[i] in layer))
			fail(files[i] " is in no layer of the table in '"$doc"'")
	for (e = 1; e <= ne; e++) {
		f = from[e]; h = to[e]
		if (!(f in layer))
			continue
		if (!(h in layer)) {
			fail(f " includes " h ", which is in no layer")
			continue
		}
		if (layer[h] > layer[f])
			fail(f " (layer " layer[f] ") includes " h \
			    " (layer " layer[h] "): includes go down, never up")
		if (h ~ /_int\.h$/ && layer[h] != layer[f])
			fail(f " (layer " layer[f] ") includes the private " \
			    h " of layer " layer[h])
		adj[f] = adj[f] " " h
	}
	# A cycle: a depth-first walk that meets a file still on its path.
	for (i = 1; i <= nf; i++)
		if (!(files[i] in state))
			walk(files[i], "")
	exit bad
}
function walk(f, path,    n, k, a, h) {
	state[f] = 1
	n = split(adj[f], a, " ")
	for (k = 1; k <= n; k++) {
		h = a[k]
		if (!(h in state))
			walk(h, path " " f " ->")
		else if (state[h] == 1)
			fail("includes run in a cycle:" path " " f " -> " h)
	}
	state[f] = 2
}
'

# One poll() loop: loop.c alone polls.  front.c is the front's process,
# which runs no loop: it waits on its one socket until its session ends.
polls=$(grep -n '[^a-z_]p\{0,1\}poll(' *.c | grep -v '^loop\.c:\|^front\.c:' |
    grep -v ':[[:space:]]*/\{0,1\}\*' || true)
if [ -n "$polls" ]; then
	echo "layers: only loop.c calls poll() (the one loop):" >&2
	echo "$polls" >&2
	exit 1
fi
echo "layers: every include goes down, and only the loop polls ($doc)"
