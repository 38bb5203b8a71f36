/*
 * remote-probe: remote.c driven alone on the loop, for the end-to-end
 * tests (tests/e2e/remote.test.mjs).
 *
 *	remote-probe [-t http|sse] [-H NAME:VALUE]... [-c MS] [-s MS] URL
 *
 * -c: the connect timeout; -s: a head or JSON body's stall.
 *
 * Opens the remote and reads commands on stdin, one a line:
 *	a JSON line	sent to the server (remote_send);
 *	ready VERSION	initialize is done (remote_ready);
 *	session		prints "session ID" or "session none";
 *	wait MS		reads the next command MS later;
 *	close		ends the session (remote_close) and exits once it
 *			is ended; so does the end of stdin.
 * and says on stdout what it hears, one a line:
 *	< LINE		a message from the server;
 *	refused WHY	a line the server did not take;
 *	lost		the session is lost (404);
 *	failed WHY	the remote failed;
 *	open failed: WHY (exit 2), closed (exit 0).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util.h"
#include "../loop.h"
#include "../remote.h"

#define MAX_HEADERS	8

static struct remote *rem;
static struct loop_io in_io;
static struct buf inbuf;
static struct loop_timer resume_timer;
static bool waiting, in_eof;

static void	 drain(void);

static void
say(const char *what, const char *s, size_t n)
{
	printf("%s%.*s\n", what, (int)n, s);
	fflush(stdout);
}

static void
on_message(void *ctx, char *line, size_t n)
{
	(void)ctx;
	if (memchr(line, '\n', n) != NULL)
		say("BROKEN newline in ", line, n);
	say("< ", line, n);
}

static void
on_refused(void *ctx, const char *line, size_t n, int code, const char *why)
{
	(void)ctx;
	(void)code;
	(void)line;
	(void)n;
	say("refused ", why, strlen(why));
}

static void
on_lost(void *ctx)
{
	(void)ctx;
	say("lost", "", 0);
}

static void
on_failed(void *ctx, const char *why)
{
	(void)ctx;
	say("failed ", why, strlen(why));
}

static const struct remote_ops ops = {
	on_message, on_refused, on_lost, on_failed
};

static void
finish(void)
{
	loop_io_del(&in_io);
	remote_close(rem);
	rem = NULL;
	loop_stop("closed");
}

static void
resume(void *arg)
{
	(void)arg;
	waiting = false;
	drain();
}

static void
command(char *s, size_t n)
{
	const char *sid;

	if (n == 0)
		return;
	if (rem == NULL)
		return;
	if (s[0] == '{' || s[0] == '[') {
		if (remote_send(rem, s, n) < 0)
			say("send failed: ", strerror(errno),
			    strlen(strerror(errno)));
	} else if (n > 6 && strncmp(s, "ready ", 6) == 0) {
		s[n] = '\0';
		remote_ready(rem, s + 6);
	} else if (n == 7 && strncmp(s, "session", 7) == 0) {
		sid = remote_session(rem);
		say("session ", sid != NULL ? sid : "none",
		    strlen(sid != NULL ? sid : "none"));
	} else if (n > 5 && strncmp(s, "wait ", 5) == 0) {
		s[n] = '\0';
		waiting = true;
		loop_timer_set(&resume_timer, now_ms() + atoi(s + 5), resume,
		    NULL);
	} else if (n == 5 && strncmp(s, "close", 5) == 0)
		finish();
	else
		say("unknown command: ", s, n);
}

static void
on_stdin(void *arg, int fd, short rev)
{
	ssize_t n;

	(void)arg;
	(void)rev;
	buf_reserve(&inbuf, 65536);
	n = read(fd, inbuf.data + inbuf.len, 65536);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		in_eof = true;
		loop_io_del(&in_io);
	} else
		inbuf.len += (size_t)n;
	drain();
}

/* The commands read, up to a wait; the end of stdin ends the probe. */
static void
drain(void)
{
	char *nl;
	size_t len;

	while (rem != NULL && !waiting &&
	    (nl = memchr(inbuf.data, '\n', inbuf.len)) != NULL) {
		len = (size_t)(nl - inbuf.data);
		command(inbuf.data, len);
		buf_consume(&inbuf, len + 1);
	}
	if (rem != NULL && !waiting && in_eof)
		finish();
}

static bool
finished(void)
{
	return remote_closing() == 0;
}

static const struct loop_step step = {
	LOOP_LAST, NULL, NULL, finished, NULL, NULL
};

int
main(int argc, char **argv)
{
	struct remote_header hdrs[MAX_HEADERS];
	struct remote_config cfg;
	struct buf err = { 0 };
	char *colon;
	int c;

	signal(SIGPIPE, SIG_IGN);
	memset(&cfg, 0, sizeof(cfg));
	cfg.type = REMOTE_HTTP;
	cfg.headers = hdrs;
	while ((c = getopt(argc, argv, "t:H:c:s:")) != -1) {
		switch (c) {
		case 't':
			cfg.type = strcmp(optarg, "sse") == 0 ? REMOTE_SSE :
			    REMOTE_HTTP;
			break;
		case 'H':
			if (cfg.nheaders == MAX_HEADERS ||
			    (colon = strchr(optarg, ':')) == NULL)
				return 2;
			*colon = '\0';
			hdrs[cfg.nheaders].name = optarg;
			hdrs[cfg.nheaders++].value = colon + 1;
			break;
		case 'c':
			cfg.connect_ms = atoi(optarg);
			break;
		case 's':
			cfg.stall_ms = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: remote-probe [-t http|sse] "
		    "[-H NAME:VALUE]... [-c MS] [-s MS] URL\n");
		return 2;
	}
	cfg.url = argv[optind];
	if ((rem = remote_open(&cfg, &ops, NULL, &err)) == NULL) {
		printf("open failed: %s\n", buf_cstr(&err));
		buf_free(&err);
		return 2;
	}
	loop_step_add(&step);
	loop_io_set(&in_io, STDIN_FILENO, POLLIN, on_stdin, NULL);
	loop_run(5000);
	buf_free(&inbuf);
	buf_free(&err);
	say("closed", "", 0);
	return 0;
}
