#!/bin/sh
# The end-to-end suite with every workbench it starts running under
# valgrind's memcheck (make valgrind).  A wrapper script stands in for the
# binary (WORKBENCH=DIR/mcp-workbench); it execs valgrind with one log per
# process.  Children are not traced: the workbench's servers run natively,
# and --child-silent-after-fork keeps the short fork-to-exec window quiet.
# Afterwards every log must show 0 errors, no definitely or indirectly lost
# blocks, and no file descriptor left open at exit beyond stdin, stdout and
# stderr.  A log without a summary (the process was killed) passes only when
# a test killed that workbench on purpose and said so ($WB_TEST_KILLED).
#
# usage: tests/valgrind.sh [DIR]	(default build-valgrind)
# Environment: VALGRIND (the valgrind to run), VALGRIND_TESTS (the suite
# files to run; default every tests/e2e/*.test.mjs except those named in
# VALGRIND_EXCLUDE, default "soak hostile sharing": the limits of soak
# and hostile are about speed and RSS, which valgrind changes many times
# over; sharing's front starts the shared workbench by executing
# /proc/self/exe, which under valgrind is valgrind's tool, and that
# refuses to run ("You cannot run ... directly"), so every session would
# run on its own: that suite runs plain and under make asan),
# VALGRIND_CONCURRENCY
# (suite files run at once, default 2), VALGRIND_FD_ALLOWED (functions
# whose fds may stay open at exit, default proc_signals).
set -u
cd "$(dirname "$0")/.." || exit 1
dir=${1:-build-valgrind}
vg=${VALGRIND:-valgrind}

if ! command -v "$vg" >/dev/null 2>&1; then
	echo "valgrind: $vg not found; install Debian's valgrind" >&2
	exit 1
fi
vg=$(command -v "$vg")
for f in mcp-workbench tests/mock-server; do
	if [ ! -x "$f" ]; then
		echo "valgrind: $f is missing: run make" >&2
		exit 1
	fi
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
logs=$dir/logs
rm -rf "$logs"
mkdir -p "$logs"

# The suites give the workbench environments of their own (the SDK client
# passes only HOME LOGNAME PATH SHELL TERM USER), so the wrapper carries
# every path itself.
cat > "$dir/mcp-workbench" <<EOF
#!/bin/sh
exec "$vg" --tool=memcheck --leak-check=full \\
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \\
    --error-exitcode=99 --track-fds=yes --child-silent-after-fork=yes \\
    --num-callers=30 --log-file="$logs/vg.%p.log" \\
    "$(pwd)/mcp-workbench" "\$@"
EOF
chmod 755 "$dir/mcp-workbench"

status=0
start=$(date +%s)
# Two suite files side by side, as in make check: measured at about 315 s
# for the whole suite on 2 cores, every timeout held (the paced answers of
# stream.test.mjs wait for servers listing thousands of tools).
# VALGRIND_CONCURRENCY=1 runs them one at a time on a slower machine.
tests=${VALGRIND_TESTS:-}
if [ -z "$tests" ]; then
	for f in tests/e2e/*.test.mjs; do
		case " ${VALGRIND_EXCLUDE-soak hostile sharing} " in
		*" $(basename "$f" .test.mjs) "*) continue ;;
		esac
		tests="$tests $f"
	done
fi
echo "valgrind: suites:$tests"
# The suites may scale themselves down under a slow workbench.
WB_TEST_SLOW=valgrind
export WB_TEST_SLOW
# Every workbench a test ends with SIGKILL, and why (tests/e2e/lib.mjs
# killWorkbench): such a process leaves no summary.
WB_TEST_KILLED=$dir/killed
: > "$WB_TEST_KILLED"
export WB_TEST_KILLED
# shellcheck disable=SC2086
WORKBENCH=$dir/mcp-workbench node --test \
    --test-concurrency="${VALGRIND_CONCURRENCY:-2}" $tests || status=1
end=$(date +%s)
echo "valgrind: suite took $((end - start)) s"

# File descriptors the workbench opened and still held at exit.  Those it
# inherited (valgrind's own log, whatever the test runner passed down) do
# not count, nor the sites in $fd_allowed, which live as long as the
# process by design: the signal self-pipe.
fd_allowed=${VALGRIND_FD_ALLOWED:-proc_signals}
open_fds() {
	awk -v allowed="$fd_allowed" '
	function done_block() {
		if (inblock && !inherited && !allow)
			n++
		inblock = 0
	}
	/Open (file|AF_UNIX socket|AF_INET socket) descriptor [0-9]+/ {
		done_block()
		inblock = 1; inherited = 0; allow = 0
		next
	}
	inblock && /<inherited from parent>/ { inherited = 1 }
	inblock && /(at|by) 0x/ {
		k = split(allowed, a, " ")
		for (i = 1; i <= k; i++)
			if (index($0, " " a[i] " (") > 0)
				allow = 1
	}
	inblock && /^==[0-9]+== *$/ { done_block() }
	END { done_block(); print n + 0 }
	' "$1"
}

nlogs=0
bad=0
killed=0
for f in "$logs"/vg.*.log; do
	[ -f "$f" ] || continue
	nlogs=$((nlogs + 1))
	problems=
	errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) errors.*/\1/p' "$f" |
	    tail -n 1)
	if [ -z "$errs" ]; then
		# No summary: the process was killed before valgrind could
		# finish.  A test of being killed says so; anything else (a
		# workbench that would not exit, one left running, a crash) is
		# a failure.
		pid=${f##*/vg.}
		pid=${pid%.log}
		why=$(sed -n "s/^$pid //p" "$WB_TEST_KILLED" | head -n 1)
		case $why in
		deliberate*)
			killed=$((killed + 1))
			echo "valgrind: $f: no summary: killed on purpose ($why)"
			continue
			;;
		"")	problems=" no summary, and no test killed it (a crash?);" ;;
		*)	problems=" no summary: killed by its test ($why);" ;;
		esac
		bad=$((bad + 1))
		echo "valgrind: $f:$problems"
		cat "$f"
		continue
	fi
	[ "$errs" -eq 0 ] || problems="$problems $errs error(s);"
	def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d ,)
	ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d ,)
	[ "${def:-0}" -eq 0 ] || problems="$problems definitely lost $def bytes;"
	[ "${ind:-0}" -eq 0 ] || problems="$problems indirectly lost $ind bytes;"
	fds=$(open_fds "$f")
	[ "$fds" -eq 0 ] || problems="$problems $fds fd(s) open at exit;"
	if [ -n "$problems" ]; then
		bad=$((bad + 1))
		echo "valgrind: $f:$problems"
		cat "$f"
	fi
done
echo "valgrind: $nlogs log(s), $bad with problems, $killed killed on purpose"
if [ "$nlogs" -eq 0 ]; then
	echo "valgrind: no logs at all: the wrapper did not run" >&2
	status=1
fi
[ "$bad" -eq 0 ] || status=1
exit "$status"
