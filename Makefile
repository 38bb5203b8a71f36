# mcp-workbench: POSIX make.  The version lives here, and in the manual's
# "version" line so that the page reads right from the source tree (make
# lint checks that the two agree).
VERSION = 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANPREFIX ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/mcp-workbench
DOCDIR ?= $(PREFIX)/share/doc/mcp-workbench
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
WARN = -std=c11 -Wall -Wextra -Werror
DEFS = -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DJSMN_PARENT_LINKS -DJSMN_STRICT
# Nothing here unwinds the stack (C, no exceptions, no backtrace()): the
# asynchronous unwind tables would only make the binary 13% larger.
# Debuggers read -g's own frame tables.
CODEGEN = -fno-asynchronous-unwind-tables
# Built for size: the files no call, list or search runs through (their
# rules below), and the whole of the minimal build (HTTP=0 SHARE=0),
# which is for small systems.
SMALL = -Os
FOR_SIZE_00 = $(SMALL)
ALL_CFLAGS = $(WARN) $(DEFS) $(CODEGEN) $(CPPFLAGS) $(CFLAGS) \
	$(FOR_SIZE_$(HTTP)$(SHARE))

# The sources of each layer, top to bottom (ARCHITECTURE.md).  The
# objects go to obj/ (obj/tests/ for the tests'), one rule each below.
TOPSRC = workbench.c dispatch.c clients.c stdio.c probe.c
BOXSRC = toolbox.c lean.c resources.c dynamic.c search.c listen.c
SRVSRC = server.c server_io.c server_loop.c handshake.c call.c stream.c \
	relay.c bridge.c listing.c catalog.c server_remote.c
SESSSRC = session.c pace.c
# The libraries (layers 1 to 3) every program links: the configuration
# checks a "listen" address with http_listen.c; http_word.c holds the
# words of HTTP its server and its client both read.
CORESRC = era.c peer.c procmgr.c guard.c toolname.c terms.c thesaurus.c \
	config.c config_keys.c store.c json.c json_scan.c json_out.c utf8.c \
	jsonrpc.c util.c loop.c http_listen.c http_word.c
# The HTTP layer (http.h): the workbench serves it (--listen,
# http_host.c); tests/http-echo drives it alone.
HTTPSRC = http.c http_out.c http_parse.c http_rules.c
# The shared workbench's transport (share.h), wired in by share_host.c.
SHARESRC = share.c share_wire.c share_daemon.c front.c
# The remote client (remote.h): a server reached over Streamable HTTP or
# HTTP+SSE, on http or https (libssl.so.3 opened at run time, never
# linked); server_remote.c takes it into the server layer.
REMOTESRC = remote.c remote_conn.c remote_http.c remote_sse.c remote_tls.c

# What the program is built with: make HTTP=0 leaves out --listen and
# "listen", SHARE=0 "share"; a small file answers for each left out
# (no_http.c, no_share.c).  The minimal build is HTTP=0 SHARE=0.
# REMOTE=0 leaves out remote servers ("url"; no_remote.c), and so does
# the minimal build unless REMOTE=1 is said.
HTTP = 1
SHARE = 1
REMOTE_WITH_11 = 1
REMOTE_WITH_10 = 1
REMOTE_WITH_01 = 1
REMOTE_WITH_00 = 0
REMOTE = $(REMOTE_WITH_$(HTTP)$(SHARE))
REMOTE_1 = $(REMOTESRC)
REMOTE_0 = no_remote.c
HTTP_1 = http_host.c http_carry.c $(HTTPSRC)
HTTP_0 = no_http.c
SHARE_1 = share_host.c share_status.c $(SHARESRC)
SHARE_0 = no_share.c
APPSRC = $(TOPSRC) $(BOXSRC) $(SRVSRC) $(SESSSRC) $(CORESRC)
SRC = $(APPSRC) $(HTTP_$(HTTP)) $(SHARE_$(SHARE)) $(REMOTE_$(REMOTE))
MINSRC = $(APPSRC) $(HTTP_0) $(SHARE_0) $(REMOTE_0)
LIBSRC = $(CORESRC) $(HTTPSRC) $(SHARESRC) $(REMOTESRC)
# The unit tests: the libraries, and the layers above them but main
# (tests/unit-session.c drives sessions through dispatch).
UNITSRC = tests/unit.c tests/unit-share.c tests/unit-session.c \
	tests/unit-loop.c tests/unit-remote.c
TESTSRC = dispatch.c clients.c probe.c http_host.c http_carry.c \
	no_share.c $(BOXSRC) $(SRVSRC) $(SESSSRC)

OBJ = $(SRC:%.c=obj/%.o)
LIBOBJ = $(LIBSRC:%.c=obj/%.o)
UNITOBJ = $(UNITSRC:%.c=obj/%.o)
TESTOBJ = $(TESTSRC:%.c=obj/%.o)
ALLOBJ = $(APPSRC:%.c=obj/%.o) $(HTTP_1:%.c=obj/%.o) \
	$(SHARE_1:%.c=obj/%.o) obj/no_http.o obj/no_share.o $(UNITOBJ) \
	obj/tests/http-echo.o $(REMOTESRC:%.c=obj/%.o) obj/no_remote.o
# Each layer's headers (a file may include its own layer's and below).
HDR = util.h loop.h json.h json_out.h jsonrpc.h json_int.h peer.h proc.h \
	config.h config_int.h era.h store.h terms.h share.h share_int.h http.h \
	http_int.h remote.h remote_int.h remote_conn.h \
	session.h session_int.h server.h server_int.h box.h workbench.h \
	http_host_int.h share_host_int.h
PROGS = mcp-workbench tests/mock-server tests/http-echo tests/share-probe \
	tests/remote-probe example/example-server example/demo

# One line that says what to install when jsmn is missing.  It looks with
# the compiler and flags of the build (an SDK may pass -I in CPPFLAGS or,
# like OpenWrt, in CFLAGS).
JSMN_CHECK = printf '\043include <jsmn.h>\n' | \
	$(CC) $(CPPFLAGS) $(CFLAGS) -E -x c - >/dev/null 2>&1 || \
	{ echo "mcp-workbench: jsmn.h not found by $(CC); install Debian's libjsmn-dev (apt-get install libjsmn-dev) or name its directory in CPPFLAGS (CPPFLAGS=-I/path/to/dir)" >&2; exit 1; }

all: $(PROGS)

# The program is made again when HTTP, SHARE or REMOTE changes (the
# objects too: the minimal build is built for size): the stamp
# obj/.with-HTTP-SHARE-REMOTE is the only one of its kind.
WITH = obj/.with-$(HTTP)-$(SHARE)-$(REMOTE)
mcp-workbench: $(OBJ) $(WITH)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

$(WITH): obj/.dirs
	rm -f obj/.with-*
	touch $@

# The minimal build beside the full one (make check-minimal, make sizes),
# as make HTTP=0 SHARE=0 builds it, in one compiler run of its own.
MIN_DIR = build-minimal
$(MIN_DIR)/mcp-workbench: $(MINSRC) $(HDR) Makefile obj/.dirs
	mkdir -p $(MIN_DIR)
	$(CC) $(ALL_CFLAGS) $(SMALL) -DWB_VERSION=\"$(VERSION)\" $(LDFLAGS) \
	    -o $@ $(MINSRC) $(LDLIBS)

# obj/ and obj/tests/, made once, after the check for jsmn.h.
obj/.dirs:
	@$(JSMN_CHECK)
	mkdir -p obj/tests
	touch $@

$(ALLOBJ): $(HDR) obj/.dirs $(WITH)
obj/util.o: Makefile

# One rule for each object (POSIX make has no rule from x.c to obj/x.o).
# The files no call, list or search runs through (the configuration,
# start-up, a server's handshake, open_toolbox's lean answers, the shared
# workbench's set-up, --probe, --status, processes and the catalogue's
# files, the guardian) are built for size: $(SMALL).
COMPILE = $(CC) $(ALL_CFLAGS) -c -o $@
obj/workbench.o: workbench.c; $(COMPILE) $(SMALL) workbench.c
obj/dispatch.o: dispatch.c; $(COMPILE) dispatch.c
obj/clients.o: clients.c; $(COMPILE) clients.c
obj/stdio.o: stdio.c; $(COMPILE) $(SMALL) stdio.c
obj/probe.o: probe.c; $(COMPILE) $(SMALL) probe.c
obj/toolbox.o: toolbox.c; $(COMPILE) toolbox.c
obj/lean.o: lean.c; $(COMPILE) $(SMALL) lean.c
obj/resources.o: resources.c; $(COMPILE) $(SMALL) resources.c
obj/dynamic.o: dynamic.c; $(COMPILE) dynamic.c
obj/search.o: search.c; $(COMPILE) search.c
obj/listen.o: listen.c; $(COMPILE) $(SMALL) listen.c
obj/server.o: server.c; $(COMPILE) server.c
obj/server_io.o: server_io.c; $(COMPILE) server_io.c
obj/server_loop.o: server_loop.c; $(COMPILE) server_loop.c
obj/handshake.o: handshake.c; $(COMPILE) $(SMALL) handshake.c
obj/call.o: call.c; $(COMPILE) call.c
obj/stream.o: stream.c; $(COMPILE) stream.c
obj/relay.o: relay.c; $(COMPILE) relay.c
obj/bridge.o: bridge.c; $(COMPILE) $(SMALL) bridge.c
obj/listing.o: listing.c; $(COMPILE) listing.c
obj/server_remote.o: server_remote.c; $(COMPILE) $(SMALL) server_remote.c
obj/catalog.o: catalog.c; $(COMPILE) $(SMALL) catalog.c
obj/session.o: session.c; $(COMPILE) session.c
obj/pace.o: pace.c; $(COMPILE) pace.c
obj/era.o: era.c; $(COMPILE) era.c
obj/peer.o: peer.c; $(COMPILE) peer.c
obj/procmgr.o: procmgr.c; $(COMPILE) $(SMALL) procmgr.c
obj/guard.o: guard.c; $(COMPILE) $(SMALL) guard.c
obj/toolname.o: toolname.c; $(COMPILE) $(SMALL) toolname.c
obj/terms.o: terms.c; $(COMPILE) terms.c
obj/thesaurus.o: thesaurus.c; $(COMPILE) $(SMALL) thesaurus.c
obj/config.o: config.c; $(COMPILE) $(SMALL) config.c
obj/config_keys.o: config_keys.c; $(COMPILE) $(SMALL) config_keys.c
obj/store.o: store.c; $(COMPILE) $(SMALL) store.c
obj/json.o: json.c; $(COMPILE) json.c
obj/json_scan.o: json_scan.c; $(COMPILE) json_scan.c
obj/json_out.o: json_out.c; $(COMPILE) json_out.c
obj/utf8.o: utf8.c; $(COMPILE) utf8.c
obj/jsonrpc.o: jsonrpc.c; $(COMPILE) jsonrpc.c
obj/util.o: util.c; $(COMPILE) -DWB_VERSION=\"$(VERSION)\" util.c
obj/loop.o: loop.c; $(COMPILE) loop.c
obj/http_listen.o: http_listen.c; $(COMPILE) $(SMALL) http_listen.c
obj/http_word.o: http_word.c; $(COMPILE) http_word.c
obj/http_host.o: http_host.c; $(COMPILE) http_host.c
obj/http_carry.o: http_carry.c; $(COMPILE) http_carry.c
obj/http.o: http.c; $(COMPILE) http.c
obj/http_out.o: http_out.c; $(COMPILE) http_out.c
obj/http_parse.o: http_parse.c; $(COMPILE) http_parse.c
obj/http_rules.o: http_rules.c; $(COMPILE) http_rules.c
obj/share_host.o: share_host.c; $(COMPILE) $(SMALL) share_host.c
obj/share_status.o: share_status.c; $(COMPILE) $(SMALL) share_status.c
obj/share.o: share.c; $(COMPILE) $(SMALL) share.c
obj/share_wire.o: share_wire.c; $(COMPILE) $(SMALL) share_wire.c
obj/share_daemon.o: share_daemon.c; $(COMPILE) $(SMALL) share_daemon.c
obj/front.o: front.c; $(COMPILE) $(SMALL) front.c
obj/remote.o: remote.c; $(COMPILE) $(SMALL) remote.c
obj/no_remote.o: no_remote.c; $(COMPILE) $(SMALL) no_remote.c
obj/remote_conn.o: remote_conn.c; $(COMPILE) $(SMALL) remote_conn.c
obj/remote_http.o: remote_http.c; $(COMPILE) $(SMALL) remote_http.c
obj/remote_sse.o: remote_sse.c; $(COMPILE) $(SMALL) remote_sse.c
obj/remote_tls.o: remote_tls.c; $(COMPILE) $(SMALL) remote_tls.c
obj/no_http.o: no_http.c; $(COMPILE) $(SMALL) no_http.c
obj/no_share.o: no_share.c; $(COMPILE) $(SMALL) no_share.c
obj/tests/unit.o: tests/unit.c; $(COMPILE) tests/unit.c
obj/tests/unit-share.o: tests/unit-share.c; $(COMPILE) tests/unit-share.c
obj/tests/unit-session.o: tests/unit-session.c; $(COMPILE) tests/unit-session.c
obj/tests/unit-loop.o: tests/unit-loop.c; $(COMPILE) tests/unit-loop.c
obj/tests/unit-remote.o: tests/unit-remote.c; $(COMPILE) tests/unit-remote.c
obj/tests/http-echo.o: tests/http-echo.c; $(COMPILE) tests/http-echo.c
tests/mock-server: tests/mock-server.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/mock-server.c $(LDLIBS)

tests/http-echo: obj/tests/http-echo.o $(LIBOBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ obj/tests/http-echo.o $(LIBOBJ) \
	    $(LDLIBS)

# The shared workbench's transport driven as front and daemon (e2e tests).
tests/share-probe: tests/share-probe.c $(LIBOBJ) $(HDR)
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/share-probe.c $(LIBOBJ) \
	    $(LDLIBS)

# The remote client driven alone against a server (tests/e2e/remote.test.mjs).
tests/remote-probe: tests/remote-probe.c $(LIBOBJ) $(HDR)
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/remote-probe.c $(LIBOBJ) \
	    $(LDLIBS)

example/example-server: example/example-server.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ example/example-server.c $(LDLIBS)

example/demo: example/demo.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ example/demo.c $(LDLIBS)

tests/unit: $(UNITOBJ) $(TESTOBJ) $(LIBOBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(UNITOBJ) $(TESTOBJ) $(LIBOBJ) \
	    $(LDLIBS)

# Benchmarks: each figure measured through the workbench and directly
# against the same server, in one run, printed with the ratio (bench/).
# BENCH_QUICK=1 for a short run.  Not part of `make check`.
bench: mcp-workbench tests/http-echo
	CC="$(CC)" sh bench/run.sh

# The README's first command: build, then a scripted session on the example.
demo: all
	./example/demo ./mcp-workbench example/workbench-config.json

# The README's second command: build and run every test.  CHECK_EXTRA
# names the slower checks run after the unit and end-to-end suites, one
# after the other (also under make -j: they time themselves), each to the
# end even when one fails; `make check CHECK_EXTRA=` runs only the suites.
CHECK_EXTRA ?= check-minimal check-install check-sizes check-static check-flags cross-check lint \
	fuzz asan valgrind

check: all tests/unit tests/node_modules
	sh tests/layers.sh
	./tests/unit
	node --test --test-concurrency=2 tests/e2e/
	@passed=0; failed=0; names=; \
	for t in $(CHECK_EXTRA); do \
		start=$$(date +%s); \
		echo "=== make $$t"; \
		if $(MAKE) $$t; then passed=$$((passed + 1)); \
		else failed=$$((failed + 1)); names="$$names $$t"; fi; \
		echo "=== make $$t: $$(($$(date +%s) - start)) s"; \
	done; \
	if [ -n "$$names" ]; then echo "make check: failed:$$names"; fi; \
	echo "extra: $$passed passed, $$failed failed"; \
	test "$$failed" -eq 0

# The unit and end-to-end suites alone.
test: all tests/unit tests/node_modules
	./tests/unit
	node --test --test-concurrency=2 tests/e2e/

tests/node_modules: tests/package.json tests/package-lock.json
	npm ci --prefix tests --no-audit --no-fund
	@touch tests/node_modules

install: mcp-workbench
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 \
	    $(DESTDIR)$(MANPREFIX)/man5 $(DESTDIR)$(MANPREFIX)/man7 \
	    $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	cp mcp-workbench $(DESTDIR)$(BINDIR)/mcp-workbench
	chmod 755 $(DESTDIR)$(BINDIR)/mcp-workbench
	cp man/mcp-workbench.1 $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1
	cp man/mcp-workbench-config.5 \
	    $(DESTDIR)$(MANPREFIX)/man5/mcp-workbench-config.5
	cp man/mcp-workbench.7 $(DESTDIR)$(MANPREFIX)/man7/mcp-workbench.7
	chmod 644 $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1 \
	    $(DESTDIR)$(MANPREFIX)/man5/mcp-workbench-config.5 \
	    $(DESTDIR)$(MANPREFIX)/man7/mcp-workbench.7
	cp example/workbench-config.json \
	    $(DESTDIR)$(DATADIR)/workbench-config.example.json
	chmod 644 $(DESTDIR)$(DATADIR)/workbench-config.example.json
	cp LICENSE $(DESTDIR)$(DOCDIR)/LICENSE
	chmod 644 $(DESTDIR)$(DOCDIR)/LICENSE

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mcp-workbench \
	    $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1 \
	    $(DESTDIR)$(MANPREFIX)/man5/mcp-workbench-config.5 \
	    $(DESTDIR)$(MANPREFIX)/man7/mcp-workbench.7 \
	    $(DESTDIR)$(DATADIR)/workbench-config.example.json \
	    $(DESTDIR)$(DOCDIR)/LICENSE
	-rmdir $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) 2>/dev/null

# The minimal build (HTTP=0 SHARE=0) in build-minimal/: --listen, "listen"
# and "share" refused, naming the build; the stdio suites against it.
check-minimal: mcp-workbench $(MIN_DIR)/mcp-workbench tests/mock-server tests/node_modules
	sh tests/minimal.sh $(MIN_DIR)/mcp-workbench

# `make install` stages what it should and `make uninstall` takes exactly
# that away again.
check-install: mcp-workbench
	sh tests/install.sh

# ---------------------------------------------------------------------------
# Static build with musl (Debian: musl-tools).  musl-gcc searches only
# musl's headers; jsmn.h alone is copied next to the build so that no glibc
# header can slip into a musl build.
MUSL_CC ?= musl-gcc
JSMN_INCLUDE ?= /usr/include
STATIC_CFLAGS ?= -O2
STATIC_LDFLAGS ?= -static
STATIC_DIR = build-static
# WB_STATIC: no dlopen() (remote_tls.c refuses https, saying why).
STATIC_ALL = $(WARN) $(DEFS) -DWB_STATIC $(CODEGEN) -I$(STATIC_DIR)/include $(STATIC_CFLAGS) \
	$(STATIC_LDFLAGS)

static: mcp-workbench-static example/example-server-static

$(STATIC_DIR)/include/jsmn.h:
	@command -v $(MUSL_CC) >/dev/null 2>&1 || { echo "mcp-workbench: $(MUSL_CC) not found; install Debian's musl-tools (apt-get install musl-tools)" >&2; exit 1; }
	@test -f $(JSMN_INCLUDE)/jsmn.h || { echo "mcp-workbench: $(JSMN_INCLUDE)/jsmn.h not found; install Debian's libjsmn-dev or set JSMN_INCLUDE" >&2; exit 1; }
	mkdir -p $(STATIC_DIR)/include
	cp $(JSMN_INCLUDE)/jsmn.h $@

mcp-workbench-static: $(SRC) $(HDR) Makefile $(STATIC_DIR)/include/jsmn.h
	$(MUSL_CC) $(STATIC_ALL) -DWB_VERSION=\"$(VERSION)\" -o $@ $(SRC)

# The minimal static build beside it (make sizes).
$(MIN_DIR)/mcp-workbench-static: $(MINSRC) $(HDR) Makefile \
	$(STATIC_DIR)/include/jsmn.h
	mkdir -p $(MIN_DIR)
	$(MUSL_CC) $(STATIC_ALL) -DWB_VERSION=\"$(VERSION)\" -o $@ $(MINSRC)

example/example-server-static: example/example-server.c $(STATIC_DIR)/include/jsmn.h
	$(MUSL_CC) $(STATIC_ALL) -o $@ example/example-server.c

# Both static programs alone in an otherwise empty root directory.
check-static: static
	bash tests/static.sh

# ---------------------------------------------------------------------------
# Cross builds, made as a packager makes them: for each target triplet in
# CROSS_TARGETS the sources are copied to build-cross/TRIPLET/ and built
# there by this Makefile with CC=TRIPLET-gcc, CFLAGS=$(CROSS_CFLAGS) and
# LDFLAGS=$(CROSS_LDFLAGS), and jsmn.h given through CPPFLAGS alone: a copy
# in build-cross/include, since a cross compiler must not search the
# host's /usr/include.  Debian: gcc-TRIPLET (with libc6-dev-ARCH-cross).
# The defaults: 32-bit little-endian ARM (armhf), big-endian 64-bit s390x,
# and big-endian 32-bit PowerPC, where a vector passed by value draws
# -Wpsabi.  `make cross-check` runs each target's unit tests and the demo
# under qemu-user (tests/cross.sh).
CROSS_TARGETS ?= arm-linux-gnueabihf s390x-linux-gnu powerpc-linux-gnu
CROSS_CFLAGS ?= -O2 -g
CROSS_LDFLAGS ?=
CROSS_DIR = build-cross

$(CROSS_DIR)/include/jsmn.h:
	@test -f $(JSMN_INCLUDE)/jsmn.h || { echo "mcp-workbench: $(JSMN_INCLUDE)/jsmn.h not found; install Debian's libjsmn-dev or set JSMN_INCLUDE" >&2; exit 1; }
	mkdir -p $(CROSS_DIR)/include
	cp $(JSMN_INCLUDE)/jsmn.h $@

cross: $(CROSS_DIR)/include/jsmn.h
	@for t in $(CROSS_TARGETS); do \
		command -v $$t-gcc >/dev/null 2>&1 || { echo "mcp-workbench: $$t-gcc not found; install Debian's gcc-$$t" >&2; exit 1; }; \
		d=$(CROSS_DIR)/$$t; \
		echo "=== cross build for $$t in $$d"; \
		mkdir -p $$d/tests $$d/example && \
		cp -p Makefile README.md LICENSE *.[ch] $$d && \
		cp -p tests/*.c $$d/tests && \
		cp -p example/*.c example/*.json $$d/example && \
		(cd $$d && $(MAKE) CC=$$t-gcc CPPFLAGS=-I../include \
		    HTTP=$(HTTP) SHARE=$(SHARE) \
		    CFLAGS="$(CROSS_CFLAGS)" LDFLAGS="$(CROSS_LDFLAGS)" \
		    all tests/unit $(MIN_DIR)/mcp-workbench) || exit 1; \
	done

cross-check: cross
	bash tests/cross.sh $(CROSS_DIR) $(CROSS_TARGETS)

# CC, CPPFLAGS, CFLAGS and LDFLAGS reach every command, the jsmn check
# included: a copy of the tree built with musl-gcc, which finds jsmn.h only
# through CPPFLAGS (tests/flags.sh).
check-flags:
	MUSL_CC="$(MUSL_CC)" JSMN_INCLUDE="$(JSMN_INCLUDE)" MAKE="$(MAKE)" \
	    sh tests/flags.sh

# bench/README.md's size table, measured on the native, static and cross builds
# and written between its "make sizes" marks (bench/sizes.sh).
sizes: mcp-workbench $(MIN_DIR)/mcp-workbench static \
	$(MIN_DIR)/mcp-workbench-static cross
	CC="$(CC)" CFLAGS="$(CFLAGS)" MUSL_CC="$(MUSL_CC)" \
	    STATIC_CFLAGS="$(STATIC_CFLAGS)" CROSS_CFLAGS="$(CROSS_CFLAGS)" \
	    MIN_DIR=$(MIN_DIR) sh bench/sizes.sh $(SIZES_DOC) $(CROSS_DIR) \
	    $(CROSS_TARGETS)

# The table's rows for this native build (machine, flags, compiler), full
# and minimal, must give their stripped size and text: a change that grows
# the binary comes with the table made again.  No row for this build
# fails too, and so does the full build over SIZE_MAX_FULL bytes,
# stripped; the minimal build's SIZE_MAX_MINIMAL is reported (a target
# not met yet).
SIZES_DOC = bench/README.md
SIZE_MAX_FULL = 330000
SIZE_MAX_MINIMAL = 200000
check-sizes: mcp-workbench $(MIN_DIR)/mcp-workbench
	CC="$(CC)" CFLAGS="$(CFLAGS)" MIN_DIR=$(MIN_DIR) \
	    SIZE_MAX_FULL=$(SIZE_MAX_FULL) SIZE_MAX_MINIMAL=$(SIZE_MAX_MINIMAL) \
	    sh bench/sizes.sh --check $(SIZES_DOC)

# ---------------------------------------------------------------------------
# AddressSanitizer and UndefinedBehaviorSanitizer: a separate build in
# build-asan/ (clang: see tests/san-options.c), then the unit and end-to-end
# suites against it.  Reports go to build-asan/logs/; any report fails.
SAN_CC ?= clang
SAN_CFLAGS ?= -O1 -g
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
ASAN_DIR = build-asan

$(ASAN_DIR)/mcp-workbench: $(SRC) $(HDR) Makefile tests/san-options.c
	@$(JSMN_CHECK)
	mkdir -p $(ASAN_DIR)
	$(SAN_CC) $(WARN) $(DEFS) $(CPPFLAGS) $(SAN_CFLAGS) $(SAN_FLAGS) \
	    -DWB_VERSION=\"$(VERSION)\" -DSAN_LOG_DIR=\"$$(cd $(ASAN_DIR) && pwd)/logs\" \
	    -o $@ $(SRC) tests/san-options.c

$(ASAN_DIR)/unit: $(UNITSRC) $(TESTSRC) $(LIBSRC) $(HDR) Makefile tests/san-options.c
	@$(JSMN_CHECK)
	mkdir -p $(ASAN_DIR)
	$(SAN_CC) $(WARN) $(DEFS) $(CPPFLAGS) $(SAN_CFLAGS) $(SAN_FLAGS) \
	    -DSAN_LOG_DIR=\"$$(cd $(ASAN_DIR) && pwd)/logs\" \
	    -o $@ $(UNITSRC) $(TESTSRC) $(LIBSRC) \
	    tests/san-options.c

$(ASAN_DIR)/http-echo: tests/http-echo.c $(LIBSRC) $(HDR) Makefile tests/san-options.c
	@$(JSMN_CHECK)
	mkdir -p $(ASAN_DIR)
	$(SAN_CC) $(WARN) $(DEFS) $(CPPFLAGS) $(SAN_CFLAGS) $(SAN_FLAGS) \
	    -DSAN_LOG_DIR=\"$$(cd $(ASAN_DIR) && pwd)/logs\" \
	    -o $@ tests/http-echo.c $(LIBSRC) tests/san-options.c

$(ASAN_DIR)/remote-probe: tests/remote-probe.c $(LIBSRC) $(HDR) Makefile \
	tests/san-options.c
	@$(JSMN_CHECK)
	mkdir -p $(ASAN_DIR)
	$(SAN_CC) $(WARN) $(DEFS) $(CPPFLAGS) $(SAN_CFLAGS) $(SAN_FLAGS) \
	    -DSAN_LOG_DIR=\"$$(cd $(ASAN_DIR) && pwd)/logs\" \
	    -o $@ tests/remote-probe.c $(LIBSRC) tests/san-options.c

# asan and valgrind run docs.test.mjs, which reads the table of keys
# from tests/unit.
asan: $(ASAN_DIR)/mcp-workbench $(ASAN_DIR)/unit $(ASAN_DIR)/http-echo \
	$(ASAN_DIR)/remote-probe \
	tests/mock-server tests/unit tests/node_modules
	sh tests/sanitizers.sh $(ASAN_DIR)

# The end-to-end suite with the workbench under valgrind's memcheck: zero
# errors, no definite or indirect leaks.  Logs in build-valgrind/logs/.
valgrind: mcp-workbench tests/mock-server tests/unit tests/node_modules
	sh tests/valgrind.sh build-valgrind

# ---------------------------------------------------------------------------
# libFuzzer targets (clang, Debian: clang and libclang-rt-dev).  `make fuzz`
# replays the committed corpora in fuzz/corpus/ and fuzzes each target for
# FUZZ_SECONDS (default 20); `make fuzz-long` fuzzes each for FUZZ_SECONDS
# (default 600) and keeps what it learns in build-fuzz/corpus/ between runs.
FUZZ_CC ?= clang
FUZZ_CFLAGS ?= -O1 -g
FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
FUZZ_DIR = build-fuzz
FUZZ_SECONDS ?=
FUZZ_TARGETS = $(FUZZ_DIR)/fuzz_jsonrpc $(FUZZ_DIR)/fuzz_config \
	$(FUZZ_DIR)/fuzz_toolname $(FUZZ_DIR)/fuzz_catalog \
	$(FUZZ_DIR)/fuzz_http $(FUZZ_DIR)/fuzz_share $(FUZZ_DIR)/fuzz_remote
FUZZ_BUILD = $(FUZZ_CC) -std=c11 -Wall -Wextra $(DEFS) $(CPPFLAGS) $(FUZZ_CFLAGS) \
	$(FUZZ_FLAGS)

$(FUZZ_DIR)/fuzz_jsonrpc: fuzz/fuzz_jsonrpc.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_jsonrpc.c $(LIBSRC)

$(FUZZ_DIR)/fuzz_config: fuzz/fuzz_config.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_config.c $(LIBSRC)

$(FUZZ_DIR)/fuzz_toolname: fuzz/fuzz_toolname.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_toolname.c $(LIBSRC)

# catalog.c whole, with stubs for what it calls above it.
$(FUZZ_DIR)/fuzz_catalog: fuzz/fuzz_catalog.c catalog.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_catalog.c catalog.c $(LIBSRC)
$(FUZZ_DIR)/fuzz_http: fuzz/fuzz_http.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_http.c $(LIBSRC)
$(FUZZ_DIR)/fuzz_share: fuzz/fuzz_share.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_share.c $(LIBSRC)
$(FUZZ_DIR)/fuzz_remote: fuzz/fuzz_remote.c $(LIBSRC) $(HDR)
	@$(JSMN_CHECK)
	mkdir -p $(FUZZ_DIR)
	$(FUZZ_BUILD) -o $@ fuzz/fuzz_remote.c $(LIBSRC)

fuzz: $(FUZZ_TARGETS)
	sh fuzz/run.sh short "$(FUZZ_SECONDS)" $(FUZZ_DIR)

fuzz-long: $(FUZZ_TARGETS)
	sh fuzz/run.sh long "$(FUZZ_SECONDS)" $(FUZZ_DIR)

# ---------------------------------------------------------------------------
# Static analysis: the layers (tests/layers.sh), cppcheck, then gcc's
# -fanalyzer, over every C file of the project.  Any finding fails;
# known false positives are suppressed inline or in tests/cppcheck.supp,
# each with its reason (tests/lint.sh).  Then the manual: mandoc -Tlint,
# and quotes that mdoc would drop or nest without a word
# (tests/manlint.sh).  All run, whatever the first says.
CPPCHECK ?= cppcheck
ANALYZER_CC ?= gcc
LINT_SRC = $(APPSRC) $(HTTP_1) $(SHARE_1) $(HTTP_0) $(SHARE_0) $(REMOTE_0) tests/unit.c tests/mock-server.c \
	tests/http-echo.c example/example-server.c example/demo.c \
	fuzz/fuzz_jsonrpc.c fuzz/fuzz_config.c fuzz/fuzz_toolname.c \
	fuzz/fuzz_catalog.c fuzz/fuzz_http.c tests/unit-share.c \
	tests/unit-session.c \
	tests/share-probe.c fuzz/fuzz_share.c $(REMOTESRC) \
	tests/unit-remote.c tests/remote-probe.c fuzz/fuzz_remote.c

# The manual pages, by reader: the command, its configuration, the concepts.
MANPAGES = man/mcp-workbench.1 man/mcp-workbench-config.5 man/mcp-workbench.7

# The layers of ARCHITECTURE.md against the #include lines.
check-layers:
	sh tests/layers.sh

lint:
	@status=0; \
	sh tests/layers.sh || status=1; \
	sh tests/shape.sh || status=1; \
	CPPCHECK="$(CPPCHECK)" ANALYZER_CC="$(ANALYZER_CC)" \
	    JSMN_INCLUDE="$(JSMN_INCLUDE)" sh tests/lint.sh $(LINT_SRC) || \
	    status=1; \
	sh tests/manlint.sh $(MANPAGES) || status=1; \
	for p in $(MANPAGES); do \
	    grep -q '^version $(VERSION)\.$$' $$p || { \
	    echo "lint: $$p does not say version $(VERSION)"; status=1; }; \
	done; \
	exit $$status

clean:
	rm -rf obj $(MIN_DIR)
	rm -f $(PROGS) tests/unit
	rm -f mcp-workbench-static example/example-server-static
	rm -rf $(STATIC_DIR) $(ASAN_DIR) $(FUZZ_DIR) $(CROSS_DIR) build-valgrind

.PHONY: all check test demo install uninstall clean check-install static \
	check-static asan valgrind fuzz fuzz-long lint bench cross cross-check \
	check-flags sizes check-sizes check-layers check-minimal
