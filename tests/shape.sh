#!/bin/sh
# tests/shape.sh: the product's shape stays readable (make lint): no
# source file over 1,000 lines, no header over 300, no function over 70
# lines and at most 3 over 50.  A function is counted from its opening
# brace in the first column to its closing one (the house style, style(9)).
set -eu

cd "$(dirname "$0")/.."
status=0
for f in *.c *.h; do
	n=$(wc -l < "$f")
	case $f in
	*.c) max=1000 ;;
	*.h) max=300 ;;
	esac
	if [ "$n" -gt "$max" ]; then
		echo "shape: $f has $n lines, more than $max" >&2
		status=1
	fi
done
long=$(awk '/^\{/ { start = FNR; name = prev }
    /^\}/ && start { n = FNR - start - 1; if (n > 50) print n, FILENAME ": " name; start = 0 }
    { prev = $0 }' *.c | sort -rn)
over70=$(printf '%s\n' "$long" | awk '$1 > 70' | grep -c . || true)
over50=$(printf '%s\n' "$long" | grep -c . || true)
if [ "$over70" -gt 0 ] || [ "$over50" -gt 3 ]; then
	echo "shape: functions over 50 lines (at most 3, none over 70):" >&2
	printf '%s\n' "$long" >&2
	status=1
fi
[ $status -eq 0 ] && echo "shape: no file or function past its bound ($over50 function(s) over 50 lines)"
exit $status
