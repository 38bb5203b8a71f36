#!/bin/sh
# bench/profile.sh: where mcp-workbench's instructions go, with callgrind.
#
#	sh bench/profile.sh
#
# Three scenarios, each with the workbench under valgrind --tool=callgrind
# driven by bench/loadgen against bench/echo-server:
#	calls	use_tool echo calls, 16 in flight: instructions per call (the
#		difference of two runs, so start-up cost cancels out)
#	result	1 MB results: instructions per byte of result
#	tools	open_toolbox of one server with 10,000 tools
# For each, the functions with the most instructions of their own.
# Instruction counts do not include the kernel (pipes, page faults): use
# `perf stat -e page-faults,task-clock` for those.
#
# Environment: WORKBENCH (default ./mcp-workbench), CC, BENCH_KEEP=1.
set -eu

cd "$(dirname "$0")/.."
ROOT=$(pwd)
CC=${CC:-cc}
BFLAGS="-std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -DJSMN_PARENT_LINKS -DJSMN_STRICT"
WB=${WORKBENCH:-$ROOT/mcp-workbench}
T=$(mktemp -d "${TMPDIR:-/tmp}/wb-profile.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'echo "profile: files kept in $T" >&2' EXIT
else
	trap 'rm -rf "$T"' EXIT
fi
trap 'exit 1' HUP INT TERM PIPE

command -v valgrind >/dev/null || {
	echo "profile: valgrind is needed (apt-get install valgrind)" >&2
	exit 1
}
[ -x "$WB" ] || make -s mcp-workbench >&2
$CC $BFLAGS -o "$T/echo-server" bench/echo-server.c
$CC $BFLAGS -o "$T/loadgen" bench/loadgen.c

printf '{"toolboxes":{"bench":{"description":"b","mcpServers":{"s0":{"command":"%s"}}}}}\n' \
    "$T/echo-server" >"$T/c1.json"
printf '{"toolboxes":{"bench":{"description":"b","mcpServers":{"s0":{"command":"%s","args":["--tools","10000"]}}}}}\n' \
    "$T/echo-server" >"$T/big.json"

# run NAME CONFIG LOADGEN-ARGS...: one loadgen run of the workbench under
# callgrind; prints the total instruction count.
run() {
	_name=$1
	_cfg=$2
	shift 2
	"$T/loadgen" -e "$T/stderr.log" -w "$@" -- valgrind --tool=callgrind \
	    --callgrind-out-file="$T/$_name.cg" "$WB" -c "$_cfg" >/dev/null
	callgrind_annotate "$T/$_name.cg" 2>/dev/null |
	    awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1; exit }'
}

# top NAME: the 12 functions with most instructions of their own.
top() {
	callgrind_annotate "$T/$1.cg" 2>/dev/null | awk '
		/file:function/ { on = 1; getline; next }
		on && NF == 0 { exit }
		on && n++ < 12 {
			pct = $0
			sub(/^[^(]*\(/, "", pct)
			sub(/%\).*/, "", pct)
			gsub(/ /, "", pct)
			fn = $0
			sub(/^[^)]*\)[ ]+/, "", fn)
			sub(/ \[.*$/, "", fn)
			sub(/.*\//, "", fn)
			printf "    %6s%%  %s\n", pct, fn
		}'
}

echo "profile: use_tool calls (16 in flight)" >&2
a=$(run calls1 "$T/c1.json" -k 16 -n 2000 -W 0 rate)
b=$(run calls2 "$T/c1.json" -k 16 -n 12000 -W 0 rate)
echo "use_tool call: $(( (b - a) / 10000 )) instructions per call in the workbench"
top calls2
echo
echo "profile: 1 MB results" >&2
a=$(run res1 "$T/c1.json" -z 1000000 -n 1 blob)
b=$(run res2 "$T/c1.json" -z 1000000 -n 6 blob)
echo "1 MB result: $(( (b - a) / 5000000 )) instructions per byte in the workbench"
top res2
echo
echo "profile: open_toolbox of 10,000 tools" >&2
a=$(run tools "$T/big.json" -r 1 open)
echo "open_toolbox, 10000 tools: $a instructions in the workbench" \
    "(one open; start-up included)"
top tools
