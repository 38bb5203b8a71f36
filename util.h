/*
 * util.h: layer 1, the bottom.  Memory, growable buffers and short
 * texts, arenas, hashes, descriptors and files, the clock, the log and
 * its rate limit.  Includes no header of the project: every file may
 * include it.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define WB_NAME			"mcp-workbench"
#define BUF_KEEP		(256 * 1024)	/* Buffers above shrink. */

extern const char wb_version[];

struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);

void	 buf_reserve(struct buf *, size_t);

/*
 * A copy of a short text kept in place, a longer one on the heap: a
 * call's id and tool name are copied per call, and usually fit.  (Moved
 * with the struct holding it; text_get finds the bytes wherever.)
 */
struct text {
	size_t	 len;
	char	*heap;			/* NULL when it fits in small. */
	char	 small[32];
};

void	 text_set(struct text *, const char *, size_t);
void	 text_free(struct text *);

static inline const char *
text_get(const struct text *t)
{
	return t->heap != NULL ? t->heap : t->small;
}

/*
 * Appending is most of what a proxied message costs besides checking it:
 * inline, with the growing out of line and strlen of a literal folded.
 */
static inline void
buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;		/* p may be NULL then. */
	if (b->cap - b->len <= n)
		buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void
buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static inline void
buf_putc(struct buf *b, char c)
{
	if (b->cap - b->len <= 1)
		buf_reserve(b, 1);
	b->data[b->len++] = c;
}
void	 buf_put_int(struct buf *, long long);
void	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 buf_consume(struct buf *, size_t);
void	 buf_shrink(struct buf *);
void	 buf_free(struct buf *);
char	*buf_cstr(struct buf *);

/*
 * An arena: small allocations carved from a few blocks, and large blocks
 * adopted whole, all freed together.  The names and entries of a list of
 * 10,000 tools live in one: a few allocations, not 20,000.
 */
struct arena {
	char	**blocks;
	size_t	  n;
	char	 *next;		/* Free room in the block carved last, */
	size_t	  room;		/* this many bytes. */
};

char	*arena_alloc(struct arena *, size_t);
char	*arena_adopt(struct arena *, char *);
char	*arena_strndup(struct arena *, const char *, size_t);
void	 arena_free(struct arena *);

/* FNV-1a: hash_bytes(HASH_INIT, p, n), or chained over several parts. */
#define HASH_INIT	2166136261u
unsigned long hash_bytes(unsigned long, const void *, size_t);

/*
 * SipHash-2-4 with a 128-bit tag, keyed: what names a thing on disk
 * without saying what it is.  sip_init, sip_update any number of times,
 * sip_final.
 */
#define SIP_KEY		16
#define SIP_TAG		16
struct siphash {
	uint64_t	 v[4];
	uint64_t	 tail;		/* The bytes of a word begun, */
	size_t		 n;		/* of so many in all. */
};

void	 sip_init(struct siphash *, const unsigned char *);
void	 sip_update(struct siphash *, const void *, size_t);
void	 sip_final(struct siphash *, unsigned char *);

char	*fd_read_all(int, size_t, size_t *);
int	 fd_write_all(int, const void *, size_t);
int	 fd_write_some(int, struct buf *, bool);
/*
 * Descriptors to go with a message (SCM_RIGHTS): fds[0, n) into ctl,
 * which holds CMSG_SPACE(n * sizeof(int)) bytes aligned for a cmsghdr.
 */
struct msghdr;
void	 msg_put_fds(struct msghdr *, void *, const int *, int);
void	 fd_close_from(int);
char	*file_read(const char *, size_t, size_t *);
int	 strp_cmp(const void *, const void *);
bool	 wb_random(void *, size_t);
long long earliest(long long, long long);
long long now_ms(void);
void	 loop_tick(void);
long long loop_ms(void);

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static inline size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, k;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void	 term_escape(struct buf *, const char *, size_t);

/*
 * The log's levels, most severe first (OpenSMTPD's log_warnx, log_info,
 * log_debug): a line is written where the level asked for ("logLevel",
 * -v) is its own or more verbose.  Info is the default, and says what
 * the log always said; debug adds a line for each message routed and
 * each process started and stopped.
 */
enum wb_level {
	WB_ERROR,
	WB_WARN,
	WB_INFO,
	WB_DEBUG
};

/*
 * The most verbose level anyone reads (ours, or a shared workbench's
 * session's): a line past it is not even formatted, so a debug line
 * costs one comparison while nobody asked for it.
 */
extern enum wb_level wb_log_reach;

#define WB_LOG(level, who, ...) do {					\
	if ((level) <= wb_log_reach)					\
		wb_log_at((level), (who), __VA_ARGS__);			\
} while (0)
#define wb_log_error(...)	WB_LOG(WB_ERROR, NULL, __VA_ARGS__)
#define wb_log_warn(...)	WB_LOG(WB_WARN, NULL, __VA_ARGS__)
#define wb_log_info(...)	WB_LOG(WB_INFO, NULL, __VA_ARGS__)
#define wb_log_debug(...)	WB_LOG(WB_DEBUG, NULL, __VA_ARGS__)
/* A debug line about one session's message: for that session alone. */
#define wb_log_debug_for(se, ...) WB_LOG(WB_DEBUG, (se), __VA_ARGS__)

/*
 * Text a peer chose (an id, a method) in a line of the log: LOG_PEER_FMT
 * in the format, LOG_PEER(p, n) in the arguments, which give at most
 * LOG_PEER_TEXT bytes of it and "..." for the rest.  wb_log_line then
 * escapes what a terminal would take for a control.
 */
#define LOG_PEER_TEXT		40
#define LOG_PEER_FMT		"%.*s%s"
#define LOG_PEER(p, n)							\
	(int)((n) > LOG_PEER_TEXT ? LOG_PEER_TEXT : (n)), (p),		\
	(n) > LOG_PEER_TEXT ? "..." : ""

extern const char *const wb_level_names[];	/* "error" ... "debug" */

void	 wb_log_at(enum wb_level, const void *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 wb_log_line(enum wb_level, const char *, size_t);
void	 wb_log_level(enum wb_level);
enum wb_level wb_log_level_get(void);
void	 wb_log_reaches(enum wb_level);
void	 wb_log_flush(void);
void	 wb_log_loop(void);
bool	 wb_log_waiting(void);
void	 wb_log_sink(bool (*)(enum wb_level, const void *, const char *,
	    size_t));

/*
 * Lines a peer can make us write at will: the first burst of an interval
 * of ms are shown, the rest counted, and the count shown once the
 * interval ends.  A sticky rule (warnings, one per line a server sends)
 * shows only the count of each interval while they go on, and the next
 * again after an interval without any; a plain one (a server's stderr,
 * as journald limits a service) shows a burst in every interval.  A
 * ratelog without a rule follows ratelog_warnings.
 */
struct ratelog_rule {
	enum wb_level	 level;		/* Of its lines and its counts. */
	int		 burst;
	long long	 ms;
	bool		 sticky;
	const char	*one;		/* "warning like the above" */
	const char	*many;		/* "warnings like the above" */
};

extern const struct ratelog_rule ratelog_warnings;	/* 5 per 10 s */
extern const struct ratelog_rule ratelog_stderr;	/* 10000 per 30 s */

struct ratelog {
	const struct ratelog_rule *rule;
	long long	 since;		/* The interval's start; 0: none open. */
	long long	 ended;		/* When the last one ended. */
	long long	 held;		/* Lines of this interval not shown. */
	int		 shown;		/* And shown. */
	bool		 flooding;	/* The last interval held some back. */
};

bool	 ratelog_allow(struct ratelog *, long long, const char *);
void	 ratelog_flush(struct ratelog *, long long, const char *, bool);
long long ratelog_deadline(const struct ratelog *);

#endif /* UTIL_H */
