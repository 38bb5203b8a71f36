/*
 * http_listen.c: where the HTTP layer listens: the address as written
 * ("HOST:PORT", "[V6]:PORT", "localhost:PORT"; numeric only, so that no
 * resolver runs, at startup or later), whether it is loopback, and the
 * listening socket, with startup's words when it cannot be had.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "util.h"
#include "http.h"
#include "http_int.h"

bool
http_sockaddr_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
	    in6->sin6_addr.s6_addr[12] == 127;
}

static int
port_of(const char *s, unsigned *port)
{
	unsigned v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	*port = v;
	return 0;
}

/*
 * HOST:PORT, or [ADDRESS]:PORT, split: the host (without its brackets,
 * cut to size - 1 bytes) and the port; -1 with why.
 */
static int
split_spec(const char *spec, char *host, size_t size, unsigned *port,
    struct buf *err)
{
	const char *text = spec, *colon, *end;
	size_t n;

	if (spec[0] == '[') {
		if ((end = strchr(spec, ']')) == NULL || end[1] != ':') {
			buf_printf(err, "listen address '%s': an IPv6 address "
			    "is written [ADDRESS]:PORT", spec);
			return -1;
		}
		spec++;
		colon = end + 1;
	} else if ((colon = strrchr(spec, ':')) == NULL) {
		buf_printf(err, "listen address '%s' has no port: write "
		    "HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080", spec);
		return -1;
	} else
		end = colon;
	if (port_of(colon + 1, port) != 0) {
		buf_printf(err, "listen address '%s': the port must be a "
		    "number from 0 to 65535", text);
		return -1;
	}
	n = (size_t)(end - spec);
	if (n >= size)
		n = size - 1;
	memcpy(host, spec, n);
	host[n] = '\0';
	return 0;
}

/*
 * The address of host with port into a: an IPv6 address when it was
 * written in brackets (v6), else an IPv4 one or localhost.  False when
 * host is not one.
 */
static bool
sockaddr_of(struct http_addr *a, const char *host, bool v6, unsigned port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

	if (v6 && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		a->len = sizeof(*in6);
	} else if (!v6 && (strcmp(host, "localhost") == 0 ||
	    inet_pton(AF_INET, host, &in4->sin_addr) == 1)) {
		if (strcmp(host, "localhost") == 0)
			in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		a->len = sizeof(*in4);
	} else
		return false;
	return true;
}

/*
 * "HOST:PORT": an IPv4 address, "localhost" (127.0.0.1), or an IPv6
 * address in brackets.  Numeric only: no name is looked up, now or
 * later.  PORT 0 takes any free port (http_port says which).
 */
int
http_addr_parse(const char *spec, struct http_addr *a, struct buf *err)
{
	char host[64];
	unsigned port;
	bool v6 = spec[0] == '[';

	memset(a, 0, sizeof(*a));
	snprintf(a->text, sizeof(a->text), "%s", spec);
	if (split_spec(spec, host, sizeof(host), &port, err) != 0)
		return -1;
	if (!sockaddr_of(a, host, v6, port)) {
		buf_printf(err, "listen address '%s': '%s' is not a numeric "
		    "%s address%s", a->text, host, v6 ? "IPv6" : "IPv4",
		    v6 || strchr(host, ':') == NULL ? " (names are not looked "
		    "up; localhost is 127.0.0.1)" : "; an IPv6 address goes in "
		    "brackets: [::1]:PORT");
		return -1;
	}
	a->loopback = http_sockaddr_loopback((struct sockaddr *)&a->ss);
	return 0;
}

static void
listen_error(const struct http_addr *a, int e, struct buf *err)
{
	const char *why;

	switch (e) {
	case EADDRINUSE:
		why = "the address is in use (another program listens there)";
		break;
	case EACCES:
		why = "permission denied (ports below 1024 need privileges)";
		break;
	case EADDRNOTAVAIL:
		why = "no interface of this machine has that address";
		break;
	default:
		why = strerror(e);
	}
	buf_printf(err, "cannot listen on %s: %s", a->text, why);
}

int
http_listen_open(const struct http_addr *a, int *port, struct buf *err)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, one = 1, e;

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (fd < 0) {
		listen_error(a, errno, err);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		e = errno;
		close(fd);
		listen_error(a, e, err);
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}


/*
 * An address as the kernel's socket table writes it: each 32-bit word
 * as it lies in memory, in hex, then the port.
 */
static int
table_addr(const struct sockaddr_storage *ss, char *out, size_t n)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	uint32_t w[4];

	if (ss->ss_family == AF_INET) {
		snprintf(out, n, "%08X:%04X", (unsigned)in4->sin_addr.s_addr,
		    (unsigned)ntohs(in4->sin_port));
		return 0;
	}
	if (ss->ss_family != AF_INET6)
		return -1;
	memcpy(w, &in6->sin6_addr, sizeof(w));
	snprintf(out, n, "%08X%08X%08X%08X:%04X", (unsigned)w[0],
	    (unsigned)w[1], (unsigned)w[2], (unsigned)w[3],
	    (unsigned)ntohs(in6->sin6_port));
	return 0;
}

/*
 * Who owns the client's end of a loopback connection: its line in the
 * kernel's socket table (/proc/net/tcp or tcp6), whose local address is
 * the peer's and remote address ours, names the uid.  0 and *uid, or -1
 * when there is no such line (the client's socket is gone, or lives in
 * another network namespace) or the table cannot be read.
 */
int
http_peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	char local[64], rem[64], want_local[64], want_rem[64], line[512];
	unsigned u;
	FILE *f;
	int r = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    table_addr(&peer, want_local, sizeof(want_local)) < 0 ||
	    table_addr(&me, want_rem, sizeof(want_rem)) < 0)
		return -1;
	if ((f = fopen(me.ss_family == AF_INET ? "/proc/net/tcp" :
	    "/proc/net/tcp6", "re")) == NULL)
		return -1;
	while (r < 0 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %63s %63s %*s %*s %*s %*s %u", local, rem,
		    &u) == 3 && strcmp(local, want_local) == 0 &&
		    strcmp(rem, want_rem) == 0) {
			*uid = (uid_t)u;
			r = 0;
		}
	fclose(f);
	return r;
}
