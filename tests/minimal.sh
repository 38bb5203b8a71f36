#!/bin/sh
# The minimal build (make HTTP=0 SHARE=0, make check-minimal): --listen,
# "listen", "share": true and a remote server ("url") are refused with an
# error that names the build, with the exit status of a usage error (the option) or of an
# invalid configuration (the keys); then the stdio end-to-end suites,
# which need neither HTTP nor sharing, run against it.
#
# usage: tests/minimal.sh BINARY
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
bin=${1:?usage: tests/minimal.sh BINARY}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-minimal.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

# refused NAME STATUS WORDS ARGS...: the binary exits STATUS and says
# WORDS on stderr.
refused() {
	_name=$1 _want=$2 _words=$3
	shift 3
	"$bin" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
	_got=$?
	if [ "$_got" -eq "$_want" ] && grep -qF -- "$_words" "$tmp/err"; then
		ok "$_name: exit $_want, \"$_words\""
	else
		fail "$_name: exit $_want, \"$_words\" (exit $_got)"
		quote "$tmp/err"
	fi
}

printf '{"toolboxes":{}}\n' > "$tmp/plain.json"
printf '{"listen":"127.0.0.1:0","toolboxes":{}}\n' > "$tmp/listen.json"
printf '{"share":true,"toolboxes":{}}\n' > "$tmp/share.json"
printf '{"toolboxes":{"web":{"mcpServers":{"r":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}}}\n' \
    > "$tmp/remote.json"
http='this build leaves out HTTP (make HTTP=0)'
remote='this build leaves out remote servers'
share='this build leaves out sharing (make SHARE=0)'

refused "--listen" 2 "--listen: $http" -c "$tmp/plain.json" \
    --listen 127.0.0.1:0
refused '"listen"' 1 "\"listen\": $http" -c "$tmp/listen.json"
refused '"share": true' 1 "\"share\": true: $share" -c "$tmp/share.json"
refused '"share": true with --check' 1 "$share" -c "$tmp/share.json" \
    --check
refused "--status" 2 "--status: $share" -c "$tmp/plain.json" --status
# --help names what the build leaves out; the full build's says nothing.
if "$bin" --help | grep -qxF -- "--listen: $http." &&
    "$bin" --help | grep -qxF -- "--status: $share." &&
    ! ./mcp-workbench --help | grep -q 'this build leaves out'; then
	ok "--help says what this build leaves out"
else
	fail "--help says what this build leaves out"
	"$bin" --help | tail -4 | quote
fi
refused 'a "url" with --check' 1 "mcpServers.r: $remote" -c "$tmp/remote.json" \
    --check
if "$bin" -c "$tmp/remote.json" --probe > "$tmp/out" 2>&1; then
	fail 'a "url" with --probe: the server fails'
elif grep -qF -- "$remote" "$tmp/out"; then
	ok "a \"url\" with --probe: the server fails, \"$remote\""
else
	fail 'a "url" with --probe: the server fails, naming the build'
	quote "$tmp/out"
fi
if "$bin" -c "$tmp/plain.json" --check > "$tmp/out" 2>&1; then
	ok "a configuration without them: --check passes"
else
	fail "a configuration without them: --check passes"
	quote "$tmp/out"
fi

# The stdio suites against the minimal build.
suites=
for s in foundation toolboxes dynamic eras bridging relay resources stream \
    catalogue lean; do
	suites="$suites tests/e2e/$s.test.mjs"
done
# shellcheck disable=SC2086
if WORKBENCH=$bin WORKBENCH_HTTP=0 node --test --test-concurrency=2 \
    $suites > "$tmp/suites" 2>&1; then
	ok "the stdio suites pass:$(grep '^# pass' "$tmp/suites" |
	    sed 's/^# pass/ passed/')"
else
	fail "the stdio suites pass"
	grep -E '^not ok|^# (pass|fail)' "$tmp/suites" | quote
fi
tally minimal
