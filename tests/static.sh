#!/usr/bin/env bash
# The static build in an empty root: a directory holding nothing but the
# static workbench, the static example server and a config (no libc, no
# /proc, no /dev, no /etc).  The workbench is driven over stdio from
# outside: initialize, open_toolbox, use_tool system_info and
# list_directory of the root, and every answer is checked.
#
# The root is entered with chroot(8) when we are root, else with
# `unshare -r --root` (an unprivileged user namespace).
#
# usage: tests/static.sh [WORKBENCH-STATIC [EXAMPLE-SERVER-STATIC]]
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
wb=${1:-./mcp-workbench-static}
ex=${2:-./example/example-server-static}
. tests/tap.sh

check() {
	# check NAME PATTERN TEXT: TEXT matches the extended regex PATTERN.
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		fail "$1"
		printf '  expected /%s/ in: %.600s\n' "$2" "$3"
	fi
}

for f in "$wb" "$ex"; do
	if [ ! -x "$f" ]; then
		echo "static: $f is missing: run make static" >&2
		exit 1
	fi
done

# Fully static: no program interpreter, no shared libraries.
for f in "$wb" "$ex"; do
	if readelf -lW "$f" | grep -q 'INTERP' ||
	    readelf -dW "$f" | grep -q 'NEEDED'; then
		fail "$f is statically linked"
		readelf -dW "$f" | grep NEEDED
	else
		ok "$f is statically linked"
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-static.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
root=$tmp/root
mkdir "$root"
cp "$wb" "$root/mcp-workbench"
cp "$ex" "$root/example-server"
# No tool catalogue: the root is to hold only our three files.
cat > "$root/workbench-config.json" <<'EOF'
{
  "cache": false,
  "toolboxes": {
    "example": {
      "description": "The static example server in an empty root",
      "mcpServers": {
        "sysinfo": { "command": "/example-server", "args": ["/"] }
      }
    }
  }
}
EOF

# How to run a program inside the root (STATIC_ENTER=chroot or unshare
# forces one).
want=${STATIC_ENTER:-auto}
if [ "$want" != unshare ] && [ "$(id -u)" -eq 0 ] &&
    chroot "$root" /mcp-workbench --version >/dev/null 2>&1; then
	enter="chroot $root"
elif [ "$want" != chroot ] &&
    unshare -r --root="$root" /mcp-workbench --version >/dev/null 2>&1; then
	enter="unshare -r --root=$root"
else
	echo "static: cannot enter $root with chroot (needs root) or" \
	    "unshare -r (needs user namespaces)" >&2
	exit 1
fi
echo "# entering the root with: ${enter%% *}"
echo "# root holds: $(cd "$root" && ls | tr '\n' ' ')"

out=$($enter /mcp-workbench --version 2>&1)
check "--version in the root" '^mcp-workbench [0-9]' "$out"
out=$($enter /mcp-workbench -c /workbench-config.json --check 2>&1)
check "--check in the root" 'example' "$out"

# Drive a session through a coprocess made of two FIFOs: requests go in
# one at a time and each answer is read (with a timeout) before the next.
mkfifo "$tmp/in" "$tmp/out"
$enter /mcp-workbench -c /workbench-config.json <"$tmp/in" >"$tmp/out" \
    2>"$tmp/stderr" &
pid=$!
exec 3>"$tmp/in" 4<"$tmp/out"

ask() {
	# ask JSON: send one line, print the next line of output.
	printf '%s\n' "$1" >&3
	# bash's read takes one byte at a time from a pipe: it never eats
	# the next line.
	local line
	read -r -t 20 line <&4 || line="(no answer within 20 s)"
	printf '%s\n' "$line"
}

init=$(ask '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"static-test","version":"1.0.0"}}}')
check "initialize: serverInfo" '"id":1,"result":.*"serverInfo":\{"name":"mcp-workbench"' "$init"
check "initialize: instructions name the toolbox" '- example: ' "$init"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&3

open=$(ask '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"example"}}}')
check "open_toolbox: answered" '"id":2,"result":' "$open"
check "open_toolbox: server connected" '"servers_connected":1' "$open"
check "open_toolbox: system_info listed" '"name":"system_info"' "$open"
case $open in
*'"isError":true'*) fail "open_toolbox: not an error" ;;
*) ok "open_toolbox: not an error" ;;
esac

info=$(ask '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"example","server":"sysinfo","name":"system_info"},"arguments":{}}}}')
check "use_tool system_info: answered" '"id":3,"result":' "$info"
check "use_tool system_info: kernel" '"sysname":"Linux"' "$info"
check "use_tool system_info: CPUs" '"cpus":[1-9]' "$info"
# No /proc in the root: the server had to fall back to sysinfo(2).
check "use_tool system_info: memory from sysinfo(2), no /proc" \
    '"source":"sysinfo"' "$info"

list=$(ask '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"example","server":"sysinfo","name":"list_directory"},"arguments":{}}}}')
check "use_tool list_directory: the root holds only our three files" \
    '"text":"\[FILE\] example-server\\n\[FILE\] mcp-workbench\\n\[FILE\] workbench-config.json(\\n)?"' \
    "$list"

# End of input ends the session; the workbench must exit 0 by itself.
exec 3>&-
i=0
while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 "$pid" 2>/dev/null; then
	fail "workbench exits after end of input"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
else
	wait "$pid"
	st=$?
	if [ "$st" -eq 0 ]; then
		ok "workbench exits 0 after end of input"
	else
		fail "workbench exits 0 after end of input (status $st)"
	fi
fi
exec 4<&-
if [ "$failed" -gt 0 ]; then
	echo "# workbench stderr:"
	quote "$tmp/stderr"
fi
tally static
