/*
 * share_wire.c: the wire between a front and the shared workbench:
 * messages framed, and a HELLO encoded and decoded with every field
 * bounded and checked.
 *
 * The wire: a Unix stream socket, messages of a header of 8 bytes,
 * big-endian (the body's length:4, type:2, SHARE_PROTO:2), and a body:
 *
 *	front			daemon
 *	HELLO (+ fds 0, 1, 2)	  the kernel gives the front's uid and pid
 *				  (SO_PEERCRED); another uid is closed
 *		<- WELCOME	  a session; or REFUSE "why", then closed
 *	GO ->			  the session begins: the daemon owns the
 *				  stdio now, the socket stays as a lifeline
 *		<- END status	  the session ended; the front exits status
 *
 * A status request is a HELLO of kind status without descriptors; it is
 * answered with STATUS (the daemon's JSON, from its callback) or REFUSE,
 * then closed.  The HELLO's body is fields of tag:2, length:4 and value:
 * KIND (1 byte: 1 session, 2 status), ID (the 16-byte identity, which
 * must be the daemon's), CWD (absolute path), ENV ("NAME=value", one per
 * variable) and OPT ("name=value", the options that matter); the whole
 * at most 1 MiB.  Descriptors come with a session's first byte, exactly
 * three; any others are closed and the connection dropped.  The daemon
 * touches none of them before GO: a front that gives up (a timeout)
 * closes instead, keeps its stdio and runs on its own; the daemon then
 * closes its copies unused.  A front whose daemon closes before WELCOME
 * (it was going away) tries again under the lock.  Everything that
 * comes is bounded and checked, and each connection has SHARE_HANDSHAKE_MS
 * from accept to GO; a daemon never blocks on one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"
#include "jsonrpc.h"
#include "share.h"
#include "share_int.h"

enum share_field {
	FIELD_KIND = 1,
	FIELD_ID = 2,
	FIELD_CWD = 3,
	FIELD_ENV = 4,
	FIELD_OPT = 5
};

/*
 * The wire.
 */

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)(v & 0xff);
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16 & 0xff);
	p[2] = (unsigned char)(v >> 8 & 0xff);
	p[3] = (unsigned char)(v & 0xff);
}

/* Append a message of type with body[0, n). */
void
share_msg(struct buf *b, int type, const void *body, size_t n)
{
	unsigned char h[SHARE_HDR];

	put32(h, (uint32_t)n);
	put16(h + 4, (unsigned)type);
	put16(h + 6, SHARE_PROTO);
	buf_put(b, h, sizeof(h));
	buf_put(b, body, n);
}

static void
put_field(struct buf *b, int tag, const void *p, size_t n)
{
	unsigned char h[6];

	put16(h, (unsigned)tag);
	put32(h + 2, (uint32_t)n);
	buf_put(b, h, sizeof(h));
	buf_put(b, p, n);
}

/* "NAME=value" with a name: what ENV and OPT carry. */
static bool
is_assignment(const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);

	return eq != NULL && eq != s && memchr(s, '\0', n) == NULL;
}

/*
 * Append a HELLO: kind, identity, cwd (NULL for none), env and opt
 * (NULL-terminated, or NULL).  Variables that are not NAME=value are
 * left out, as a decoder would refuse them.  0, or -1 (EMSGSIZE, b as
 * it was) when it would be larger than a daemon takes.
 */
int
share_hello_encode(struct buf *b, enum share_kind kind,
    const unsigned char *id, const char *cwd, char *const *env,
    char *const *opt)
{
	unsigned char k = (unsigned char)kind;
	size_t start = b->len, i;

	share_msg(b, MSG_HELLO, NULL, 0);
	put_field(b, FIELD_KIND, &k, 1);
	put_field(b, FIELD_ID, id, SHARE_ID_LEN);
	if (cwd != NULL)
		put_field(b, FIELD_CWD, cwd, strlen(cwd));
	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (is_assignment(env[i], strlen(env[i])))
			put_field(b, FIELD_ENV, env[i], strlen(env[i]));
	for (i = 0; opt != NULL && opt[i] != NULL; i++)
		put_field(b, FIELD_OPT, opt[i], strlen(opt[i]));
	if (b->len - start - SHARE_HDR > SHARE_HELLO_MAX) {
		b->len = start;
		errno = EMSGSIZE;
		return -1;
	}
	put32((unsigned char *)b->data + start,
	    (uint32_t)(b->len - start - SHARE_HDR));
	return 0;
}

/* What a hello holds, counted by a first walk. */
struct tally {
	int		 kind, id, cwd;
	size_t		 nenv, nopt, bytes;
};

/* Check one field; 0, or -1 with why. */
static int
field_check(struct tally *t, unsigned tag, const unsigned char *v, size_t n,
    struct buf *why)
{
	switch (tag) {
	case FIELD_KIND:
		if (t->kind++ > 0 || n != 1 || (v[0] != SHARE_SESSION &&
		    v[0] != SHARE_STATUS))
			break;
		return 0;
	case FIELD_ID:
		if (t->id++ > 0 || n != SHARE_ID_LEN)
			break;
		return 0;
	case FIELD_CWD:
		if (t->cwd++ > 0 || n == 0 || n >= PATH_MAX || v[0] != '/' ||
		    memchr(v, '\0', n) != NULL)
			break;
		t->bytes += n + 1;
		return 0;
	case FIELD_ENV:
	case FIELD_OPT:
		if (!is_assignment((const char *)v, n) ||
		    (tag == FIELD_ENV ? ++t->nenv > SHARE_ENV_MAX :
		    ++t->nopt > SHARE_OPT_MAX))
			break;
		t->bytes += n + 1;
		return 0;
	default:
		buf_printf(why, "a field of unknown tag %u", tag);
		return -1;
	}
	buf_printf(why, "a bad field of tag %u (%zu bytes)", tag, n);
	return -1;
}

/* Walk the fields of body; with h, fill it (after a checking walk). */
static int
fields_walk(const unsigned char *p, size_t len, struct tally *t,
    struct share_hello *h, struct buf *why)
{
	char *s = NULL;
	unsigned tag;
	size_t off = 0, n;

	if (h != NULL)
		s = (char *)(h->env + t->nenv + 1 + t->nopt + 1);
	while (off < len) {
		if (len - off < 6) {
			buf_printf(why, "a field cut short");
			return -1;
		}
		tag = share_get16(p + off);
		n = share_get32(p + off + 2);
		off += 6;
		if (n > len - off) {
			buf_printf(why, "a field longer than the hello");
			return -1;
		}
		if (h == NULL && field_check(t, tag, p + off, n, why) < 0)
			return -1;
		if (h != NULL && tag == FIELD_KIND)
			h->kind = (enum share_kind)p[off];
		else if (h != NULL && tag == FIELD_ID)
			memcpy(h->id, p + off, SHARE_ID_LEN);
		else if (h != NULL) {
			memcpy(s, p + off, n);
			s[n] = '\0';
			if (tag == FIELD_CWD)
				h->cwd = s;
			else if (tag == FIELD_ENV)
				h->env[h->nenv++] = s;
			else
				h->opt[h->nopt++] = s;
			s += n + 1;
		}
		off += n;
	}
	return 0;
}

/*
 * Decode a HELLO's body into h, all of it in one block (h->mem, freed
 * by share_hello_free).  0, or -1 with why; h's descriptors are left
 * as they were.
 */
int
share_hello_decode(struct share_hello *h, const void *body, size_t len,
    struct buf *why)
{
	struct tally t = { 0, 0, 0, 0, 0, 0 };
	size_t ptrs;

	h->mem = NULL;
	h->env = h->opt = NULL;
	h->cwd = NULL;
	h->nenv = h->nopt = 0;
	if (len > SHARE_HELLO_MAX) {
		buf_printf(why, "a hello of %zu bytes (at most %d)", len,
		    SHARE_HELLO_MAX);
		return -1;
	}
	if (fields_walk(body, len, &t, NULL, why) < 0)
		return -1;
	if (t.kind == 0 || t.id == 0) {
		buf_printf(why, "a hello without its %s", t.kind == 0 ?
		    "kind" : "identity");
		return -1;
	}
	ptrs = (t.nenv + 1 + t.nopt + 1) * sizeof(char *);
	h->mem = xmalloc(ptrs + t.bytes);
	h->env = (char **)(void *)h->mem;
	h->opt = h->env + t.nenv + 1;
	(void)fields_walk(body, len, &t, h, why);
	h->env[h->nenv] = NULL;
	h->opt[h->nopt] = NULL;
	if (h->kind == SHARE_SESSION && h->cwd == NULL) {
		buf_printf(why, "a session's hello without its directory");
		share_hello_free(h);
		return -1;
	}
	return 0;
}

void
share_hello_free(struct share_hello *h)
{
	free(h->mem);
	h->mem = NULL;
	h->env = h->opt = NULL;
	h->cwd = NULL;
	h->nenv = h->nopt = 0;
}
