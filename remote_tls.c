/*
 * remote_tls.c: TLS for https members through the system's OpenSSL 3,
 * opened at run time with dlopen() the first time an https URL is used
 * (uhttpd loads ustream-ssl the same way): the binary never links it and
 * needs libc alone.  A table holds the few functions used, found with
 * dlsym(); the macros of ssl.h that stand for SSL_ctrl calls are made
 * here from their numbers, which are OpenSSL's ABI.
 *
 * The peer's certificate is verified against the system's trust store
 * (SSL_CTX_set_default_verify_paths: SSL_CERT_FILE and SSL_CERT_DIR
 * work), its name is checked against the URL's host (SSL_set1_host,
 * which takes an IP address too), SNI is sent for a name, and TLS 1.2 is
 * the least version.  There is no way to turn verification off.
 *
 * A static build cannot load a library: it refuses https with a line
 * that says what to use instead.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "remote_int.h"

#define LIBSSL		"libssl.so.3"
#define LIBCRYPTO	"libcrypto.so.3"
#define INSTALL_HINT	"(Debian: apt-get install libssl3; Alpine: apk add " \
			"libssl3; OpenWrt: opkg install libopenssl3)"

/* ssl.h's numbers: the ABI of OpenSSL 1.1 and 3. */
#define SSL_VERIFY_PEER			0x01
#define SSL_CTRL_MODE			33
#define SSL_MODE_ENABLE_PARTIAL_WRITE	0x01
#define SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER 0x02
#define SSL_CTRL_SET_TLSEXT_HOSTNAME	55
#define TLSEXT_NAMETYPE_host_name	0
#define SSL_CTRL_SET_MIN_PROTO_VERSION	123
#define TLS1_2_VERSION			0x0303
#define SSL_ERROR_SSL			1
#define SSL_ERROR_WANT_READ		2
#define SSL_ERROR_WANT_WRITE		3
#define SSL_ERROR_SYSCALL		5
#define SSL_ERROR_ZERO_RETURN		6
#define X509_V_OK			0

/* The functions used, by name, in the order of the table below. */
static struct {
	const void *(*TLS_client_method)(void);
	void	*(*SSL_CTX_new)(const void *);
	int	 (*SSL_CTX_set_default_verify_paths)(void *);
	void	 (*SSL_CTX_set_verify)(void *, int, void *);
	long	 (*SSL_CTX_ctrl)(void *, int, long, void *);
	void	*(*SSL_new)(void *);
	void	 (*SSL_free)(void *);
	int	 (*SSL_set_fd)(void *, int);
	int	 (*SSL_set1_host)(void *, const char *);
	long	 (*SSL_ctrl)(void *, int, long, void *);
	void	 (*SSL_set_connect_state)(void *);
	int	 (*SSL_do_handshake)(void *);
	int	 (*SSL_read)(void *, void *, int);
	int	 (*SSL_write)(void *, const void *, int);
	int	 (*SSL_get_error)(const void *, int);
	long	 (*SSL_get_verify_result)(const void *);
	int	 (*SSL_shutdown)(void *);
	const char *(*X509_verify_cert_error_string)(long);
	unsigned long (*ERR_get_error)(void);
	void	 (*ERR_error_string_n)(unsigned long, char *, size_t);
	void	 (*ERR_clear_error)(void);
} ssl;


struct tls {
	void	*ssl;
	bool	 done;			/* The handshake. */
};

static void *ctx;			/* The one SSL_CTX. */

#ifdef WB_STATIC
int
tls_load(struct buf *why)
{
	buf_puts(why, "https needs " LIBSSL ", which this static build "
	    "cannot load: use the dynamically linked mcp-workbench (make), "
	    "or reach the server through a stdio bridge");
	return -1;
}
#else
static const char *const names[] = {
	"TLS_client_method", "SSL_CTX_new",
	"SSL_CTX_set_default_verify_paths", "SSL_CTX_set_verify",
	"SSL_CTX_ctrl", "SSL_new", "SSL_free", "SSL_set_fd",
	"SSL_set1_host", "SSL_ctrl", "SSL_set_connect_state",
	"SSL_do_handshake", "SSL_read", "SSL_write", "SSL_get_error",
	"SSL_get_verify_result", "SSL_shutdown",
	"X509_verify_cert_error_string", "ERR_get_error",
	"ERR_error_string_n", "ERR_clear_error"
};

static int loaded;			/* 1: ready; -1: failed (why). */
static char failed_why[256];

/* Each name of the table, from libssl or the libcrypto it pulls in. */
static int
resolve(void *lib, void *crypto, struct buf *why)
{
	void **slot = (void **)&ssl;
	size_t i;

	/* The table is a run of pointers in the order of names[]. */
	_Static_assert(sizeof(ssl) == sizeof(names) / sizeof(names[0]) *
	    sizeof(void *), "the table and its names differ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((slot[i] = dlsym(lib, names[i])) == NULL &&
		    (slot[i] = dlsym(crypto, names[i])) == NULL) {
			buf_printf(why, "https needs OpenSSL 3's " LIBSSL
			    ", and the one found lacks %s", names[i]);
			return -1;
		}
	}
	return 0;
}

static int
load(struct buf *why)
{
	void *lib, *crypto;

	if ((lib = dlopen(LIBSSL, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		buf_puts(why, "https needs " LIBSSL " " INSTALL_HINT);
		return -1;
	}
	if ((crypto = dlopen(LIBCRYPTO, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		buf_puts(why, "https needs " LIBCRYPTO " " INSTALL_HINT);
		dlclose(lib);
		return -1;
	}
	/* Kept open for the process's life once the table is whole. */
	if (resolve(lib, crypto, why) < 0) {
		dlclose(crypto);
		dlclose(lib);
		return -1;
	}
	if ((ctx = ssl.SSL_CTX_new(ssl.TLS_client_method())) == NULL) {
		buf_puts(why, "TLS: cannot make a context");
		return -1;
	}
	if (ssl.SSL_CTX_set_default_verify_paths(ctx) != 1) {
		buf_puts(why, "TLS: cannot read the system's trust store");
		return -1;
	}
	ssl.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION,
	    NULL);
	/* A write waiting for the socket may go on from a moved buffer. */
	ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	return 0;
}

/* Load the library once; a failure is remembered and said again. */
int
tls_load(struct buf *why)
{
	struct buf b = { 0 };

	if (loaded == 0) {
		loaded = load(&b) == 0 ? 1 : -1;
		if (loaded < 0)
			snprintf(failed_why, sizeof(failed_why), "%s",
			    buf_cstr(&b));
		buf_free(&b);
	}
	if (loaded < 0)
		buf_puts(why, failed_why);
	return loaded > 0 ? 0 : -1;
}
#endif

/* Is host an IP address (no SNI for one, RFC 6066 3)? */
static bool
is_address(const char *host, bool v6)
{
	size_t i;

	if (v6)
		return true;
	for (i = 0; host[i] != '\0'; i++)
		if ((host[i] < '0' || host[i] > '9') && host[i] != '.')
			return false;
	return true;
}

/* A TLS client on the connected socket fd, for host. */
struct tls *
tls_new(int fd, const char *host, bool v6, struct buf *why)
{
	struct tls *t;

	if (tls_load(why) < 0)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	ssl.ERR_clear_error();
	if ((t->ssl = ssl.SSL_new(ctx)) == NULL ||
	    ssl.SSL_set_fd(t->ssl, fd) != 1 ||
	    ssl.SSL_set1_host(t->ssl, host) != 1 ||
	    (!is_address(host, v6) && ssl.SSL_ctrl(t->ssl,
	    SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
	    (void *)(uintptr_t)host) != 1)) {
		buf_puts(why, "TLS: cannot set up the connection");
		tls_free(t);
		return NULL;
	}
	ssl.SSL_set_connect_state(t->ssl);
	return t;
}

/*
 * What an operation that returned r means: TLS_WANT with the event to
 * wait for, or TLS_FAIL (0 from a read is the peer's close).
 */
static int
outcome(struct tls *t, int r, short *ev)
{
	switch (ssl.SSL_get_error(t->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		return TLS_WANT;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		return TLS_WANT;
	default:
		return TLS_FAIL;
	}
}

/* Why a handshake failed: the verification's verdict, or the library's. */
static void
handshake_why(struct tls *t, struct buf *why)
{
	long v = ssl.SSL_get_verify_result(t->ssl);
	unsigned long e = ssl.ERR_get_error();
	char s[256];

	if (v != X509_V_OK) {
		buf_printf(why, "the server's certificate is refused: %s",
		    ssl.X509_verify_cert_error_string(v));
		return;
	}
	if (e != 0) {
		ssl.ERR_error_string_n(e, s, sizeof(s));
		buf_printf(why, "TLS handshake failed: %s", s);
	} else
		buf_puts(why, "TLS handshake failed: the connection ended");
}

/* Drive the handshake: TLS_OK when done, TLS_WANT with ev, TLS_FAIL. */
int
tls_handshake(struct tls *t, short *ev, struct buf *why)
{
	int r;

	ssl.ERR_clear_error();
	if ((r = ssl.SSL_do_handshake(t->ssl)) == 1) {
		t->done = true;
		return TLS_OK;
	}
	if (outcome(t, r, ev) == TLS_WANT)
		return TLS_WANT;
	handshake_why(t, why);
	return TLS_FAIL;
}

/*
 * As read(2) on a non-blocking socket: bytes, 0 at the peer's close, or
 * -1 with errno EAGAIN (and ev the event to wait for) or EIO.
 */
ssize_t
tls_read(struct tls *t, void *p, size_t n, short *ev)
{
	int r;

	ssl.ERR_clear_error();
	errno = 0;
	if ((r = ssl.SSL_read(t->ssl, p, n > 1 << 30 ? 1 << 30 : (int)n)) > 0)
		return r;
	if (ssl.SSL_get_error(t->ssl, r) == SSL_ERROR_ZERO_RETURN)
		return 0;
	if (outcome(t, r, ev) == TLS_WANT) {
		errno = EAGAIN;
		return -1;
	}
	/* A close without close_notify is an end too: framing decides. */
	if (ssl.SSL_get_error(t->ssl, r) == SSL_ERROR_SYSCALL && errno == 0)
		return 0;
	errno = EIO;
	return -1;
}

ssize_t
tls_write(struct tls *t, const void *p, size_t n, short *ev)
{
	int r;

	ssl.ERR_clear_error();
	if ((r = ssl.SSL_write(t->ssl, p, n > 1 << 30 ? 1 << 30 : (int)n)) > 0)
		return r;
	if (outcome(t, r, ev) == TLS_WANT) {
		errno = EAGAIN;
		return -1;
	}
	errno = EPIPE;
	return -1;
}

/* Free t; the socket stays its owner's to close. */
void
tls_free(struct tls *t)
{
	if (t == NULL)
		return;
	if (t->ssl != NULL) {
		/* A close_notify if the socket takes it now; no waiting. */
		if (t->done)
			ssl.SSL_shutdown(t->ssl);
		ssl.SSL_free(t->ssl);
	}
	free(t);
}
