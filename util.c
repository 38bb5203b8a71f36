/*
 * util.c: memory, growable buffers, the clock and the log queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "loop.h"

#ifndef WB_VERSION
#define WB_VERSION	"0.0.0"		/* Built outside the Makefile. */
#endif

const char wb_version[] = WB_VERSION;

/* The log queue on stderr; bounded so a stalled reader cannot grow us. */
#define LOG_CAP		(1024 * 1024)

static struct buf logq;
static size_t log_dropped;
static bool log_gone;		/* Standard error failed: nobody reads it. */
static bool (*log_sink)(enum wb_level, const void *, const char *, size_t);
static enum wb_level log_level = WB_INFO;	/* What our stderr gets. */
static enum wb_level log_others = WB_ERROR;	/* The sink's readers'. */
enum wb_level wb_log_reach = WB_INFO;

const char *const wb_level_names[] = { "error", "warning", "info", "debug",
    NULL };

static void
out_of_memory(size_t n)
{
	/*
	 * Every buffer is bounded, so this means the machine itself is out
	 * of memory; there is no sane way to carry on.
	 */
	static const char msg[] = WB_NAME ": out of memory\n";

	(void)n;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* Nothing more can be done. */
	}
	_exit(3);
}

void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		out_of_memory(n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		out_of_memory(n * size);
	return p;
}

void *
xrealloc(void *old, size_t n)
{
	void *p;

	if ((p = realloc(old, n == 0 ? 1 : n)) == NULL)
		out_of_memory(n);
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* s[0, n) into t, NUL-terminated; t was empty or freed. */
void
text_set(struct text *t, const char *s, size_t n)
{
	char *p = t->small;

	t->heap = NULL;
	if (n >= sizeof(t->small))
		p = t->heap = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	t->len = n;
}

void
text_free(struct text *t)
{
	free(t->heap);
	t->heap = NULL;
	t->len = 0;
	t->small[0] = '\0';
}

void
buf_reserve(struct buf *b, size_t more)
{
	size_t cap;

	if (b->cap - b->len > more)
		return;
	cap = b->cap < 256 ? 256 : b->cap;
	while (cap - b->len <= more)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

/* A decimal integer, without printf's cost on the hot path. */
void
buf_put_int(struct buf *b, long long v)
{
	char digits[24], *p = digits + sizeof(digits);
	unsigned long long u = (unsigned long long)v;

	if (v < 0)
		u = -u;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (v < 0)
		*--p = '-';
	buf_put(b, p, (size_t)(digits + sizeof(digits) - p));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Drop the first n bytes. */
void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

/*
 * After a large message has passed, give its memory back: a buffer much
 * larger than what it holds shrinks, so one 16 MiB result does not stay
 * resident for the rest of the session.
 */
void
buf_shrink(struct buf *b)
{
	size_t cap = b->len * 2 > BUF_KEEP ? b->len * 2 : BUF_KEEP;

	if (b->cap <= BUF_KEEP || b->len > b->cap / 8)
		return;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* The contents as a C string; the buffer keeps ownership. */
char *
buf_cstr(struct buf *b)
{
	buf_reserve(b, 1);
	b->data[b->len] = '\0';
	return b->data;
}

/*
 * Arenas.  A block is carved for allocations up to a quarter of its size;
 * a larger one gets a block of its own, so that the block being carved
 * is not left mostly empty.
 */
#define ARENA_BLOCK	(16 * 1024)

/* Free block with the arena; it must come from malloc.  Returns it. */
char *
arena_adopt(struct arena *a, char *block)
{
	size_t n = a->n;

	/* The array grows by doubling: its size follows from the count. */
	if (n == 0 || (n >= 8 && (n & (n - 1)) == 0))
		a->blocks = xrealloc(a->blocks, (n < 8 ? 8 : 2 * n) *
		    sizeof(*a->blocks));
	a->blocks[a->n++] = block;
	return block;
}

/* n bytes, unaligned (text only), freed with the arena. */
char *
arena_alloc(struct arena *a, size_t n)
{
	char *p;

	if (n > a->room) {
		if (n > ARENA_BLOCK / 4)
			return arena_adopt(a, xmalloc(n));
		a->next = arena_adopt(a, xmalloc(ARENA_BLOCK));
		a->room = ARENA_BLOCK;
	}
	p = a->next;
	a->next += n;
	a->room -= n;
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
arena_free(struct arena *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->blocks[i]);
	free(a->blocks);
	memset(a, 0, sizeof(*a));
}

unsigned long
hash_bytes(unsigned long h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ c[i]) * 16777619u;
	return h;
}

/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012) with the 128-bit output of its reference implementation:
 * the state is four 64-bit words, each 8-byte little-endian word of the
 * message is taken in with two rounds, and the length's low byte ends
 * the last word.
 */
#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static void
sip_round(uint64_t *v)
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

/* A little-endian word, whatever the machine's order. */
static uint64_t
le64(const unsigned char *p)
{
	uint64_t w = 0;
	int i;

	for (i = 7; i >= 0; i--)
		w = w << 8 | p[i];
	return w;
}

static void
put_le64(unsigned char *p, uint64_t w)
{
	int i;

	for (i = 0; i < 8; i++, w >>= 8)
		p[i] = (unsigned char)(w & 0xff);
}

static void
sip_word(struct siphash *h, uint64_t m)
{
	h->v[3] ^= m;
	sip_round(h->v);
	sip_round(h->v);
	h->v[0] ^= m;
}

void
sip_init(struct siphash *h, const unsigned char *key)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8);

	h->v[0] = k0 ^ 0x736f6d6570736575ULL;
	h->v[1] = k1 ^ 0x646f72616e646f6dULL ^ 0xee;	/* 128-bit tag */
	h->v[2] = k0 ^ 0x6c7967656e657261ULL;
	h->v[3] = k1 ^ 0x7465646279746573ULL;
	h->tail = 0;
	h->n = 0;
}

void
sip_update(struct siphash *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h->tail |= (uint64_t)c[i] << (8 * (h->n % 8));
		if (++h->n % 8 == 0) {
			sip_word(h, h->tail);
			h->tail = 0;
		}
	}
}

void
sip_final(struct siphash *h, unsigned char *tag)
{
	int i, half;

	sip_word(h, h->tail | (uint64_t)(h->n & 0xff) << 56);
	h->v[2] ^= 0xee;
	for (half = 0; half < 2; half++) {
		for (i = 0; i < 4; i++)
			sip_round(h->v);
		put_le64(tag + 8 * half, h->v[0] ^ h->v[1] ^ h->v[2] ^
		    h->v[3]);
		h->v[1] ^= 0xdd;
	}
	memset(h, 0, sizeof(*h));
}

/* Whether fd is a regular file with more than max bytes left to read. */
static bool
file_too_large(int fd, size_t max)
{
	struct stat st;
	off_t at;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (at = lseek(fd, 0, SEEK_CUR)) < 0 || st.st_size <= at)
		return false;
	return (unsigned long long)(st.st_size - at) > max;
}

/*
 * The rest of what fd reads, NUL-terminated, of at most max bytes; NULL
 * with errno (EFBIG when there is more: a regular file that says so by
 * its size is not read at all).  fd is left open.
 */
char *
fd_read_all(int fd, size_t max, size_t *len)
{
	struct buf b = { 0 };
	ssize_t n;

	if (file_too_large(fd, max)) {
		errno = EFBIG;
		return NULL;
	}
	for (;;) {
		buf_reserve(&b, 65536);
		n = read(fd, b.data + b.len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (b.len += (size_t)n) > max)
			break;
	}
	if (n < 0 || b.len > max) {
		buf_free(&b);
		errno = n < 0 ? errno : EFBIG;
		return NULL;
	}
	*len = b.len;
	return buf_cstr(&b);
}

/* Write p[0, n) whole to fd: 0, or -1 with errno. */
int
fd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, c, n)) < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* qsort's comparator for an array of strings (char *): strcmp's order. */
int
strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
msg_put_fds(struct msghdr *msg, void *ctl, const int *fds, int n)
{
	size_t len = sizeof(int) * (size_t)n;
	struct cmsghdr *cm;

	if (fds == NULL || n <= 0)
		return;
	memset(ctl, 0, CMSG_SPACE(len));
	msg->msg_control = ctl;
	msg->msg_controllen = CMSG_SPACE(len);
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), fds, len);
}

/*
 * Write what fd takes now of b, consuming it: 0 when all went or fd would
 * block (the rest waits in b), -1 when it fails (b as the last write that
 * went left it).  A socket (sock) is sent to with MSG_DONTWAIT, for one
 * that blocks, and MSG_NOSIGNAL, for a process that keeps SIGPIPE.
 */
int
fd_write_some(int fd, struct buf *b, bool sock)
{
	ssize_t n;

	while (b->len > 0) {
		n = sock ? send(fd, b->data, b->len, MSG_DONTWAIT |
		    MSG_NOSIGNAL) : write(fd, b->data, b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		buf_consume(b, (size_t)n);
	}
	return 0;
}

/* Close every descriptor from lowfd up (in a new child, whose fds the
 * parent placed). */
void
fd_close_from(int lowfd)
{
	long max, fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0)
		return;
#endif
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowfd; fd < max; fd++)
		close((int)fd);
}

/*
 * A whole file, NUL-terminated, of at most max bytes; NULL with errno
 * (EFBIG when it is larger).
 */
char *
file_read(const char *path, size_t max, size_t *len)
{
	char *text;
	int fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	text = fd_read_all(fd, max, len);
	saved = errno;
	close(fd);
	errno = saved;
	return text;
}

/*
 * n bytes no one can predict, from the kernel: getrandom(2), else
 * /dev/urandom (a kernel older than 3.17).  False when neither gives.
 */
bool
wb_random(void *p, size_t n)
{
	ssize_t got;
	int fd;

	if ((got = getrandom(p, n, GRND_NONBLOCK)) == (ssize_t)n)
		return true;
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	got = read(fd, p, n);
	close(fd);
	return got == (ssize_t)n;
}

/* The earlier of two deadlines, where 0 (or less) is none. */
long long
earliest(long long a, long long b)
{
	return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The time the poll loop last woke (loop_tick), for what runs per line:
 * one read's lines take far less than the millisecond timers count in,
 * and a clock read per line is a measurable part of a call.
 */
static long long loop_now;

void
loop_tick(void)
{
	loop_now = now_ms();
}

long long
loop_ms(void)
{
	return loop_now != 0 ? loop_now : now_ms();
}

/* Is the character c[0, k), valid UTF-8, a control character but tab? */
static bool
term_control(const unsigned char *c, size_t k)
{
	if (k == 1)
		return (c[0] < 0x20 && c[0] != '\t') || c[0] == 0x7f;
	return k == 2 && c[0] == 0xc2 && c[1] <= 0x9f;	/* C1 */
}

/*
 * Text for a terminal: s[0, n) with each control character (C0 but tab,
 * DEL, and C1 as UTF-8) and each byte that is not part of valid UTF-8
 * written as \xHH, every byte of it.  What a server says then cannot move
 * the cursor, set a title or colours, or overwrite a line, and a raw C1
 * byte is not taken for one by a terminal that is not in UTF-8.
 */
void
term_escape(struct buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k, run;

	for (i = 0; i < n; i += k) {
		for (run = i; run < n && u[run] >= 0x20 && u[run] < 0x7f; run++)
			;
		if (run > i) {		/* Plain ASCII, the usual case. */
			buf_put(out, s + i, run - i);
			k = run - i;
			continue;
		}
		if ((k = utf8_len(u + i, n - i)) == 0)
			k = 1;		/* Not UTF-8: this byte alone. */
		else if (!term_control(u + i, k)) {
			buf_put(out, s + i, k);
			continue;
		}
		for (run = i; run < i + k; run++) {
			buf_putc(out, '\\');
			buf_putc(out, 'x');
			buf_putc(out, hex[u[run] >> 4]);
			buf_putc(out, hex[u[run] & 15]);
		}
	}
}

/*
 * The level of our own log (standard error, or a shared workbench's
 * file): from "logLevel" and -v, at startup.
 */
void
wb_log_level(enum wb_level level)
{
	log_level = level;
	wb_log_reach = log_level > log_others ? log_level : log_others;
}

enum wb_level
wb_log_level_get(void)
{
	return log_level;
}

/*
 * The most verbose level the sink's readers ask for (a shared
 * workbench's sessions, each at its front's level): lines up to it are
 * formatted for the sink, which gives each reader what it asked for.
 */
void
wb_log_reaches(enum wb_level level)
{
	log_others = level;
	wb_log_level(log_level);
}

/*
 * Who else may take a line of the log, escaped and with its newline,
 * before our standard error does: a shared workbench gives a line about
 * a session's servers to that session (share_host.c).  It is told the
 * line's level, and the session the line is for (NULL: the one the loop
 * is handling, or none).
 */
void
wb_log_sink(bool (*sink)(enum wb_level, const void *, const char *, size_t))
{
	log_sink = sink;
}

/* A line to the sink, which takes it or not. */
static bool
log_sunk(enum wb_level level, const void *who, const char *s, size_t n)
{
	static struct buf b;	/* Kept: a line a time, escaped. */

	b.len = 0;
	buf_reserve(&b, n + 1);
	term_escape(&b, s, n);
	buf_putc(&b, '\n');
	return log_sink(level, who, b.data, b.len);
}

/*
 * Queue one line of log at level, s[0, n) without its newline, escaped
 * for a terminal (it may quote a server), and write what stderr takes
 * now; or give it to the sink.
 */
static void
log_line_for(enum wb_level level, const void *who, const char *s, size_t n)
{
	if (log_sink != NULL && log_sunk(level, who, s, n))
		return;
	if (log_gone || level > log_level)
		return;
	if (logq.len + n > LOG_CAP) {
		log_dropped += n + 1;
		return;
	}
	if (log_dropped > 0 && logq.len + 80 < LOG_CAP) {
		buf_printf(&logq, WB_NAME ": %zu bytes of log dropped "
		    "(stderr is not being read)\n", log_dropped);
		log_dropped = 0;
	}
	term_escape(&logq, s, n);
	buf_putc(&logq, '\n');
	wb_log_flush();
}

void
wb_log_line(enum wb_level level, const char *s, size_t n)
{
	if (level <= wb_log_reach)
		log_line_for(level, NULL, s, n);
}

/*
 * A line of ours at level, about who (a session, for the sink) or NULL;
 * a debug line says it is one.  The macros (wb_log_info and the others)
 * test the level before the arguments are even evaluated.
 */
void
wb_log_at(enum wb_level level, const void *who, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), WB_NAME ": %s",
	    level == WB_DEBUG ? "debug: " : "");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	log_line_for(level, who, line, (size_t)n);
}

const struct ratelog_rule ratelog_warnings = { WB_WARN, 5, 10000, true,
    "warning like the above", "warnings like the above" };
const struct ratelog_rule ratelog_stderr = { WB_INFO, 10000, 30000, false,
    "line of its standard error", "lines of its standard error" };

static const struct ratelog_rule *
rule_of(const struct ratelog *r)
{
	return r->rule != NULL ? r->rule : &ratelog_warnings;
}

/*
 * End r's interval if it is over (or at once with force: its peer is
 * going), showing how many lines it held back, from label.
 */
void
ratelog_flush(struct ratelog *r, long long now, const char *label,
    bool force)
{
	const struct ratelog_rule *rule = rule_of(r);
	long long secs;

	if (r->since == 0 || (!force && now - r->since < rule->ms))
		return;
	if (r->held > 0) {
		secs = (now - r->since + 500) / 1000;
		WB_LOG(rule->level, NULL, "%s: %lld more %s in the last "
		    "%lld s, not shown", label, r->held, r->held == 1 ?
		    rule->one : rule->many, secs > 0 ? secs : 1);
	}
	r->flooding = rule->sticky && r->held > 0;
	r->ended = force ? now : r->since + rule->ms;
	r->since = 0;
}

/* Whether to show a line from label now; one not shown is counted. */
bool
ratelog_allow(struct ratelog *r, long long now, const char *label)
{
	const struct ratelog_rule *rule = rule_of(r);

	ratelog_flush(r, now, label, false);
	if (r->since == 0) {
		if (r->flooding && now - r->ended >= rule->ms)
			r->flooding = false;
		r->since = now > 0 ? now : 1;
		r->shown = 0;
		r->held = 0;
	}
	if (!r->flooding && r->shown < rule->burst) {
		r->shown++;
		return true;
	}
	r->held++;
	return false;
}

/* When r's count is due, or 0: only an interval that held some back. */
long long
ratelog_deadline(const struct ratelog *r)
{
	return r->since != 0 && r->held > 0 ? r->since + rule_of(r)->ms : 0;
}

/*
 * Write what standard error takes now.  The rest waits for the loop to
 * see it writable (the log's step); a standard error that fails
 * otherwise has nobody behind it, and the log is let go.
 */
void
wb_log_flush(void)
{
	if (fd_write_some(STDERR_FILENO, &logq, false) < 0) {
		log_gone = true;
		logq.len = 0;
	}
}

/*
 * The log with the loop: its step runs last before poll, so that what
 * the turn logged is written; standard error is watched while some
 * waits (the loop wakes, and the step writes more).
 */
static struct loop_io log_io;

static void
log_ready(void *arg, int fd, short revents)
{
	(void)arg;
	(void)fd;
	(void)revents;
}

/* Does log wait for standard error to take it? */
bool
wb_log_waiting(void)
{
	return logq.len > 0;
}

static void
log_before_poll(void)
{
	wb_log_flush();
	if (wb_log_waiting())
		loop_io_set(&log_io, STDERR_FILENO, POLLOUT, log_ready, NULL);
	else
		loop_io_del(&log_io);
}

static const struct loop_step log_step = {
	LOOP_LAST, log_before_poll, NULL, NULL, NULL, NULL
};

void
wb_log_loop(void)
{
	loop_step_add(&log_step);
}
