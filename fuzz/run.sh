#!/bin/sh
# Run the libFuzzer targets built in DIR (make fuzz / make fuzz-long).
#
# usage: fuzz/run.sh short|long [SECONDS] [DIR]
#
# For each target (fuzz_jsonrpc, fuzz_config, fuzz_toolname, fuzz_catalog,
# fuzz_http, fuzz_share, fuzz_remote):
#  1. replay every file of the committed corpus fuzz/corpus/NAME/ once: the
#     seeds and the regression inputs of crashes found before;
#  2. fuzz for SECONDS (short: default 20, long: default 600), starting
#     from the committed corpus.  New inputs go to a working corpus in
#     DIR/corpus/NAME/: emptied at each short run, kept between long runs.
#     The committed corpus is never written to.
# A crash leaves its input as DIR/crash-NAME-*: add it to
# fuzz/corpus/NAME/ (named regress-*) once the bug is fixed.
set -u
cd "$(dirname "$0")/.." || exit 1
mode=${1:-short}
secs=${2:-}
dir=${3:-build-fuzz}
case $mode in
short) secs=${secs:-20} ;;
long) secs=${secs:-600} ;;
*)
	echo "usage: fuzz/run.sh short|long [SECONDS] [DIR]" >&2
	exit 2
	;;
esac

status=0
for name in jsonrpc config toolname catalog http share remote; do
	bin=$dir/fuzz_$name
	seeds=fuzz/corpus/$name
	work=$dir/corpus/$name
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin is missing: run make fuzz" >&2
		exit 1
	fi
	[ "$mode" = short ] && rm -rf "$work"
	mkdir -p "$work"

	n=$(ls "$seeds" | wc -l)
	echo "fuzz: $name: replaying $n committed inputs"
	if ! "$bin" -runs=1 "$seeds"/* > "$dir/replay-$name.log" 2>&1; then
		echo "fuzz: $name: a committed input fails:"
		tail -n 60 "$dir/replay-$name.log"
		status=1
		continue
	fi

	echo "fuzz: $name: fuzzing for $secs s"
	# -max_len 64 KiB: long enough for the framing's long-line paths.
	# -timeout: one input taking 10 s is a hang.  -rss_limit_mb: the
	# machine has plenty, the workbench's own caps are the subject.
	if "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 \
	    -rss_limit_mb=4096 -print_final_stats=1 \
	    -artifact_prefix="$dir/crash-$name-" \
	    "$work" "$seeds" > "$dir/fuzz-$name.log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' \
		    "$dir/fuzz-$name.log" | tail -n 2 | sed "s/^/fuzz: $name: /"
	else
		echo "fuzz: $name: FAILED; the end of its log:"
		tail -n 80 "$dir/fuzz-$name.log"
		for f in "$dir"/crash-"$name"-* "$dir"/timeout-"$name"-* \
		    "$dir"/oom-"$name"-*; do
			[ -f "$f" ] || continue
			echo "fuzz: $name: input $f:"
			od -A x -t x1z "$f" | head -n 40
		done
		status=1
	fi
done
if [ "$status" -eq 0 ]; then
	echo "fuzz: no crash, no sanitizer report, no broken property"
fi
exit "$status"
