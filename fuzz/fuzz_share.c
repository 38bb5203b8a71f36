/*
 * libFuzzer target: what a shared workbench reads from a connection.
 * The first byte chooses:
 *
 *  even	the rest is a HELLO's body for share_hello_decode; what it
 *		accepts must keep its rules (a kind, an identity, an
 *		absolute cwd for a session, NAME=value variables and
 *		options within their counts, no NUL inside), and encoded
 *		again it decodes to the same hello
 *  odd		the rest is what a peer sends on a real connection to a
 *		real daemon's socket (share_listen in a directory of its
 *		own), which is driven until it closes the connection; no
 *		session may begin (no descriptors come) and the daemon
 *		must be idle again afterwards.  Its warnings go to stderr,
 *		five per 10 s as always.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../share.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int LLVMFuzzerInitialize(int *, char ***);

static struct share_dir dir;
static struct share_id id;
static struct share_server *srv;

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_share: property broken: %s\n", what);
	abort();
}

static void
status(struct buf *b, void *arg)
{
	(void)arg;
	buf_puts(b, "{\"pid\":1,\"sessions\":[],\"servers\":[]}");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char tmp[] = "/tmp/fuzz-share.XXXXXX";
	unsigned char exe[SHARE_ID_LEN] = { 0 };
	struct buf why = { 0 }, path = { 0 };

	(void)argc;
	(void)argv;
	if (mkdtemp(tmp) == NULL)
		broken("mkdtemp");
	buf_printf(&path, "%s/s", tmp);
	if (share_dir_open(&dir, buf_cstr(&path), &why) < 0)
		broken(buf_cstr(&why));
	/* A known key, so that seeds can carry the identity. */
	memset(dir.key, 0, sizeof(dir.key));
	share_identity(&id, dir.key, "fuzz", exe, "{}", 2);
	if ((srv = share_listen(&dir, &id, 4, status, NULL, &why)) == NULL)
		broken(buf_cstr(&why));
	buf_free(&path);
	return 0;
}

static bool
assignment(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq != NULL && eq != s;
}

/* Two hellos are the same. */
static bool
same(const struct share_hello *a, const struct share_hello *b)
{
	size_t i;

	if (a->kind != b->kind || memcmp(a->id, b->id, SHARE_ID_LEN) != 0 ||
	    (a->cwd == NULL) != (b->cwd == NULL) ||
	    (a->cwd != NULL && strcmp(a->cwd, b->cwd) != 0) ||
	    a->nenv != b->nenv || a->nopt != b->nopt)
		return false;
	for (i = 0; i < a->nenv; i++)
		if (strcmp(a->env[i], b->env[i]) != 0)
			return false;
	for (i = 0; i < a->nopt; i++)
		if (strcmp(a->opt[i], b->opt[i]) != 0)
			return false;
	return true;
}

static void
decode(const uint8_t *data, size_t size)
{
	struct share_hello h, again;
	struct buf why = { 0 }, b = { 0 };
	size_t i;

	if (share_hello_decode(&h, data, size, &why) < 0) {
		if (why.len == 0)
			broken("refused without a reason");
		buf_free(&why);
		return;
	}
	if (h.kind != SHARE_SESSION && h.kind != SHARE_STATUS)
		broken("a kind that is neither");
	if (h.kind == SHARE_SESSION && h.cwd == NULL)
		broken("a session without its directory");
	if (h.cwd != NULL && h.cwd[0] != '/')
		broken("a relative directory");
	if (h.nenv > 16384 || h.nopt > 32 || h.env[h.nenv] != NULL ||
	    h.opt[h.nopt] != NULL)
		broken("counts");
	for (i = 0; i < h.nenv; i++)
		if (!assignment(h.env[i]))
			broken("a variable that is not NAME=value");
	for (i = 0; i < h.nopt; i++)
		if (!assignment(h.opt[i]))
			broken("an option that is not name=value");
	if (share_hello_encode(&b, h.kind, h.id, h.cwd, h.env, h.opt) < 0)
		broken("an accepted hello does not encode");
	if (share_hello_decode(&again, b.data + 8, b.len - 8, &why) < 0)
		broken("an encoded hello does not decode");
	if (!same(&h, &again))
		broken("encode and decode do not round-trip");
	share_hello_free(&h);
	share_hello_free(&again);
	buf_free(&b);
	buf_free(&why);
}

/* Send data on a new connection, drive the daemon until it closes it. */
static void
stream(const uint8_t *data, size_t size)
{
	struct pollfd pfd[SHARE_POLLFDS + 1];
	struct sockaddr_un sun;
	struct buf why = { 0 };
	char name[32], junk[4096];
	size_t off = 0;
	ssize_t n;
	int fd = -1, len, k, turns;
	long long now = now_ms();

	snprintf(name, sizeof(name), "%s.sock", id.name);
	if ((len = share_sockaddr(&dir, name, &sun, &why)) < 0 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, (socklen_t)len) < 0)
		broken("cannot connect");
	for (turns = 0;; turns++) {
		if (off < size && (n = send(fd, data + off, size - off,
		    MSG_NOSIGNAL)) > 0)
			off += (size_t)n;
		if (off == size)
			shutdown(fd, SHUT_WR);
		k = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
		poll(pfd, (nfds_t)k, 0);
		/* Time passes quickly here: deadlines come after 64 turns. */
		share_server_events(srv, pfd, k, now + (turns > 64 ?
		    20000 : 0));
		if (share_server_take(srv) != NULL)
			broken("a session began without descriptors");
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			break;
		if (turns > 100000)
			broken("the daemon never closed the connection");
	}
	close(fd);
	/* Everything it held for the connection is gone. */
	if (share_server_linger(srv, 1) == 0)
		broken("the daemon is not idle after the connection");
	buf_free(&why);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0)
		decode(data + 1, size - 1);
	else
		stream(data + 1, size - 1);
	return 0;
}
