#!/bin/sh
# Lint of the manual (make lint): mandoc -Tlint at warning level, then two
# mistakes mandoc takes for intended and renders wrong without a word:
#
# - A double quote meant to be seen on a macro line.  mdoc takes a " that
#   begins an argument for the start of a quoted argument and drops it,
#   so `.Ql {"query": "read a file"}` shows {"query": read a file}, while
#   one inside a word is kept.  So that no one has to know which is
#   which, on a macro line a " only groups an argument ("two words"), at
#   its start and end; a quote meant to be seen is written \(dq (or the
#   text goes in a display, whose text lines keep their quotes).
# - Two of the quoting macros Ql, Dq, Sq and Qq on one line: the second
#   is nested inside the first, which encloses the rest of the line, so
#   `.Pq Ql a , Ql b` shows (`a, `b'').
#
# usage: tests/manlint.sh PAGE...
set -u
cd "$(dirname "$0")/.." || exit 1

if [ $# -eq 0 ]; then
	echo "usage: tests/manlint.sh PAGE..." >&2
	exit 2
fi
if ! command -v mandoc >/dev/null 2>&1; then
	echo "manlint: mandoc not found (Debian: apt-get install mandoc)" >&2
	exit 1
fi
status=0
for page in "$@"; do
	if out=$(mandoc -Tlint -Wwarning "$page" 2>&1) && [ -z "$out" ]; then
		echo "manlint: $page: mandoc -Tlint -Wwarning: clean"
	else
		printf '%s\n' "$out"
		echo "manlint: $page: mandoc -Tlint -Wwarning: findings"
		status=1
	fi
	# One macro line's arguments, read as mdoc reads them: a quoted
	# argument runs to the next lone ", and "" inside it is a literal
	# quote; an unquoted one to the next blank; \" starts a comment.
	if awk -v page="$page" '
	function flag(why) {
		if (flagged == NR)
			return
		flagged = NR
		printf "%s:%d: %s: %s\n", page, NR, why, $0
		bad++
	}
	/^[.'"'"']/ && !/^[.'"'"'][ \t]*\\"/ {
		s = substr($0, 2)
		n = length(s)
		i = 1
		quoting = 0
		while (i <= n) {
			while (i <= n && substr(s, i, 1) ~ /[ \t]/)
				i++
			if (i > n)
				break
			arg = ""
			if (substr(s, i, 1) == "\"") {
				for (i++; i <= n; i++) {
					c = substr(s, i, 1)
					if (c == "\\") {
						arg = arg substr(s, i, 2)
						i++
					} else if (c == "\"" &&
					    substr(s, i + 1, 1) == "\"") {
						flag("a literal \"\" in a quoted macro argument (write \\(dq)")
						i++
					} else if (c == "\"") {
						i++
						if (i <= n && substr(s, i, 1) !~ /[ \t]/)
							flag("text right after a closing \" is an argument of its own (write \\(dq)")
						break
					} else
						arg = arg c
				}
			} else {
				for (; i <= n; i++) {
					c = substr(s, i, 1)
					if (c ~ /[ \t]/)
						break
					if (c == "\\" && substr(s, i + 1, 1) == "\"") {
						i = n + 1
						break
					}
					if (c == "\\") {
						arg = arg substr(s, i, 2)
						i++
					} else {
						if (c == "\"")
							flag("a \" inside a macro argument (write \\(dq: on a macro line a \" only groups an argument)")
						arg = arg c
					}
				}
				if (arg ~ /^(Ql|Dq|Sq|Qq)$/ && quoting++ == 1)
					flag("a second " arg " on one line nests inside the first (one per line)")
			}
		}
	}
	END { exit bad > 0 }' "$page"; then
		echo "manlint: $page: quotes on macro lines: clean"
	else
		echo "manlint: $page: quotes on macro lines: findings"
		status=1
	fi
done
exit "$status"
