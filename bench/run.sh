#!/bin/sh
# bench/run.sh: mcp-workbench's benchmark suite (run by `make bench`).
#
# Builds bench/echo-server, bench/loadgen and bench/null-relay, writes
# temporary configs, measures every figure twice in the same run, directly
# against the echo server and through the workbench, and prints a table on
# stdout followed by one machine-readable line per figure:
#
#	BENCH name=N direct=D workbench=W unit=U ratio=W/D target=T met=M
#
# (values "n/a" when not measured, met "yes", "NO" or "-" for no target).
# Baselines are measured in the same rounds as well: latency with every
# process pinned to one CPU (needs taskset), and throughput through byte
# relays that parse nothing (bench/null-relay): one per server, and one
# single-threaded relay for all the servers; see the notes printed.
#
# Environment:
#	BENCH_QUICK=1	a ~30 s run with smaller counts
#	BENCH_CALLS=N	calls before the "after N calls" RSS (default 1000000,
#			100000 when quick)
#	WORKBENCH=PATH	the binary to measure (default ./mcp-workbench)
#	CC, BENCH_TMP	compiler; scratch directory (default: mktemp -d)
#	BENCH_KEEP=1	keep the scratch directory (configs, stderr log)
set -eu

cd "$(dirname "$0")/.."
ROOT=$(pwd)
CC=${CC:-cc}
BFLAGS="-std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -DJSMN_PARENT_LINKS -DJSMN_STRICT"
QUICK=${BENCH_QUICK:-0}
WB_SRC=${WORKBENCH:-$ROOT/mcp-workbench}
T=${BENCH_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/wb-bench.XXXXXX")}
mkdir -p "$T"
LOG=$T/stderr.log
: >"$LOG"

cleanup() {
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench: scratch files kept in $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM PIPE

say() { printf 'bench: %s\n' "$*" >&2; }

# Counts: full run, or quick.
if [ "$QUICK" = 1 ]; then
	ROUNDS=2
	INIT_RUNS=20; LAT_N=10000; RATE_N=100000; RATE1_N=20000
	BLOB1_N=20; BLOB16_N=4; OPEN_RUNS=5; OPEN100_RUNS=2; SLOW_RUNS=2
	BIG_RUNS=2; SHUT_RUNS=5; CALLS=${BENCH_CALLS:-100000}
else
	ROUNDS=3
	INIT_RUNS=100; LAT_N=100000; RATE_N=1000000; RATE1_N=100000
	BLOB1_N=100; BLOB16_N=20; OPEN_RUNS=30; OPEN100_RUNS=10; SLOW_RUNS=5
	BIG_RUNS=5; SHUT_RUNS=30; CALLS=${BENCH_CALLS:-1000000}
fi
SLOW_MS=50	# init delay of the "slow server" toolbox
BIG_TOOLS=10000

# Build.  The workbench is copied so that a rebuild during the run does
# not change what is measured.
if [ ! -x "$WB_SRC" ]; then
	say "building mcp-workbench"
	make -s mcp-workbench >&2
fi
say "building bench/echo-server, bench/loadgen and bench/null-relay in $T"
$CC $BFLAGS -o "$T/echo-server" bench/echo-server.c
$CC $BFLAGS -o "$T/loadgen" bench/loadgen.c
$CC $BFLAGS -o "$T/null-relay" bench/null-relay.c
$CC $BFLAGS -o "$T/http-rtt" bench/http-rtt.c
$CC $BFLAGS -o "$T/http-load" bench/http-load.c
$CC $BFLAGS -o "$T/http-floor" bench/http-floor.c
cp "$WB_SRC" "$T/mcp-workbench"
ECHO=$T/echo-server
LG=$T/loadgen
RELAY=$T/null-relay
WB=$T/mcp-workbench

# Configs: toolbox "bench" with servers s0 .. s{N-1}.
# config FILE N [extra top-level members] [server args as a JSON array]
config() {
	awk -v n="$2" -v top="${3:-}" -v args="${4:-}" -v cmd="$ECHO" 'BEGIN {
		printf "{%s\"toolboxes\":{\"bench\":{\"description\":" \
		    "\"benchmark\",\"mcpServers\":{", top
		for (i = 0; i < n; i++) {
			printf "%s\"s%d\":{\"command\":\"%s\"", i ? "," : "", \
			    i, cmd
			if (args != "")
				printf ",\"args\":%s", args
			printf "}"
		}
		print "}}}}"
	}' >"$1"
}
# Opens are measured without the tool catalogue ("cache":false), but for
# the figures of opening from it, in a catalogue of this run's own.
export XDG_CACHE_HOME="$T/cache"
NOCAT='"cache":false,'
for n in 1 4 8 10 100; do
	config "$T/c$n.json" "$n" "$NOCAT"
done
config "$T/slow.json" 10 "$NOCAT" "[\"--init-delay\",\"$SLOW_MS\"]"
config "$T/big.json" 1 "$NOCAT" "[\"--tools\",\"$BIG_TOOLS\"]"
config "$T/bigsdk.json" 1 "$NOCAT" \
    "[\"--tools\",\"$BIG_TOOLS\",\"--id-last\"]"
config "$T/bigdyn.json" 1 "$NOCAT\"toolMode\":\"dynamic\"," \
    "[\"--tools\",\"$BIG_TOOLS\"]"
config "$T/cat.json" 1 "" "[\"--tools\",\"98\"]"
config "$T/bigcat.json" 1 "" "[\"--tools\",\"$BIG_TOOLS\"]"

# lg ARGS...: one loadgen run; prints its RESULT line (or an error line).
# With $PIN set (taskset -c CPU) the loadgen and every process it starts
# run on that one CPU: children inherit the affinity.
PIN=
lg() {
	# shellcheck disable=SC2086
	$PIN "$LG" -e "$LOG" "$@" 2>>"$LOG" || true
}
# direct ARGS...: against the echo server (with $EARGS, split on purpose).
EARGS=
direct() {
	# shellcheck disable=SC2086
	lg "$@" -- "$ECHO" $EARGS
}
# relayed ARGS...: direct, but through bench/null-relay, one per server.
relayed() {
	# shellcheck disable=SC2086
	lg "$@" -- "$RELAY" "$ECHO" $EARGS
}
# muxed -S N ARGS...: through one bench/null-relay for all N servers.
muxed() {
	_s=$2
	shift 2
	# shellcheck disable=SC2086
	lg "$@" -- "$RELAY" -n "$_s" "$ECHO" $EARGS
}
# through CONFIG ARGS...
through() {
	_c=$1
	shift
	lg -w "$@" -- "$WB" -c "$_c"
}
# val KEY LINE: a value from a RESULT line, or n/a.
val() {
	_v=$(printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1)
	case $2 in *error=*) _v= ;; esac
	printf '%s' "${_v:-n/a}"
}
FAILS=0
err() {
	case $1 in
	*error=*|'')
		say "FAILED: ${1:-loadgen printed nothing}"
		FAILS=$((FAILS + 1))
		;;
	esac
}
# better KEY min|max OLD NEW: the RESULT line with the better KEY.
better() {
	if [ -z "$3" ] || ! isnum "$(val "$1" "$3")"; then
		printf '%s' "$4"
	elif ! isnum "$(val "$1" "$4")"; then
		printf '%s' "$3"
	elif [ "$(awk -v a="$(val "$1" "$3")" -v b="$(val "$1" "$4")" \
	    -v m="$2" 'BEGIN { print (m == "min" ? b < a : b > a) }')" = 1 ]
	then
		printf '%s' "$4"
	else
		printf '%s' "$3"
	fi
}
# pair KEY min|max CONFIG ARGS...: $ROUNDS rounds, each running the
# direct measurement and then the same one through the workbench, so that
# both see the same machine; r1 and r2 are the best rounds by KEY.
# Other work on the machine only ever makes a figure worse, so the best of
# a few rounds is the one least disturbed.  With TRIPLE=1 each round also
# runs it through the byte relays, between the two: r3 is the best round
# with one relay per server, r4 with one for all (ARGS then start -S N).
TRIPLE=0
pair() {
	_key=$1 _how=$2 _cfg=$3
	shift 3
	r1= r2= r3= r4= _i=0
	while [ "$_i" -lt "$ROUNDS" ]; do
		_a=$(direct "$@"); err "$_a"
		r1=$(better "$_key" "$_how" "$r1" "$_a")
		if [ "$TRIPLE" = 1 ]; then
			_c=$(relayed "$@"); err "$_c"
			r3=$(better "$_key" "$_how" "$r3" "$_c")
			if [ "$1" = -S ] && [ "$2" -gt 1 ]; then
				_c=$(muxed "$@"); err "$_c"
				r4=$(better "$_key" "$_how" "$r4" "$_c")
			fi
		fi
		_b=$(through "$_cfg" "$@"); err "$_b"
		r2=$(better "$_key" "$_how" "$r2" "$_b")
		_i=$((_i + 1))
	done
}
calc() { awk "BEGIN { printf \"%.6g\", ($1) }"; }
isnum() { case $1 in ''|n/a|*[!0-9.e+-]*) return 1 ;; esac; }
# check EXPR (using d and w): yes, NO, or - when a value is missing.
check() {
	if isnum "$D" && isnum "$W"; then
		awk -v d="$D" -v w="$W" "BEGIN { print (($1) ? \"yes\" : \"NO\") }"
	elif isnum "$W" && [ "$2" = w ]; then
		awk -v w="$W" "BEGIN { print (($1) ? \"yes\" : \"NO\") }"
	else
		echo -
	fi
}

ROWS=$T/rows
: >"$ROWS"
# row NAME LABEL UNIT TARGET MET  (uses $D and $W)
row() {
	if isnum "$D" && isnum "$W" && [ "$(calc "$D != 0")" = 1 ]; then
		_r=$(calc "$W / $D")
	else
		_r=n/a
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$D" "$W" "$3" \
	    "$_r" "$4" "$5" >>"$ROWS"
}

START=$(date +%s)
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
LOAD0=${LOADAVG%% *}

# 1. Start: spawn to initialize answered.
say "initialize after spawn ($INIT_RUNS runs each)"
pair median_us min "$T/c1.json" -r "$INIT_RUNS" init
D=$(val median_us "$r1"); W=$(val median_us "$r2")
isnum "$D" && D=$(calc "$D / 1000"); isnum "$W" && W=$(calc "$W / 1000")
row init "initialize answered after spawn, median" ms "< 2 ms" \
    "$(check 'w < 2' w)"
D=$(val min_us "$r1"); W=$(val min_us "$r2")
isnum "$D" && D=$(calc "$D / 1000"); isnum "$W" && W=$(calc "$W / 1000")
row init_min "initialize answered after spawn, fastest" ms "< 2 ms" \
    "$(check 'w < 2' w)"
RSS_IDLE_D=$(val hwm_kb "$r1")
RSS_IDLE_W=$(val hwm_kb "$r2")

# 2. Sequential latency.
say "sequential echo calls ($LAT_N)"
pair p50_us min "$T/c1.json" -n "$LAT_N" lat
D=$(val p50_us "$r1"); W=$(val p50_us "$r2")
row lat_p50 "call latency p50 (sequential)" us "-" -
P50D=$D; P50W=$W
D=$(val p99_us "$r1"); W=$(val p99_us "$r2")
row lat_p99 "call latency p99 (sequential)" us "-" -
D=$P50D; W=$P50W
if isnum "$D" && isnum "$W"; then W=$(calc "$W - $D"); D=0; fi
# Informational: unpinned, the figure is mostly where the scheduler put
# the processes (see the notes), so the target is on the pinned row.
row lat_added_p50 "added latency per call, p50" us "-" -

# 2b. The same, every process pinned to one CPU (the first one we may use).
CPU0=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status |
    sed 's/[-,].*//')
if command -v taskset >/dev/null 2>&1 && [ -n "$CPU0" ] &&
    taskset -c "$CPU0" true 2>/dev/null; then
	say "sequential echo calls ($LAT_N), pinned to CPU $CPU0"
	PIN="taskset -c $CPU0"
	pair p50_us min "$T/c1.json" -n "$LAT_N" lat
	# A modern client against a 2025 one, through the workbench, in
	# alternate runs of the same rounds.
	say "sequential use_tool calls: 2026-07-28 client against 2025, pinned"
	r5= r6= _i=0
	while [ "$_i" -lt "$ROUNDS" ]; do
		_a=$(through "$T/c1.json" -n "$LAT_N" lat); err "$_a"
		r5=$(better p50_us min "$r5" "$_a")
		_a=$(through "$T/c1.json" -M -n "$LAT_N" lat); err "$_a"
		r6=$(better p50_us min "$r6" "$_a")
		_i=$((_i + 1))
	done
	PIN=
	D=$(val p50_us "$r1"); W=$(val p50_us "$r2")
else
	say "taskset not available: no pinned latency"
	r1='' r2='' r5='' r6='' D=n/a W=n/a
fi
row lat_pinned_p50 "call latency p50 (sequential, one CPU)" us "-" -
P50D=$D; P50W=$W
D=n/a; W=n/a
[ -n "$r1" ] && { D=$(val p99_us "$r1"); W=$(val p99_us "$r2"); }
row lat_pinned_p99 "call latency p99 (sequential, one CPU)" us "-" -
D=$P50D; W=$P50W
if isnum "$D" && isnum "$W"; then W=$(calc "$W - $D"); D=0; fi
row lat_added_pinned_p50 "added latency per call, p50, one CPU" us \
    "< 10 us" "$(check 'w < 10' w)"
D=$(val p50_us "$r5"); W=$(val p50_us "$r6")
row lat_modern_pinned "2026-07-28 client: latency p50 (d: 2025 client)" us \
    "< d + 1 us" "$(check 'w - d < 1')"

# 3. Calls per second, 1/16/256 in flight over 1 and 8 servers.
for s in 1 8; do
	for k in 1 16 256; do
		n=$RATE_N
		[ "$k" = 1 ] && n=$RATE1_N
		say "calls/s: $k in flight over $s server(s) ($n calls)"
		[ "$k" = 256 ] && TRIPLE=1
		pair rate max "$T/c$s.json" -S "$s" -k "$k" -n "$n" rate
		TRIPLE=0
		D=$(val rate "$r1"); W=$(val rate "$r2")
		if [ "$k" = 256 ]; then
			row "rate_${s}s_${k}k" "calls/s, $k in flight, $s server(s)" \
			    calls/s ">= 0.90x direct" "$(check 'w >= 0.9 * d')"
			# The baseline: a relay that parses nothing.
			W=$(val rate "$r3")
			row "rate_${s}s_${k}k_relay" \
			    "  same, byte relay per server (w) vs direct" \
			    calls/s "-" -
			D=$W; W=$(val rate "$r2")
			row "rate_${s}s_${k}k_vs_relay" \
			    "  same, workbench vs byte relay (d)" calls/s "-" -
			# What a single-threaded proxy gets for the least
			# work: one relay for all the servers.
			if [ "$s" -gt 1 ]; then
				D=$(val rate "$r1"); W=$(val rate "$r4")
				row "rate_${s}s_${k}k_mux" \
				    "  same, one byte relay for all (w) vs direct" \
				    calls/s "-" -
				D=$W; W=$(val rate "$r2")
				row "rate_${s}s_${k}k_vs_mux" \
				    "  same, workbench vs one relay for all (d)" \
				    calls/s "-" -
			fi
		else
			row "rate_${s}s_${k}k" "calls/s, $k in flight, $s server(s)" \
			    calls/s "-" -
		fi
		if [ "$k" = 256 ]; then
			eval "CPU_$s=\"\$r1|\$r2\""
		fi
	done
done
for s in 1 8; do
	eval "_p=\$CPU_$s"
	r1=${_p%%|*}; r2=${_p#*|}
	D=$(val cpu_servers_us "$r1"); W=$(val cpu_proxy_us "$r2")
	row "cpu_per_call_${s}s" "CPU/call at 256 in flight, $s srv: server vs wb" \
	    us "-" -
done
r1=${CPU_1%%|*}; r2=${CPU_1#*|}
D=$(val cpu_loadgen_us "$r1"); W=$(val cpu_loadgen_us "$r2")
row cpu_client "CPU/call at 256 in flight: load generator" us "-" -

# 4. Large results.
for size in 1000000 16000000; do
	n=$BLOB1_N
	name=1mb
	[ "$size" = 16000000 ] && { n=$BLOB16_N; name=16mb; }
	say "result of $size bytes ($n calls)"
	pair median_ms min "$T/c1.json" -z "$size" -n "$n" blob
	D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
	if [ "$name" = 16mb ]; then
		row "result_${name}_time" "result of $size bytes: time per call" \
		    ms "<= 1.2x direct" "$(check 'w <= 1.2 * d')"
	else
		row "result_${name}_time" "result of $size bytes: time per call" \
		    ms "-" -
	fi
	D=$(val mbps "$r1"); W=$(val mbps "$r2")
	row "result_${name}_rate" "result of $size bytes: throughput" MB/s \
	    "-" -
	if [ "$name" = 16mb ]; then
		D=$(calc "$size / 1024"); W=$(val hwm_kb "$r2")
		row result_16mb_mem "peak RSS passing 16 MB (direct: msg size)" \
		    KB "<= 3x message" "$(check 'w <= 3 * d')"
	fi
done

# 5. open_toolbox: 1, 10, 100 servers; 10 slow servers.
for s in 1 10 100; do
	runs=$OPEN_RUNS
	[ "$s" = 100 ] && runs=$OPEN100_RUNS
	say "open_toolbox of $s server(s) ($runs runs)"
	pair median_ms min "$T/c$s.json" -S "$s" -r "$runs" open
	D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
	if [ "$s" = 1 ]; then
		LIST_BYTES=$(val bytes "$r1")
		row open_1 "open_toolbox, 1 server (direct: start it)" ms "-" -
	else
		# Fast servers: the cost is starting processes, so the fair
		# reference is the load generator starting the same servers
		# concurrently itself.  The slow-server row below is the
		# direct test of "grows with the slowest, not the sum".
		row "open_$s" "open_toolbox, $s servers (direct: in parallel)" \
		    ms "<= 1.25x direct" "$(check 'w <= 1.25 * d')"
	fi
	[ "$s" = 100 ] && RSS100=$(val hwm_kb "$r2")
done
say "open_toolbox of 10 servers answering initialize after $SLOW_MS ms"
EARGS="--init-delay $SLOW_MS"
pair median_ms min "$T/slow.json" -S 10 -r "$SLOW_RUNS" open
EARGS=
D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
# Started one after the other they would take 10 x SLOW_MS.
row open_10_slow "open_toolbox, 10 servers x $SLOW_MS ms init (d: parallel)" \
    ms "< 2x direct" "$(check 'w < 2 * d')"

# 6. Memory.
say "peak RSS with 4 servers open"
r4=$(through "$T/c4.json" -S 4 -r 3 open); err "$r4"
RSS4=$(val hwm_kb "$r4")
D=$RSS_IDLE_D; W=$RSS_IDLE_W
row rss_idle "peak RSS idle after initialize (d: echo server)" KB "-" -
D=n/a; W=$RSS4
row rss_4 "peak RSS, toolbox of 4 servers open" KB "< 2048 KB" \
    "$(check 'w < 2048' w)"
D=n/a; W=${RSS100:-n/a}
row rss_100 "peak RSS, toolbox of 100 servers open" KB "-" -
W=n/a
if isnum "${RSS100:-}" && isnum "$RSS4"; then
	W=$(calc "($RSS100 - $RSS4) / 96")
fi
LIM=64
isnum "${LIST_BYTES:-}" &&
    LIM=$(awk -v b="$LIST_BYTES" 'BEGIN { printf "%.1f", 64 + b / 1024 }')
row rss_per_server "peak RSS per extra open server" KB "< $LIM KB" \
    "$(check "w < $LIM" w)"
say "RSS after $CALLS calls (16 in flight)"
r2=$(through "$T/c1.json" -k 16 -n "$CALLS" -W 10000 rate); err "$r2"
W=$(val hwm_kb "$r2")
row rss_calls "peak RSS after $CALLS calls" KB "-" -
W=n/a
if isnum "$(val rss_kb "$r2")" && isnum "$(val rss_warm_kb "$r2")"; then
	W=$(calc "$(val rss_kb "$r2") - $(val rss_warm_kb "$r2")")
fi
row rss_growth "RSS growth over those calls (leak check)" KB "-" -

# 7. 10,000 tools.
say "$BIG_TOOLS tools: open_toolbox and dynamic tools/list ($BIG_RUNS runs)"
EARGS="--tools $BIG_TOOLS"
pair median_ms min "$T/big.json" -r "$BIG_RUNS" open
D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
OPEN_D=$D
row open_10k "open_toolbox, $BIG_TOOLS tools (direct: start+list)" ms \
    "<= 2x direct" "$(check 'w <= 2 * d')"
BIG_LIST=$(val bytes "$r1")
BIG_ANSWER=$(val bytes "$r2")
D=n/a; isnum "$BIG_LIST" && D=$(calc "$BIG_LIST / 1024")
LIST_KB=$D
W=$(val hwm_kb "$r2")
row open_10k_mem "peak RSS, $BIG_TOOLS tools open (d: list size)" KB \
    "<= 3x list" "$(check 'w <= 3 * d')"
# What the answer's size alone costs the client (the list as text and as
# structuredContent): as many bytes, straight from a running echo server.
if isnum "$BIG_ANSWER"; then
	_b=$(direct -z "$BIG_ANSWER" -n "$BLOB16_N" blob); err "$_b"
	W=$(val median_ms "$_b")
else
	W=n/a
fi
D=$OPEN_D
row open_10k_bytes "  receiving the answer's bytes alone, direct (d: start+list)" \
    ms "-" -
# The same toolbox from a server that writes a page's id last, as the
# TypeScript SDK does.
EARGS="--tools $BIG_TOOLS --id-last"
pair median_ms min "$T/bigsdk.json" -r "$BIG_RUNS" open
D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
row open_10k_idlast "  the same, the server's id last (d: start+list)" ms \
    "<= 2x direct" "$(check 'w <= 2 * d')"
D=$LIST_KB; W=$(val hwm_kb "$r2")
row open_10k_idlast_mem "  its peak RSS (d: list size)" KB "<= 3x list" \
    "$(check 'w <= 3 * d')"
EARGS="--tools $BIG_TOOLS"
pair median_ms min "$T/bigdyn.json" -r "$BIG_RUNS" list
EARGS=
DYN_NOTE=
if isnum "$(val tools "$r2")" && [ "$(val tools "$r2")" -gt 2 ]; then
	D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
	row list_10k_dyn "tools/list, dynamic, $BIG_TOOLS tools" ms "-" -
	D=$(calc "$(val bytes "$r1") / 1024"); W=$(val hwm_kb "$r2")
	row list_10k_dyn_mem "peak RSS after it (d: server's list size)" KB \
	    "-" -
else
	DYN_NOTE="dynamic mode not available in this build: tools/list listed $(val tools "$r2") tools"
	D=n/a; W=n/a
	row list_10k_dyn "tools/list, dynamic, $BIG_TOOLS tools" ms "-" -
	row list_10k_dyn_mem "peak RSS after it" KB "-" -
fi

# 8. The tool catalogue: open_toolbox answered from it (its first,
# untimed, run fills it) against starting the server and listing directly;
# search_tools over every tool of a big toolbox.
say "open_toolbox of 100 tools from the catalogue ($OPEN_RUNS runs)"
EARGS="--tools 98"
pair median_ms min "$T/cat.json" -r "$OPEN_RUNS" open
EARGS=
D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
row open_cat "open_toolbox, 100 tools, catalogue (d: start+list)" ms \
    "< 1 ms" "$(check 'w < 1' w)"
say "search_tools over $BIG_TOOLS tools ($BIG_RUNS runs)"
r2=$(through "$T/bigcat.json" -r "$BIG_RUNS" search); err "$r2"
D=n/a; W=$(val median_ms "$r2")
row search_10k "search_tools over $BIG_TOOLS tools" ms "< 5 ms" \
    "$(check 'w < 5' w)"
W=$(val first_ms "$r2")
row search_10k_first "  the first search (terms of every tool made)" ms \
    "-" -

# 8b. The HTTP layer alone: a small POST's round trip on one keep-alive connection through tests/http-echo, against the
# same echo over a pipe (bench/http-rtt); the best p50 of the rounds each.
if [ -x "$ROOT/tests/http-echo" ]; then
	say "HTTP keep-alive round trip vs a pipe, http-echo ($LAT_N)"
	D= W= _i=0
	while [ "$_i" -lt "$ROUNDS" ]; do
		_l=$("$T/http-rtt" "$ROOT/tests/http-echo" "$LAT_N" |
		    grep '^BENCH') || { err ""; break; }
		_d=$(printf '%s' "$_l" | sed 's/.* direct=\([^ ]*\).*/\1/')
		_w=$(printf '%s' "$_l" | sed 's/.* workbench=\([^ ]*\).*/\1/')
		if [ -z "$D" ] || [ "$(calc "$_d < $D")" = 1 ]; then D=$_d; fi
		if [ -z "$W" ] || [ "$(calc "$_w < $W")" = 1 ]; then W=$_w; fi
		_i=$((_i + 1))
	done
	# The issue's 1.5x is for a whole call through the workbench, whose
	# stdio figure holds a server's hop too: no target for the echo.
	row http_rtt "HTTP keep-alive call p50 vs pipe (echo)" us - -
fi

# 8c. The workbench serving HTTP (--listen) against itself on stdio, with
# the same use_tool call, in the same rounds (bench/http-load): the best
# of the rounds each.
# hl TEST N KEY min|max [FLOOR]: the best RESULT of $ROUNDS runs by KEY.
hl() {
	_best= _i=0
	while [ "$_i" -lt "$ROUNDS" ]; do
		# shellcheck disable=SC2086
		_l=$("$T/http-load" "$WB" "$T/c1.json" "$1" "$2" ${5:-} 2>>"$LOG" |
		    grep '^RESULT') || _l=
		err "$_l"
		_best=$(better "$3" "$4" "$_best" "$_l")
		_i=$((_i + 1))
	done
	printf '%s' "$_best"
}
say "use_tool over HTTP keep-alive vs stdio, sequential ($LAT_N)"
_hr=$(hl lat "$LAT_N" http min)
D=$(val stdio "$_hr"); W=$(val http "$_hr")
row http_call_p50 "use_tool p50: stdio (d) vs HTTP keep-alive (w)" us \
    "<= 1.5x stdio" "$(check 'w <= 1.5 * d')"
say "32 calls in flight: one stdio session vs 4 HTTP sessions x 8 ($RATE1_N)"
# The same HTTP load on bench/http-floor, a poll loop that answers each
# POST from a constant (one read and one send a call, nothing else): the
# most calls per second any single-threaded HTTP/1.1 server gets here.
_hr=$(hl rate "$RATE1_N" http max "$T/http-floor")
D=$(val stdio "$_hr"); W=$(val http "$_hr")
row http_rate_32 "32 in flight: stdio (d) vs 4 HTTP sessions x 8 (w)" \
    calls/s ">= 0.80x stdio" "$(check 'w >= 0.8 * d')"
W=$(val floor "$_hr")
row http_rate_floor "  the same load on a bare HTTP loop (w) vs stdio (d)" \
    calls/s - -
D=$W; W=$(val http "$_hr")
row http_rate_bare "  the workbench (w) vs that bare HTTP loop (d)" calls/s \
    - -
D=$(val stdio_cpu_us "$_hr"); W=$(val http_cpu_us "$_hr")
row http_cpu_call "  the workbench's CPU per call, stdio (d), HTTP (w)" us - -
D=$(val floor_cpu_us "$_hr"); W=$(val http_cpu_us "$_hr")
row http_cpu_bare "  the same, the bare loop (d) and the workbench (w)" us \
    - -
say "RSS with 50 idle HTTP sessions vs one stdio session"
_hr=$(hl rss 1 http min)
D=$(val stdio "$_hr"); W=$(val http "$_hr")
row http_rss_50 "RSS, toolbox open: stdio (d), 50 idle HTTP sessions (w)" \
    KB "< d + 2048 KB" "$(check 'w < d + 2048')"

# 9. Binary size and shutdown.
strip -o "$T/wb.stripped" "$WB"
D=n/a; W=$(calc "$(wc -c <"$T/wb.stripped") / 1024")
row binary "binary size, stripped" KB "< 150 KB" "$(check 'w < 150' w)"
say "shutdown on stdin EOF ($SHUT_RUNS runs)"
pair median_ms min "$T/c4.json" -S 4 -r "$SHUT_RUNS" shutdown
D=$(val median_ms "$r1"); W=$(val median_ms "$r2")
row shutdown "shutdown after stdin EOF, 4 servers open" ms "< 50 ms" \
    "$(check 'w < 50' w)"
# The same as a client measures it: the SDK client's close(), 4 servers
# open, against its close() of one server directly (bench/close.mjs; needs
# the test suite's node_modules: make tests/node_modules).
if command -v node >/dev/null 2>&1 &&
    [ -d "$ROOT/tests/node_modules/@modelcontextprotocol/sdk" ]; then
	say "the SDK client's close(), 4 servers open ($SHUT_RUNS runs)"
	_l=$(node "$ROOT/bench/close.mjs" "$WB" "$SHUT_RUNS" -- "$ECHO" $EARGS |
	    grep '^BENCH') || err ""
	D=$(printf '%s' "$_l" | sed -n 's/.* direct=\([^ ]*\).*/\1/p')
	W=$(printf '%s' "$_l" | sed -n 's/.* workbench=\([^ ]*\).*/\1/p')
	row sdk_close "SDK client close(), 4 servers open (d: 1 server)" ms \
	    "< 5 ms" "$(check 'w < 5' w)"
fi

# 10. Sharing servers between sessions ("share": true): the same toolbox of
# 4 echo servers as c4.json, each session a front that hands its stdio to
# the shared workbench.  d = unshared, w = shared, in alternate runs.
SHDIR=$T/share
mkdir -m 700 "$SHDIR"
config "$T/sh4.json" 4 "$NOCAT\"share\":true,\"shareDir\":\"$SHDIR\",\"shareLingerMs\":2000,"
# The same shared call with 100 idle sessions attached (loadgen -I: 100
# fronts initialized and left idle for the run; -P: measured once the
# shared workbench has parked them, as it does a session quiet for a
# second): an idle session must cost poll() nothing, never a scan.
say "sharing: sequential calls, unshared, shared, shared with 100 idle" \
    "sessions ($LAT_N)"
r1= r2= r3= _i=0
while [ "$_i" -lt "$ROUNDS" ]; do
	_a=$(through "$T/c4.json" -S 4 -n "$LAT_N" lat); err "$_a"
	r1=$(better p50_us min "$r1" "$_a")
	_a=$(through "$T/sh4.json" -S 4 -n "$LAT_N" lat); err "$_a"
	r2=$(better p50_us min "$r2" "$_a")
	_a=$(through "$T/sh4.json" -S 4 -n "$LAT_N" -I 100 -P lat); err "$_a"
	r3=$(better p50_us min "$r3" "$_a")
	_i=$((_i + 1))
done
D=$(val p50_us "$r1"); W=$(val p50_us "$r2")
row share_lat_p50 "shared: call p50 (d: unshared)" us "<= 1.1x" \
    "$(check 'w <= 1.1 * d')"
D=$W; W=$(val p50_us "$r3")
row share_idle_p50 "shared: call p50, 100 idle sessions (d: none)" us \
    "<= 2x" "$(check 'w <= 2 * d')"
# Throughput: 4 sessions with 32 in flight each, at once, against one
# unshared session with 128: calls of all over the longest's time.  The
# same 4 sessions unshared (4 workbenches, 16 servers) are the same load
# shape without sharing: 4 client processes on the same CPUs.
# rate4 CONFIG: 4 sessions of CONFIG with 32 in flight at once: calls/s;
# the 4 clients' own CPU per call in $T/shrate.lg.
rate4() {
	for _j in 1 2 3 4; do
		through "$1" -S 4 -n "$((RATE_N / 4))" -k 32 rate \
		    >"$T/shrate.$_j" &
	done
	wait
	cat "$T/shrate".[1-4] | awk '{ for (i = 1; i <= NF; i++) {
		split($i, kv, "="); if (kv[1] == "cpu_loadgen_us") l += kv[2] } }
	    END { printf "%.3f", l / 4 }' >"$T/shrate.lg"
	_agg=$(cat "$T/shrate".[1-4] | awk '
	    { for (i = 1; i <= NF; i++) { split($i, kv, "=")
		if (kv[1] == "calls") c += kv[2]
		if (kv[1] == "secs" && kv[2] > s) s = kv[2]
		if (kv[1] == "error") bad = 1 } }
	    END { if (bad || s == 0) print "n/a"; else printf "%.0f", c / s }')
	isnum "$_agg" || err "error=sharing rate"
	printf '%s' "$_agg"
}
# cpu_of PID...: their CPU time so far in us, together (n/a for none).
cpu_of() {
	for _p in "$@"; do cat "/proc/$_p/stat"; done 2>/dev/null |
	    awk -v hz="$(getconf CLK_TCK)" '{ t += $14 + $15 }
		END { if (NR) printf "%.0f", t * 1e6 / hz; else print "n/a" }'
}
# The shared workbench's CPU time so far in us (its pid from --status),
# then its servers'.
shared_cpu() {
	_p=$("$WB" --status --json -c "$T/sh4.json" 2>>"$LOG" |
	    sed -n 's/^{"pid":\([0-9]*\),.*/\1/p')
	[ -n "$_p" ] || return 0
	# shellcheck disable=SC2046
	printf '%s %s' "$(cpu_of "$_p")" \
	    "$(cpu_of $(cat /proc/"$_p"/task/*/children 2>/dev/null))"
}
say "sharing: 4 sessions x 32 in flight against 1 x 128 ($RATE_N calls)"
r1= _best=0 _same=0 _cpu=n/a _scpu=n/a _lcpu=n/a _i=0
while [ "$_i" -lt "$ROUNDS" ]; do
	_a=$(through "$T/c4.json" -S 4 -n "$RATE_N" -k 128 rate); err "$_a"
	r1=$(better rate max "$r1" "$_a")
	# A session first, so that the shared workbench runs (it lingers).
	through "$T/sh4.json" -S 4 -n 1000 -k 32 rate >/dev/null
	_c0=$(shared_cpu)
	_agg=$(rate4 "$T/sh4.json")
	_c1=$(shared_cpu)
	if isnum "$_agg" && [ "$(calc "$_agg > $_best")" = 1 ]; then
		_best=$_agg
		_lcpu=$(cat "$T/shrate.lg")
		read -r _w0 _s0 <<-EOF
		$_c0
		EOF
		read -r _w1 _s1 <<-EOF
		$_c1
		EOF
		isnum "${_w0:-}" && isnum "${_w1:-}" &&
		    _cpu=$(calc "($_w1 - $_w0) / $RATE_N")
		isnum "${_s0:-}" && isnum "${_s1:-}" &&
		    _scpu=$(calc "($_s1 - $_s0) / $RATE_N")
	fi
	_agg=$(rate4 "$T/c4.json")
	if isnum "$_agg" && [ "$(calc "$_agg > $_same")" = 1 ]; then
		_same=$_agg
	fi
	_i=$((_i + 1))
done
D=$(val rate "$r1"); W=$_best
row share_rate "shared: 4 sessions x 32 in flight (d: 1 x 128)" calls/s \
    ">= 0.9x" "$(check 'w >= 0.9 * d')"
D=$_same
row share_rate_shape "  the same 4 sessions unshared (d) vs shared (w)" \
    calls/s - -
D=$(val cpu_proxy_us "$r1"); W=$_cpu
row share_cpu_call "  the workbench's CPU per call: 1 x 128 (d), shared (w)" \
    us - -
# The rest of the CPU a call costs, on the same CPUs: 4 client processes
# cost more a call than one, whatever serves them.
D=$(val cpu_servers_us "$r1"); W=$_scpu
row share_cpu_servers "  the servers' CPU per call: 1 x 128 (d), shared (w)" \
    us - -
D=$(val cpu_loadgen_us "$r1"); W=$_lcpu
row share_cpu_clients "  the clients' CPU per call: 1 client (d), 4 (w)" \
    us - -
# Memory and open_toolbox, as SDK clients see them, with node servers
# (bench/share.mjs; needs the test suite's node_modules).
if command -v node >/dev/null 2>&1 &&
    [ -d "$ROOT/tests/node_modules/@modelcontextprotocol/sdk" ]; then
	say "sharing: 4 SDK sessions with two node servers each"
	_l=$(node "$ROOT/bench/share.mjs" "$WB" "$OPEN_RUNS") || err ""
	_v() { printf '%s\n' "$_l" | sed -n "s/^BENCH $1 .*$2=\([^ ]*\).*/\1/p"; }
	D=$(_v share_rss unshared); W=$(_v share_rss shared)
	isnum "$D" && D=$(calc "$D / 1000"); isnum "$W" && W=$(calc "$W / 1000")
	row share_rss "4 sessions, 2 node servers: total RSS (d: unshared)" \
	    MB "<= 0.35x" "$(check 'w <= 0.35 * d')"
	D=n/a; W=$(_v share_open ms)
	row share_open "shared: open_toolbox, servers running" ms "< 2 ms" \
	    "$(check 'w < 2' w)"
	W=$(_v share_open started)
	row share_open_started "  server processes it started" count "0" \
	    "$(check 'w == 0' w)"
	W=$(_v share_front_rss kb)
	isnum "$W" && W=$(calc "$W / 1000")
	row share_front_rss "a waiting front's RSS" MB "-" -
fi

# 11. What a model reads (DESIGN.md §5e): tokens, by a Claude tokenizer,
# of what the workbench shows a model, against every tool of six real npm
# servers loaded directly (d), and how often search_tools ranks a task's
# tool first or in the top 3 (bench/context.mjs over bench/tasks.json;
# needs the test suite's node_modules: make tests/node_modules).  The
# tasks it misses go to the log (BENCH_KEEP=1 keeps it).
NM=$ROOT/tests/node_modules
if command -v node >/dev/null 2>&1 &&
    [ -d "$NM/@anthropic-ai/tokenizer" ] &&
    [ -d "$NM/@modelcontextprotocol/server-github" ] &&
    [ -d "$NM/@modelcontextprotocol/server-sequential-thinking" ] &&
    [ -d "$NM/@playwright/mcp" ]; then
	$CC $BFLAGS -o "$T/mock-server" tests/mock-server.c
	say "what a model reads: six npm servers, $(grep -c '"task"' bench/tasks.json) tasks"
	_l=$(node "$ROOT/bench/context.mjs" --misses --mock "$T/mock-server" \
	    "$WB" 2>>"$LOG") || err ""
	_v() { printf '%s\n' "$_l" | sed -n "s/^BENCH $1 \([^ ]*\)$/\1/p"; }
	D=$(_v context_direct); W=$(_v context_base)
	row context_base "tokens: instructions + tools/list (d: every tool)" \
	    tokens "<= 600" "$(check 'w <= 600' w)"
	W=$(_v context_opened)
	row context_opened "  the same + every toolbox opened" tokens \
	    "<= 0.85x" "$(check 'w <= 0.85 * d')"
	W=$(_v context_task_median)
	row context_task "  a task: base + search + what a call needs, median" \
	    tokens "<= 1200" "$(check 'w <= 1200' w)"
	W=$(_v context_task_max)
	row context_task_max "  a task, the largest" tokens - -
	D=n/a; W=$(_v context_recall1)
	row context_recall1 "search ranks a task's tool first (recall@1)" share \
	    ">= 0.85" "$(check 'w >= 0.85' w)"
	W=$(_v context_recall3)
	row context_recall3 "  in the top 3 (recall@3)" share ">= 0.95" \
	    "$(check 'w >= 0.95' w)"
	W=$(_v context_search_10k)
	row context_search_10k "search_tools, 10000 tools in 4 toolboxes, client" \
	    ms "< 5 ms" "$(check 'w < 5' w)"
	# The same ranking on tasks written blind to it (no target: how
	# well the tuning on bench/tasks.json carries over).
	_l=$(node "$ROOT/bench/context.mjs" --tasks "$ROOT/bench/tasks-heldout.json" \
	    "$WB" 2>>"$LOG") || err ""
	W=$(_v context_recall1)
	row context_heldout1 "  held-out tasks (bench/tasks-heldout.json): recall@1" \
	    share - -
	W=$(_v context_recall3)
	row context_heldout3 "  held-out tasks: recall@3" share - -
fi

END=$(date +%s)

# The report.
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "mcp-workbench benchmark: $($WB --version 2>/dev/null || echo '?')," \
    "$( [ "$QUICK" = 1 ] && echo quick || echo full) run," \
    "$((END - START)) s, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, ${CPU:-unknown CPU}, Linux $(uname -r)," \
    "$(awk '/MemTotal/ { printf "%.0f GB RAM", $2 / 1048576 }' /proc/meminfo)," \
    "load average at start $LOADAVG"
REV=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
echo "compiler: $($CC --version | head -n 1); workbench $WB_SRC (tree $REV)"
if [ "$(calc "$LOAD0 > 0.5")" = 1 ]; then
	echo "warning: the machine was busy (load average $LOAD0 at start):" \
	    "timings are less reliable"
fi
echo
awk -F '\t' '
function f(v) {
	if (v == "n/a" || v == "") return "n/a"
	v += 0
	if (v < 0) return sprintf("%.2f", v)
	if (v >= 1000) return sprintf("%.0f", v)
	if (v >= 100) return sprintf("%.1f", v)
	return sprintf("%.2f", v)
}
BEGIN {
	printf "%-52s %10s %10s %-8s %7s  %-16s %s\n", "figure", "direct", \
	    "workbench", "unit", "ratio", "target", "met?"
}
{
	printf "%-52s %10s %10s %-8s %7s  %-16s %s\n", $2, f($3), f($4), $5, \
	    $6 == "n/a" ? "n/a" : sprintf("%.2fx", $6), $7, $8
}' "$ROWS"
echo
if [ -n "$DYN_NOTE" ]; then
	echo "note: $DYN_NOTE"
fi
cat <<EOF
notes: ratio = workbench / direct.  direct = the same requests sent by the
load generator straight to bench/echo-server (tools/call) instead of through
the workbench (open_toolbox, then use_tool).  Times are medians; each timed
figure is the best of $ROUNDS rounds that alternate direct and workbench runs.
RSS is the workbench's VmHWM (shared libc pages included).  1 MB = 10^6
bytes (a 16 MiB text would exceed the default maxMessageBytes).

One CPU: unpinned, sequential latency depends on where the scheduler puts
the processes (a few us when client and server share a CPU, tens of us with
a wakeup across CPUs), which swamps a proxy's cost on a machine with few
CPUs.  The one-CPU rows run the load generator and all it starts under
taskset on one CPU, so the workbench-minus-direct figure is the proxy's own
work and its two extra pipe hops; the target applies to that row.

Byte relay: with 256 calls in flight any proxy is a third busy process, and
with $(nproc) CPUs it competes with the client and server for them, so even
one that parses nothing can fall short of direct.  bench/null-relay copies
bytes between the load generator and each echo server with one poll() loop;
it is measured in the same rounds, and "workbench vs byte relay" is the cost
of the workbench's own work with the extra process taken out.  "One byte
relay for all" is the same program dealing the lines among all the servers
from one process, as any single-threaded proxy must, doing the least per
message that such a proxy does: what the design allows on this machine.
EOF
echo
awk -F '\t' '{
	t = $7; gsub(/ /, "", t)
	printf "BENCH name=%s direct=%s workbench=%s unit=%s ratio=%s " \
	    "target=%s met=%s\n", $1, $3, $4, $5, $6, t, $8
}' "$ROWS"
if [ "$FAILS" -gt 0 ]; then
	echo "bench: $FAILS measurement(s) failed; see the messages above" >&2
	exit 1
fi
