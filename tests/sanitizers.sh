#!/bin/sh
# The unit and end-to-end suites against the AddressSanitizer and
# UndefinedBehaviorSanitizer build (make asan).  The sanitizers write their
# reports to DIR/logs/san.PID (tests/san-options.c): the run fails when a
# suite fails or when any report was written, and each report is printed.
#
# usage: tests/sanitizers.sh [DIR]	(default build-asan)
# Environment: SAN_TESTS (the suite files or directories to run, default
# tests/e2e/), SAN_CONCURRENCY (suite files run at once, default 2).
set -u
cd "$(dirname "$0")/.." || exit 1
dir=${1:-build-asan}
logs=$dir/logs

for f in "$dir/mcp-workbench" "$dir/unit" "$dir/http-echo" \
    "$dir/remote-probe" tests/mock-server; do
	if [ ! -x "$f" ]; then
		echo "sanitizers: $f is missing: run make asan" >&2
		exit 1
	fi
done
rm -rf "$logs"
mkdir -p "$logs"

status=0
echo "sanitizers: unit tests ($dir/unit)"
"$dir/unit" || status=1
echo "sanitizers: end-to-end suite (WORKBENCH=$dir/mcp-workbench," \
    "HTTP_ECHO=$dir/http-echo, REMOTE_PROBE=$dir/remote-probe)"
# The suites may scale themselves down under a slow workbench.
WB_TEST_SLOW=asan
HTTP_ECHO=$dir/http-echo
REMOTE_PROBE=$dir/remote-probe
export WB_TEST_SLOW HTTP_ECHO REMOTE_PROBE
# shellcheck disable=SC2086
WORKBENCH=$dir/mcp-workbench node --test \
    --test-concurrency="${SAN_CONCURRENCY:-2}" ${SAN_TESTS:-tests/e2e/} ||
    status=1

# Print one report per distinct SUMMARY line; the same bug usually fires
# in every test that reaches it.
reports=0
seen=
for f in "$logs"/san.*; do
	[ -f "$f" ] || continue
	reports=$((reports + 1))
	sum=$(grep -m1 '^SUMMARY:' "$f" || echo "(no summary) $f")
	case $seen in
	*"|$sum|"*) continue ;;
	esac
	seen="$seen|$sum|"
	echo "sanitizers: report $f (first of its kind):"
	cat "$f"
done
if [ "$reports" -gt 0 ]; then
	echo "sanitizers: summary of all reports:"
	cat "$logs"/san.* | grep '^SUMMARY:' | sort | uniq -c
fi
if [ "$reports" -gt 0 ]; then
	echo "sanitizers: $reports sanitizer report(s) in $logs" >&2
	status=1
fi
[ "$status" -eq 0 ] && echo "sanitizers: no reports, suites passed"
exit "$status"
