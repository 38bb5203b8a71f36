#!/bin/sh
# `make install DESTDIR=... PREFIX=/usr` stages the binary, the three
# manual pages (each naming the version), the example config and the
# licence; the installed pages render; `make uninstall` with the same
# settings removes exactly what
# was installed and nothing else.
#
# usage: tests/install.sh	(from anywhere; MAKE names the make to use)
# Ends with "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
make=${MAKE:-make}
. tests/tap.sh

version=$(sed -n 's/^VERSION[ 	]*=[ 	]*//p' Makefile)
if [ -z "$version" ]; then
	echo "install: no VERSION in the Makefile" >&2
	exit 1
fi
pages="man1/mcp-workbench.1 man5/mcp-workbench-config.5 man7/mcp-workbench.7"
for p in $pages; do
	if [ ! -f "man/${p#*/}" ]; then
		echo "install: man/${p#*/} is missing" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
stage=$tmp/stage

# step NAME COMMAND...: one result; the command's output shows if it fails.
step() {
	_name=$1
	shift
	if "$@" > "$tmp/log" 2>&1; then
		ok "$_name"
	else
		fail "$_name"
		quote < "$tmp/log"
	fi
}

# Files that were there before must survive the uninstall.
mkdir -p "$stage/usr/bin" "$stage/usr/share/man/man1"
echo keep > "$stage/usr/bin/other-program"
echo keep > "$stage/usr/share/man/man1/other.1"
(cd "$stage" && find . -type f | sort) > "$tmp/before"

step "make install DESTDIR=... PREFIX=/usr" \
    $make -s install DESTDIR="$stage" PREFIX=/usr
(cd "$stage" && find . -type f | sort) > "$tmp/after"
comm -13 "$tmp/before" "$tmp/after" > "$tmp/installed"
cat > "$tmp/expected" <<'EOF'
./usr/bin/mcp-workbench
./usr/share/doc/mcp-workbench/LICENSE
./usr/share/man/man1/mcp-workbench.1
./usr/share/man/man5/mcp-workbench-config.5
./usr/share/man/man7/mcp-workbench.7
./usr/share/mcp-workbench/workbench-config.example.json
EOF
if cmp -s "$tmp/installed" "$tmp/expected"; then
	ok "installs exactly the binary, the three manual pages, the example config and the licence"
else
	fail "installs exactly the binary, the three manual pages, the example config and the licence"
	diff "$tmp/expected" "$tmp/installed" | quote
fi

bin=$stage/usr/bin/mcp-workbench
conf=$stage/usr/share/mcp-workbench/workbench-config.example.json
licence=$stage/usr/share/doc/mcp-workbench/LICENSE

if [ -x "$bin" ] && "$bin" --version 2>&1 | grep -qx "mcp-workbench $version"; then
	ok "installed binary is executable and says version $version"
else
	fail "installed binary is executable and says version $version"
fi
mode() {
	stat -c %a "$1" 2>/dev/null
}
man=$stage/usr/share/man
if [ "$(mode "$bin")" = 755 ] && [ "$(mode "$conf")" = 644 ] &&
    [ "$(mode "$man/man1/mcp-workbench.1")" = 644 ] &&
    [ "$(mode "$man/man5/mcp-workbench-config.5")" = 644 ] &&
    [ "$(mode "$man/man7/mcp-workbench.7")" = 644 ] &&
    [ "$(mode "$licence")" = 644 ]; then
	ok "modes 755 (binary), 644 (manual, config, licence)"
else
	fail "modes 755 (binary), 644 (manual, config, licence):" \
	    "$(mode "$bin") $(mode "$conf") $(mode "$licence")" \
	    "$(cd "$man" && stat -c '%n %a' man1/* man5/* man7/* 2>&1)"
fi
if cmp -s "$licence" LICENSE && grep -q '^MIT License$' "$licence"; then
	ok "the licence is the repository's LICENSE (MIT)"
else
	fail "the licence is the repository's LICENSE (MIT)"
fi
if cmp -s "$conf" example/workbench-config.json; then
	ok "example config is the repository's example/workbench-config.json"
else
	fail "example config is the repository's example/workbench-config.json"
fi

# Each manual page: names the version, renders, lint-clean when mandoc is
# here.  Plain text of a rendered page: drop the overstrike (x BS x) of
# bold and underlined words without needing col(1), and join the lines,
# so that a phrase broken across two still reads as one.
bs=$(printf '\b')
plain() {
	sed "s/.$bs//g" | tr -s ' \n' '  '
}
rendered=0
for p in $pages; do
	page=$stage/usr/share/man/$p
	if grep -q '@VERSION@' "$page"; then
		fail "$p: no @VERSION@ placeholder"
	elif grep -q "^version $version\.\$" "$page"; then
		ok "$p: names version $version"
	else
		fail "$p: names version $version"
		grep '^\.Os' "$page" | quote
	fi
	if command -v man >/dev/null 2>&1 && man -l "$page" >/dev/null 2>&1; then
		if MANWIDTH=80 man -l "$page" 2>/dev/null | plain |
		    grep -q "mcp-workbench version $version"; then
			ok "$p: man -l renders the installed page (names version $version)"
		else
			fail "$p: man -l renders the installed page (names version $version)"
		fi
		rendered=1
	fi
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -Tascii "$page" 2>/dev/null | sed "s/.$bs//g" > "$tmp/page.txt"
		if plain < "$tmp/page.txt" |
		    grep -q "mcp-workbench version $version" &&
		    grep -q '^NAME' "$tmp/page.txt" &&
		    grep -q '^SEE ALSO' "$tmp/page.txt"; then
			ok "$p: mandoc renders the installed page"
		else
			fail "$p: mandoc renders the installed page"
		fi
		if mandoc -Tlint -Wwarning "$page" > "$tmp/lint" 2>&1; then
			ok "$p: mandoc -Tlint -Wwarning: clean"
		else
			fail "$p: mandoc -Tlint -Wwarning: clean"
			quote "$tmp/lint"
		fi
		rendered=1
	fi
done
if [ "$rendered" -eq 0 ]; then
	fail "neither man(1) nor mandoc(1) is installed to render the pages"
fi

# Uninstall with the same settings.
step "make uninstall DESTDIR=... PREFIX=/usr" \
    $make -s uninstall DESTDIR="$stage" PREFIX=/usr
(cd "$stage" && find . -type f | sort) > "$tmp/final"
if cmp -s "$tmp/before" "$tmp/final"; then
	ok "uninstall removes exactly what was installed"
else
	fail "uninstall removes exactly what was installed"
	diff "$tmp/before" "$tmp/final" | quote
fi
if [ -d "$stage/usr/share/mcp-workbench" ] ||
    [ -d "$stage/usr/share/doc/mcp-workbench" ]; then
	fail "uninstall removes the empty share/mcp-workbench, doc directories"
else
	ok "uninstall removes the empty share/mcp-workbench, doc directories"
fi

# And into an empty tree: nothing but empty directories is left.
rm -rf "$stage"
$make -s install DESTDIR="$stage" PREFIX=/usr > "$tmp/log" 2>&1 &&
    $make -s uninstall DESTDIR="$stage" PREFIX=/usr >> "$tmp/log" 2>&1
left=$(find "$stage" ! -type d | wc -l)
if [ "$left" -eq 0 ]; then
	ok "install then uninstall into an empty tree leaves no file"
else
	fail "install then uninstall into an empty tree leaves no file"
	find "$stage" ! -type d | quote
fi

tally install
