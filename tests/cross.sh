#!/usr/bin/env bash
# The cross builds under qemu-user (make cross-check): for each target
# built by `make cross` in DIR/TRIPLET, check that the binaries are of the
# target's word size and byte order, run the unit tests, then run the demo
# (demo client, workbench and example server, all three the target's
# binaries) and check its exit status and its output.
#
# No binfmt_misc is needed (containers and CI machines seldom have it):
# every foreign program is started by its qemu explicitly.  A foreign
# program's execve goes to the host kernel as it is, so the demo starts a
# native shell script that runs the workbench under qemu, and the config
# names qemu as the server's command.  Dynamic binaries find their loader
# and libc in the cross sysroot, /usr/TRIPLET (qemu -L).
#
# usage: tests/cross.sh DIR TRIPLET...
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh

if [ $# -lt 2 ]; then
	echo "usage: tests/cross.sh DIR TRIPLET..." >&2
	exit 2
fi
dir=$(cd "$1" && pwd) || exit 1
shift

check() {
	# check NAME PATTERN TEXT: TEXT matches the extended regex PATTERN.
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		fail "$1"
		printf '#   expected /%s/ in:\n' "$2"
		printf '%s\n' "$3" | head -n 8 | cut -c 1-200 | quote
	fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-cross.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

for t in "$@"; do
	d=$dir/$t
	sysroot=/usr/$t
	# The qemu-user program, the ELF class and byte order, and what
	# uname(2) says under that qemu.
	case $t in
	arm*eb-*)	qemu=armeb ;;
	arm*)		qemu=arm ;;
	powerpc64le-*)	qemu=ppc64le ;;
	powerpc64-*)	qemu=ppc64 ;;
	powerpc-*)	qemu=ppc ;;
	i?86-*)		qemu=i386 ;;
	*)		qemu=${t%%-*} ;;
	esac
	case $t in
	arm*eb-*)	want="ELF32 big armv7b" ;;
	arm*)		want="ELF32 little armv7l" ;;
	aarch64-*)	want="ELF64 little aarch64" ;;
	s390x-*)	want="ELF64 big s390x" ;;
	powerpc64le-*)	want="ELF64 little ppc64le" ;;
	powerpc64-*)	want="ELF64 big ppc64" ;;
	powerpc-*)	want="ELF32 big ppc" ;;
	mips64el-*)	want="ELF64 little mips64" ;;
	mips64-*)	want="ELF64 big mips64" ;;
	mipsel-*)	want="ELF32 little mips" ;;
	mips-*)		want="ELF32 big mips" ;;
	*)		want="" ;;
	esac
	read -r wclass wdata wmachine <<< "$want"
	echo "# $t: qemu-$qemu, sysroot $sysroot${want:+, expecting $want}"
	if ! command -v "qemu-$qemu" >/dev/null 2>&1; then
		fail "$t: qemu-$qemu found (Debian: qemu-user)"
		continue
	fi
	if [ ! -d "$sysroot" ]; then
		fail "$t: sysroot $sysroot found (Debian: libc6-dev-*-cross)"
		continue
	fi
	run="qemu-$qemu -L $sysroot"

	# The binaries are the target's, not the host's.
	for f in mcp-workbench example/example-server example/demo tests/unit; do
		if [ ! -x "$d/$f" ]; then
			fail "$t: $f built (run make cross)"
			continue
		fi
		h=$(LC_ALL=C readelf -h "$d/$f" 2>/dev/null)
		class=$(printf '%s\n' "$h" | sed -n 's/^ *Class: *//p')
		data=$(printf '%s\n' "$h" | sed -n 's/^ *Data: *//p')
		if [ -z "$want" ]; then
			check "$t: $f is an ELF file" 'ELF' "$class"
		else
			check "$t: $f is $wclass" "^$wclass\$" "$class"
			check "$t: $f is $wdata-endian" "$wdata endian" "$data"
		fi
	done

	# The unit tests: all pass, and there are some.
	out=$(cd "$d" && $run ./tests/unit 2>&1)
	st=$?
	if [ "$st" -eq 0 ]; then
		ok "$t: unit tests exit 0"
	else
		fail "$t: unit tests exit 0 (status $st)"
		printf '%s\n' "$out" | grep -v '^ok' | tail -n 20 | quote
	fi
	check "$t: unit tests: all passed" '^[1-9][0-9]* passed, 0 failed$' \
	    "$(printf '%s\n' "$out" | tail -n 1)"

	# The demo, from the top of the copied tree (the example server
	# serves it and the demo reads its README.md).
	cat > "$tmp/$t-workbench" <<EOF
#!/bin/sh
exec $run "$d/mcp-workbench" "\$@"
EOF
	chmod +x "$tmp/$t-workbench"
	cat > "$tmp/$t-config.json" <<EOF
{
  "toolboxes": {
    "example": {
      "description": "The example server of $t under qemu-$qemu",
      "mcpServers": {
        "sysinfo": {
          "command": "qemu-$qemu",
          "args": ["-L", "$sysroot", "$d/example/example-server", "."]
        }
      }
    }
  }
}
EOF
	out=$(cd "$d" && timeout 120 $run ./example/demo "$tmp/$t-workbench" \
	    "$tmp/$t-config.json" 2>&1)
	st=$?
	if [ "$st" -eq 0 ]; then
		ok "$t: demo exits 0"
	else
		fail "$t: demo exits 0 (status $st)"
		printf '%s\n' "$out" | tail -n 30 | quote
	fi
	check "$t: demo: all steps succeeded" \
	    '^demo: all [0-9]+ steps succeeded$' "$out"
	check "$t: demo: three tools found (open_toolbox groups them by server)" \
	    'tools of server "sysinfo": system_info, read_file, list_directory' \
	    "$out"
	# uname(2) under qemu names the target's machine: the server ran
	# emulated, not natively.
	if [ -n "$want" ]; then
		check "$t: demo: system_info runs on $wmachine" \
		    "^    Kernel: Linux .* on $wmachine\$" "$out"
	fi
	check "$t: demo: read_file README.md" '^    # mcp-workbench$' "$out"
done
tally cross
