/*
 * mcp-workbench: a stdio MCP server that aggregates other stdio MCP
 * servers.  main, the command line, startup, the single poll() loop,
 * signals and shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workbench.h"

#define SHUTDOWN_MS	1900

static int saved_fl[3] = { -1, -1, -1 };

/* A new pipe must never land on fds 0-2: keep them open. */
static void
guard_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);
}

static void
set_std_nonblock(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		saved_fl[i] = fcntl(i, F_GETFL);
		fcntl(i, F_SETFL, saved_fl[i] | O_NONBLOCK);
	}
}

/* O_NONBLOCK on 0-2 is shared with whoever started us: give it back. */
static void
restore_std_fds(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (saved_fl[i] >= 0)
			fcntl(i, F_SETFL, saved_fl[i]);
}

/*
 * The loop: every subsystem registered what it watches and its steps
 * (loop.h); shutdown may take SHUTDOWN_MS, then what still runs is the
 * guardian's.
 */
static void
run(void)
{
	(void)loop_run(SHUTDOWN_MS);
}

/*
 * Command line.
 */
static void
usage(FILE *f)
{
	fprintf(f, "usage: " WB_NAME " [-c FILE] [--mode proxy|dynamic] "
	    "[--listen HOST:PORT] [--check]\n"
	    "       [-v] [-V|--version] [-h|--help]\n"
	    "       " WB_NAME " [-c FILE] [--mode MODE] --status [--json]\n"
	    "       " WB_NAME " [-c FILE] --probe [--json] [--capabilities JSON] "
	    "[TOOLBOX ...]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nA stdio MCP server that groups other stdio MCP servers "
	    "into toolboxes.\n\n"
	    "  -c, --config FILE  configuration file (default: "
	    "$WORKBENCH_CONFIG,\n"
	    "                     else ./workbench-config.json)\n"
	    "      --mode MODE    proxy (meta-tools only) or dynamic (also "
	    "list opened\n"
	    "                     tools natively); overrides toolMode\n"
	    "      --listen HOST:PORT\n"
	    "                     serve MCP over Streamable HTTP at "
	    "http://HOST:PORT/mcp\n"
	    "                     instead of stdio (overrides \"listen\")\n"
	    "      --check        validate the configuration, list its "
	    "toolboxes, exit\n"
	    "      --probe        start the servers of the toolboxes named "
	    "(default: all),\n"
	    "                     report each one's state, tools and start "
	    "time, exit\n"
	    "      --status       say whether a shared workbench serves "
	    "this configuration:\n"
	    "                     its sessions and servers (exit 1: none "
	    "does)\n"
	    "      --json         --probe's report or --status as JSON\n"
	    "      --capabilities JSON\n"
	    "                     the client capabilities --probe declares "
	    "(default:\n"
	    "                     roots, sampling and elicitation)\n"
	    "  -v, --verbose      log at debug: each message routed, each "
	    "server process\n"
	    "                     started and stopped (overrides logLevel)\n"
	    "  -V, --version      print the version and exit\n"
	    "  -h, --help         print this help and exit\n\n"
	    "Exit status: 0 success, 1 invalid configuration (--probe: a "
	    "server failed),\n2 usage error, 3 cannot start, 4 the shared "
	    "workbench died or stopped.\n");
	/* A build that leaves some out says so (no_http.c, no_share.c). */
	if (hhost_left_out() != NULL)
		printf("--listen: %s.\n", hhost_left_out());
	if (host_left_out() != NULL)
		printf("--status: %s.\n", host_left_out());
	printf("See mcp-workbench(1).\n");
}

static void
print_check(const struct cfg *c)
{
	const struct cfg_toolbox *b;
	int i, k;

	if (c->http_problems != NULL)
		fprintf(stderr, "%s%s: warning: --listen would refuse this "
		    "configuration (the lines above); stdio sessions are "
		    "served\n", c->http_problems, c->path);
	printf("%s: OK, %d toolbox%s, mode %s\n", c->path, c->nboxes,
	    c->nboxes == 1 ? "" : "es", wb.mode == MODE_DYNAMIC ? "dynamic" :
	    "proxy");
	if (c->share)
		printf("shared: sessions share servers, linger %d ms, "
		    "directory %s\n", c->share_linger_ms, c->share_dir != NULL ?
		    c->share_dir : "$XDG_RUNTIME_DIR/" WB_NAME " (else /tmp/"
		    WB_NAME "-UID)");
	for (i = 0; i < c->nboxes; i++) {
		b = &c->boxes[i];
		printf("%s (%d server%s)%s%s\n", b->name, b->nservers,
		    b->nservers == 1 ? "" : "s", b->description[0] != '\0' ?
		    ": " : "", b->description);
		for (k = 0; k < b->nservers; k++)
			printf("  %s: %s%s%s\n", b->servers[k].name,
			    b->servers[k].command, b->servers[k].url == NULL ?
			    "" : b->servers[k].type == TYPE_SSE ? " (sse)" :
			    " (http)", c->share && !b->servers[k].share ?
			    " (one per session)" : "");
	}
}

/*
 * --check: can each remote server be reached in this build (the URL,
 * its headers, the TLS library for https)?  One line for each that
 * cannot; the URL is never quoted (a key may ride in it).
 */
static bool
check_remotes(const struct cfg *c)
{
	struct buf why = { 0 };
	const struct cfg_server *s;
	bool ok = true;
	int i, k;

	for (i = 0; i < c->nboxes; i++)
		for (k = 0; k < c->boxes[i].nservers; k++) {
			s = &c->boxes[i].servers[k];
			why.len = 0;
			if (s->url == NULL || srv_remote_check(s, &why) == 0)
				continue;
			fprintf(stderr, "%s: toolboxes.%s.mcpServers.%s: %s\n",
			    c->path, c->boxes[i].name, s->name,
			    buf_cstr(&why));
			ok = false;
		}
	buf_free(&why);
	return ok;
}

/* --check: what was read, once every remote server can be reached. */
static int
check(const struct cfg *c)
{
	if (!check_remotes(c)) {
		fprintf(stderr, WB_NAME ": %s: configuration is invalid\n",
		    c->path);
		return WB_EXIT_CONFIG;
	}
	print_check(c);
	return 0;
}

/* What the command line asks for. */
struct options {
	const char	*path;
	const char	*mode;
	bool		 check;
	bool		 probe;
	bool		 json;
	bool		 status;
	const char	*caps;		/* --capabilities */
	const char	*listen;	/* --listen */
	int		 verbose;	/* -v, as often as given */
};

static int
usage_error(const char *what)
{
	fprintf(stderr, WB_NAME ": %s\n", what);
	usage(stderr);
	return WB_EXIT_USAGE;
}

/*
 * The options that do not go together, said as usage errors: the exit
 * status, or -1 when they go.
 */
static int
check_options(int argc, const struct options *o)
{
	if ((optind < argc || o->caps != NULL) && !o->probe)
		return usage_error(optind < argc ? "unexpected argument" :
		    "--capabilities goes with --probe");
	if (o->json && !o->probe && !o->status)
		return usage_error("--json goes with --probe or --status");
	if (o->status && (o->probe || o->check || o->listen != NULL))
		return usage_error("--status goes with -c, --mode and --json "
		    "only");
	if (o->mode != NULL && strcmp(o->mode, "proxy") != 0 &&
	    strcmp(o->mode, "dynamic") != 0)
		return usage_error("--mode takes proxy or dynamic");
	if (o->probe && o->check)
		return usage_error("--probe and --check do not go together");
	if (o->listen != NULL && (o->probe || o->check))
		return usage_error(o->probe ? "--listen and --probe do not go "
		    "together" : "--listen and --check do not go together");
	return -1;
}

/* Parse the command line; returns an exit status, or -1 to go on. */
static int
parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'k' },
		{ "probe", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "status", no_argument, NULL, 's' },
		{ "capabilities", required_argument, NULL, 'C' },
		{ "listen", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:vVh", longopts, NULL)) != -1) {
		if (ch == 'c')
			o->path = optarg;
		else if (ch == 'm')
			o->mode = optarg;
		else if (ch == 'k')
			o->check = true;
		else if (ch == 'p')
			o->probe = true;
		else if (ch == 'j')
			o->json = true;
		else if (ch == 's')
			o->status = true;
		else if (ch == 'C')
			o->caps = optarg;
		else if (ch == 'L')
			o->listen = optarg;
		else if (ch == 'v')
			o->verbose++;
		else if (ch == 'V') {
			printf(WB_NAME " %s\n", wb_version);
			return 0;
		} else if (ch == 'h') {
			help();
			return 0;
		} else {
			usage(stderr);
			return WB_EXIT_USAGE;
		}
	}
	return check_options(argc, o);
}

/*
 * Why the configuration file cannot be read, and where its path came
 * from; for a missing file -c did not name, how to name one.
 */
static void
config_unreadable(const char *path, const char *origin, bool given, int err)
{
	struct stat st;
	char why[64];

	if (err == ENOENT && lstat(path, &st) == 0)
		snprintf(why, sizeof(why), "is a symbolic link to a file that "
		    "does not exist");
	else if (err == ENOENT)
		snprintf(why, sizeof(why), "does not exist");
	else if (err == EFBIG)
		snprintf(why, sizeof(why), "cannot be read: larger than %d "
		    "MiB", CFG_MAX_FILE >> 20);
	else
		snprintf(why, sizeof(why), "cannot be read: %s",
		    strerror(err));
	fprintf(stderr, WB_NAME ": no configuration: %s (%s) %s%s\n", path,
	    origin, why, err == ENOENT && !given ? "; name one with -c FILE" :
	    "");
	if (err == ENOENT && !given)
		usage(stderr);
}

/*
 * Load the configuration: -c FILE, else $WORKBENCH_CONFIG, else the
 * default.
 */
static bool
load_config(const char *path)
{
	const char *origin = "given with -c";
	bool given = path != NULL;
	int r;

	if (!given && (path = getenv("WORKBENCH_CONFIG")) != NULL)
		origin = "from WORKBENCH_CONFIG";
	else if (!given) {
		path = "workbench-config.json";
		origin = "the default: no -c FILE was given and "
		    "WORKBENCH_CONFIG is not set";
	}
	if ((r = cfg_load(&wb.cfg, path, stderr)) == 0)
		return true;
	if (r < 0)
		config_unreadable(path, origin, given, errno);
	else
		fprintf(stderr, WB_NAME ": %s: configuration is invalid\n",
		    path);
	return false;
}

/*
 * Whether this build has what the configuration asks for ("listen",
 * "share"); a build that leaves one out says so and names the build.
 */
static bool
build_has(const struct cfg *c)
{
	const char *why;

	if (c->listen != NULL && (why = hhost_left_out()) != NULL)
		fprintf(stderr, WB_NAME ": %s: \"listen\": %s\n", c->path, why);
	else if (c->share && (why = host_left_out()) != NULL)
		fprintf(stderr, WB_NAME ": %s: \"share\": true: %s\n", c->path,
		    why);
	else
		return true;
	return false;
}

/* Serve the sessions that come to the shared workbench until it ends. */
static void
serve_shared(void)
{
	dispatch_init();
	run();
}

/*
 * Serve the client on stdin and stdout until it leaves; or with listen,
 * HTTP clients until a signal (stdin and stdout are no one's then).
 */
static int
serve(const char *listen)
{
	struct buf err = { 0 };

	dispatch_init();
	if (listen != NULL && !hhost_start(listen, &err)) {
		fprintf(stderr, WB_NAME ": cannot listen: %s\n", buf_cstr(&err));
		buf_free(&err);
		return WB_EXIT_START;
	}
	if (listen == NULL)
		stdio_open();
	set_std_nonblock();
	run();
	restore_std_fds();
	return WB_EXIT_OK;
}

/*
 * The configuration read and checked against the build, and what it and
 * the options choose: the log's level and the mode.  False when it
 * cannot be had (said why).
 */
static bool
configure(const struct options *o)
{
	if (!load_config(o->path) || !build_has(&wb.cfg))
		return false;
	/* -v is debug, the most there is: more of them say no more. */
	wb_log_level(o->verbose > 0 ? WB_DEBUG : wb.cfg.log_level);
	wb.mode = o->mode != NULL ? (strcmp(o->mode, "dynamic") == 0 ?
	    MODE_DYNAMIC : MODE_PROXY) : wb.cfg.mode;
	return true;
}

/*
 * What registers with the loop before any transport: the signals and
 * the servers, the box layer, the client sessions, the log.
 */
static bool
loop_init(void)
{
	if (!srv_loop_init()) {
		fprintf(stderr, WB_NAME ": cannot set up signals: %s\n",
		    strerror(errno));
		return false;
	}
	box_init();
	clients_init();
	wb_log_loop();
	return true;
}

int
main(int argc, char *argv[])
{
	struct options o = { NULL, NULL, false, false, false, false, NULL, NULL,
	    0 };
	const char *serving = NULL, *listen;
	int r, ready;

	guard_std_fds();
	if ((ready = host_serve_args(&argc, &argv, &serving)) == -2)
		return WB_EXIT_USAGE;
	if ((r = parse_options(argc, argv, &o)) >= 0)
		return r;
	if (o.listen != NULL && hhost_left_out() != NULL) {
		fprintf(stderr, WB_NAME ": --listen: %s\n", hhost_left_out());
		return WB_EXIT_USAGE;
	}
	if (!configure(&o))
		return WB_EXIT_CONFIG;
	if (o.check)
		return check(&wb.cfg);
	listen = o.listen != NULL ? o.listen : wb.cfg.listen;
	if (listen != NULL && !cfg_http_usable(&wb.cfg, stderr))
		return WB_EXIT_CONFIG;
	if (o.status)
		return host_status(o.json);
	/*
	 * A front: the session is served by the shared workbench.  A
	 * listening workbench is a host of sessions itself and joins none.
	 */
	if (wb.cfg.share && ready < 0 && !o.probe && listen == NULL &&
	    (r = host_front(argv[0])) >= 0)
		return r;
	if (!loop_init())
		return WB_EXIT_START;
	if (ready >= 0) {
		if (!host_listen(serving, ready))
			return WB_EXIT_START;
		serve_shared();
		return WB_EXIT_OK;
	}
	if (!o.probe)
		return serve(listen);
	if (!probe_start(argv + optind, argc - optind, o.caps, o.json))
		return WB_EXIT_USAGE;
	run();
	return probe_status();
}
