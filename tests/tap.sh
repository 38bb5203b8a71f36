# tests/tap.sh: the tally of the shell test scripts, sourced by them.
#	ok NAME, fail NAME	one result line
#	quote [FILE...]		the files (or standard input) as "#   " comments
#	tally WHAT		"WHAT: N passed, N failed"; true when none failed
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	echo "ok - $1"
}

fail() {
	failed=$((failed + 1))
	echo "not ok - $1"
}

quote() {
	sed 's/^/#   /' "$@"
}

tally() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
