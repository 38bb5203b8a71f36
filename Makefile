# mcp-workbench: POSIX make.  The version lives here and only here.
VERSION = 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANPREFIX ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/mcp-workbench
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
WARN = -std=c11 -Wall -Wextra -Werror
DEFS = -D_GNU_SOURCE -DJSMN_PARENT_LINKS -DJSMN_STRICT
ALL_CFLAGS = $(WARN) $(DEFS) $(CPPFLAGS) $(CFLAGS)

OBJ = workbench.o server.o jsonrpc.o procmgr.o toolname.o config.o util.o
LIBOBJ = jsonrpc.o procmgr.o toolname.o config.o util.o
PROGS = mcp-workbench tests/mock-server example/example-server example/demo

# One line that says what to install when jsmn is missing.
JSMN_CHECK = printf '\043include <jsmn.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 || \
	{ echo "mcp-workbench: jsmn.h not found; install Debian's libjsmn-dev (apt-get install libjsmn-dev)" >&2; exit 1; }

all: $(PROGS)

mcp-workbench: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ)

.SUFFIXES: .c .o
.c.o:
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(OBJ) tests/unit.o: workbench.h
workbench.o: Makefile
workbench.o: workbench.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) -DWB_VERSION=\"$(VERSION)\" -c -o $@ workbench.c

tests/mock-server: tests/mock-server.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/mock-server.c

example/example-server: example/example-server.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ example/example-server.c

example/demo: example/demo.c
	@$(JSMN_CHECK)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ example/demo.c

tests/unit: tests/unit.o $(LIBOBJ)
	$(CC) $(LDFLAGS) -o $@ tests/unit.o $(LIBOBJ)

# The README's first command: build, then a scripted session on the example.
demo: all
	./example/demo ./mcp-workbench example/workbench-config.json

# The README's second command: build and run every test.
check: all tests/unit tests/node_modules
	./tests/unit
	node --test --test-concurrency=2 tests/e2e/

tests/node_modules: tests/package.json tests/package-lock.json
	npm ci --prefix tests --no-audit --no-fund
	@touch tests/node_modules

install: mcp-workbench
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 \
	    $(DESTDIR)$(DATADIR)
	cp mcp-workbench $(DESTDIR)$(BINDIR)/mcp-workbench
	chmod 755 $(DESTDIR)$(BINDIR)/mcp-workbench
	sed 's/@VERSION@/$(VERSION)/g' man/mcp-workbench.1 \
	    > $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1
	chmod 644 $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1
	cp example/workbench-config.json \
	    $(DESTDIR)$(DATADIR)/workbench-config.example.json
	chmod 644 $(DESTDIR)$(DATADIR)/workbench-config.example.json

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mcp-workbench \
	    $(DESTDIR)$(MANPREFIX)/man1/mcp-workbench.1 \
	    $(DESTDIR)$(DATADIR)/workbench-config.example.json
	-rmdir $(DESTDIR)$(DATADIR) 2>/dev/null

clean:
	rm -f $(OBJ) tests/unit.o $(PROGS) tests/unit

.PHONY: all check demo install uninstall clean
