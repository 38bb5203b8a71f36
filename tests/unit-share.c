/*
 * Unit tests of the shared workbench's transport (share.c, front.c):
 * the digest, the directory and its key, identities, the hello's
 * encoding and its decoder's bounds, and the daemon's side driven in
 * this process against fronts forked from it and hand-made peers.
 * Linked into tests/unit, which counts the checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
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
#include "../share_int.h"

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)
#define NOBODY	65534

void	 check(int, const char *, const char *, int);
void	 test_share(void);

static char tmp[64];		/* This run's directory. */

/* Remove a tree (nftw's callback). */
static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

/* tmp/rel, in a static buffer (two at a time). */
static const char *
at(const char *rel)
{
	static char paths[2][PATH_MAX];
	static int k;

	k ^= 1;
	if (strlen(tmp) + strlen(rel) + 2 > sizeof(paths[k]))
		abort();
	memcpy(paths[k], tmp, strlen(tmp));
	paths[k][strlen(tmp)] = '/';
	memcpy(paths[k] + strlen(tmp) + 1, rel, strlen(rel) + 1);
	return paths[k];
}

static bool
contains(const struct buf *b, const char *s)
{
	struct buf copy = { 0 };
	bool r;

	buf_put(&copy, b->data, b->len);
	r = strstr(buf_cstr(&copy), s) != NULL;
	if (!r)
		fprintf(stderr, "share: expected \"%s\" in \"%s\"\n", s,
		    copy.data);
	buf_free(&copy);
	return r;
}

/*
 * share_digest is util.c's SipHash-2-4 with the 128-bit tag, whose 64
 * reference vectors tests/unit.c checks (test_siphash): here the first
 * and the last of them (key 00..0f, message 00..len-1), in one call.
 */
static void
test_share_digest(void)
{
	static const struct { size_t len; const char *tag; } vec[] = {
		{ 0, "a3817f04ba25a8e66df67214c7550293" },
		{ 63, "5150d1772f50834a503e069a973fbd7c" },
	};
	unsigned char key[16], msg[64], tag[16], exe[16], whole[16] = { 0 };
	char hex[33];
	size_t len, i, v;
	char *text;
	struct buf why = { 0 };

	for (i = 0; i < 64; i++)
		msg[i] = (unsigned char)i;
	for (i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	for (v = 0; v < sizeof(vec) / sizeof(vec[0]); v++) {
		share_digest(key, msg, vec[v].len, tag);
		for (i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", tag[i]);
		CHECK(strcmp(hex, vec[v].tag) == 0);
	}
	/* The executable's digest, read in blocks, is the one of its bytes. */
	memset(key, 0, sizeof(key));
	CHECK(share_exe_digest(exe, &why) == 0);
	text = file_read("/proc/self/exe", 64u << 20, &len);
	CHECK(text != NULL);
	if (text != NULL)
		share_digest(key, text, len, whole);
	CHECK(text != NULL && memcmp(exe, whole, 16) == 0);
	free(text);
	buf_free(&why);
}

/* share_dir_open of path: its verdict; the reason in why. */
static int
dir_open(const char *path, struct buf *why)
{
	struct share_dir d;
	int r;

	why->len = 0;
	if ((r = share_dir_open(&d, path, why)) == 0)
		share_dir_close(&d);
	return r;
}

static void
test_share_dir_path(void)
{
	struct buf path = { 0 }, why = { 0 };
	char *saved = getenv("XDG_RUNTIME_DIR"), expect[64];

	saved = saved != NULL ? xstrdup(saved) : NULL;
	setenv("XDG_RUNTIME_DIR", "/run/user/7//", 1);
	CHECK(share_dir_path(NULL, &path, &why) == 0 &&
	    strcmp(buf_cstr(&path), "/run/user/7/mcp-workbench") == 0);
	snprintf(expect, sizeof(expect), "/tmp/mcp-workbench-%lu",
	    (unsigned long)geteuid());
	setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
	CHECK(share_dir_path(NULL, &path, &why) == 0 &&
	    strcmp(buf_cstr(&path), expect) == 0);
	unsetenv("XDG_RUNTIME_DIR");
	CHECK(share_dir_path(NULL, &path, &why) == 0 &&
	    strcmp(buf_cstr(&path), expect) == 0);
	CHECK(share_dir_path("/a/b/", &path, &why) == 0 &&
	    strcmp(buf_cstr(&path), "/a/b") == 0);
	CHECK(share_dir_path("a/b", &path, &why) < 0 &&
	    contains(&why, "shareDir a/b is not an absolute path"));
	if (saved != NULL)
		setenv("XDG_RUNTIME_DIR", saved, 1);
	free(saved);
	buf_free(&path);
	buf_free(&why);
}

/* A path of n bytes under tmp, its directories made (0700). */
static char *
long_dir(size_t n)
{
	struct buf b = { 0 };

	buf_puts(&b, at("long"));
	mkdir(buf_cstr(&b), 0700);
	while (b.len + 1 < n) {
		buf_puts(&b, "/");
		while (b.len < n && b.len % 200 != 0)
			buf_putc(&b, 'x');
		mkdir(buf_cstr(&b), 0700);
	}
	return buf_cstr(&b);
}

static void
test_share_dir(void)
{
	struct buf why = { 0 }, big = { 0 };
	struct share_dir d;
	struct stat st;
	unsigned char key[16];
	bool root = geteuid() == 0;
	char *deep;

	/* Made 0700 when missing; a key made once, 0600, kept. */
	CHECK(share_dir_open(&d, at("s"), &why) == 0);
	CHECK(stat(at("s"), &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(at("s/key"), &st) == 0 && (st.st_mode & 0777) == 0600 &&
	    st.st_size == 16);
	memcpy(key, d.key, 16);
	share_dir_close(&d);
	CHECK(share_dir_open(&d, at("s/"), &why) == 0 &&
	    memcmp(key, d.key, 16) == 0 && strcmp(d.path, at("s")) == 0);
	share_dir_close(&d);

	/* Only the last level is made. */
	CHECK(dir_open(at("none/s"), &why) < 0 && contains(&why,
	    "cannot create") && contains(&why, "No such file or directory"));

	/* Symbolic link, not a directory, open to others, another's. */
	symlink(at("s"), at("link"));
	CHECK(dir_open(at("link"), &why) < 0 &&
	    contains(&why, "link is a symbolic link"));
	close(open(at("file"), O_CREAT | O_WRONLY, 0600));
	CHECK(dir_open(at("file"), &why) < 0 &&
	    contains(&why, "file is not a directory"));
	mkdir(at("open"), 0700);
	chmod(at("open"), 0770);
	CHECK(dir_open(at("open"), &why) < 0 &&
	    contains(&why, "is open to group or others (mode 0770)"));
	chmod(at("open"), 0701);
	CHECK(dir_open(at("open"), &why) < 0 &&
	    contains(&why, "(mode 0701)"));
	chmod(at("open"), 01777);
	CHECK(dir_open(at("open"), &why) < 0 &&
	    contains(&why, "(mode 1777)"));
	if (root) {
		mkdir(at("theirs"), 0700);
		CHECK(chown(at("theirs"), NOBODY, NOBODY) == 0);
		CHECK(dir_open(at("theirs"), &why) < 0 &&
		    contains(&why, "is owned by uid 65534, not by this user"));
	}

	/* Too long for a path; longer than a socket address is fine. */
	buf_puts(&big, "/");
	while (big.len < PATH_MAX + 10)
		buf_puts(&big, "abcdefgh/");
	CHECK(dir_open(buf_cstr(&big), &why) < 0 &&
	    contains(&why, "path is too long"));
	deep = long_dir(300);
	CHECK(strlen(deep) >= 108 && dir_open(deep, &why) == 0);
	free(deep);

	/* The key: a link, a wrong size, open to others, another's. */
	CHECK(unlink(at("s/key")) == 0 && symlink(at("file"), at("s/key")) ==
	    0);
	CHECK(dir_open(at("s"), &why) < 0 &&
	    contains(&why, "key is a symbolic link"));
	unlink(at("s/key"));
	close(open(at("s/key"), O_CREAT | O_WRONLY, 0600));
	CHECK(dir_open(at("s"), &why) < 0 &&
	    contains(&why, "key is not a file of 16 bytes"));
	unlink(at("s/key"));
	CHECK(dir_open(at("s"), &why) == 0);	/* Made anew. */
	chmod(at("s/key"), 0640);
	CHECK(dir_open(at("s"), &why) < 0 &&
	    contains(&why, "key is open to group or others (mode 0640)"));
	chmod(at("s/key"), 0600);
	if (root) {
		CHECK(chown(at("s/key"), NOBODY, NOBODY) == 0);
		CHECK(dir_open(at("s"), &why) < 0 &&
		    contains(&why, "key is owned by uid 65534"));
	}
	unlink(at("s/key"));
	mkdir(at("s/key"), 0700);
	CHECK(dir_open(at("s"), &why) < 0 &&
	    contains(&why, "key is not a file of 16 bytes"));
	rmdir(at("s/key"));
	buf_free(&why);
	buf_free(&big);
}

/* Eight processes make one directory's key at once: they get one key. */
static void
test_share_key_race(void)
{
	struct share_dir d;
	struct buf why = { 0 };
	unsigned char keys[8][16];
	int p[2], i, same = 0;

	if (pipe(p) < 0)
		return;
	for (i = 0; i < 8; i++) {
		if (fork() == 0) {
			if (share_dir_open(&d, at("race"), &why) < 0)
				_exit(1);
			_exit(write(p[1], d.key, 16) == 16 ? 0 : 1);
		}
	}
	close(p[1]);
	for (i = 0; i < 8; i++)
		if (read(p[0], keys[i], 16) != 16)
			break;
	CHECK(i == 8);
	while (wait(NULL) > 0)
		;
	for (i = 1; i < 8; i++)
		same += memcmp(keys[0], keys[i], 16) == 0;
	CHECK(same == 7);
	close(p[0]);
	buf_free(&why);
}

static void
test_share_identity(void)
{
	unsigned char key[16] = { 1 }, exe[16] = { 2 }, other[16] = { 3 };
	struct share_id a, b;
	char hex[33];

	share_identity(&a, key, "0.1.0", exe, "{\"share\":true}", 14);
	share_identity(&b, key, "0.1.0", exe, "{\"share\":true}", 14);
	CHECK(memcmp(a.id, b.id, 16) == 0 && strcmp(a.name, b.name) == 0);
	CHECK(strlen(a.name) == 16);
	share_id_hex(&a, hex);
	CHECK(strncmp(hex, a.name, 16) == 0 && strlen(hex) == 32);
	CHECK(share_id_is(&a, hex) && !share_id_is(&a, a.name) &&
	    !share_id_is(&a, NULL));
	hex[31] = hex[31] == '0' ? '1' : '0';
	CHECK(!share_id_is(&a, hex));
	/* One byte of the configuration, another build, version or key. */
	share_identity(&b, key, "0.1.0", exe, "{\"share\":truE}", 14);
	CHECK(memcmp(a.id, b.id, 16) != 0 && strcmp(a.name, b.name) != 0);
	share_identity(&b, key, "0.1.0", exe, "{\"share\":true}\n", 15);
	CHECK(memcmp(a.id, b.id, 16) != 0);
	share_identity(&b, key, "0.1.0", other, "{\"share\":true}", 14);
	CHECK(memcmp(a.id, b.id, 16) != 0 && strcmp(a.name, b.name) != 0);
	share_identity(&b, key, "0.1.1", exe, "{\"share\":true}", 14);
	CHECK(memcmp(a.id, b.id, 16) != 0);
	key[15] = 1;
	share_identity(&b, key, "0.1.0", exe, "{\"share\":true}", 14);
	CHECK(memcmp(a.id, b.id, 16) != 0);
	/* Parts keep their bounds: "ab" + "c" is not "a" + "bc". */
	share_identity(&a, key, "0.1.0x", exe, "y", 1);
	share_identity(&b, key, "0.1.0", exe, "xy", 2);
	CHECK(memcmp(a.id, b.id, 16) != 0);
}

static void
put_field(struct buf *b, unsigned tag, const void *p, size_t n)
{
	unsigned char h[6] = { (unsigned char)(tag >> 8),
	    (unsigned char)tag, (unsigned char)(n >> 24),
	    (unsigned char)(n >> 16), (unsigned char)(n >> 8),
	    (unsigned char)n };

	buf_put(b, h, 6);
	buf_put(b, p, n);
}

/* Decode body: its verdict, with why. */
static int
decode(const struct buf *body, struct buf *why)
{
	struct share_hello h;
	int r;

	why->len = 0;
	r = share_hello_decode(&h, body->data, body->len, why);
	if (r == 0)
		share_hello_free(&h);
	return r;
}

/* A hello's body made of kind, id and then what more adds. */
static void
base(struct buf *b, int kind)
{
	unsigned char k = (unsigned char)kind, id[16] = { 9 };

	b->len = 0;
	put_field(b, 1, &k, 1);
	put_field(b, 2, id, 16);
}

static void
test_share_hello(void)
{
	char *env[] = { (char *)"A=1", (char *)"NOEQUALS", (char *)"=x",
	    (char *)"B=two=2", (char *)"EMPTY=", NULL };
	char *opt[] = { (char *)"mode=dynamic", NULL };
	unsigned char id[16] = { 7, 7 };
	struct buf b = { 0 }, body = { 0 }, why = { 0 };
	struct share_hello h;
	char **many;
	size_t i;

	/* Round trip; variables that are not NAME=value left out. */
	CHECK(share_hello_encode(&b, SHARE_SESSION, id, "/home/u", env,
	    opt) == 0);
	CHECK(b.len > 8 && (size_t)((unsigned char)b.data[2] << 8 |
	    (unsigned char)b.data[3]) == b.len - 8 && b.data[5] == 1);
	CHECK(share_hello_decode(&h, b.data + 8, b.len - 8, &why) == 0);
	CHECK(h.kind == SHARE_SESSION && memcmp(h.id, id, 16) == 0);
	CHECK(h.cwd != NULL && strcmp(h.cwd, "/home/u") == 0);
	CHECK(h.nenv == 3 && strcmp(h.env[0], "A=1") == 0 &&
	    strcmp(h.env[1], "B=two=2") == 0 &&
	    strcmp(h.env[2], "EMPTY=") == 0 && h.env[3] == NULL);
	CHECK(h.nopt == 1 && strcmp(h.opt[0], "mode=dynamic") == 0 &&
	    h.opt[1] == NULL);
	share_hello_free(&h);
	b.len = 0;
	CHECK(share_hello_encode(&b, SHARE_STATUS, id, NULL, NULL, NULL) ==
	    0);
	CHECK(share_hello_decode(&h, b.data + 8, b.len - 8, &why) == 0 &&
	    h.kind == SHARE_STATUS && h.cwd == NULL && h.nenv == 0 &&
	    h.env[0] == NULL && h.nopt == 0);
	share_hello_free(&h);

	/* An environment larger than 1 MiB is not sent. */
	many = xcalloc(2, sizeof(*many));
	many[0] = xmalloc(1100000);
	memset(many[0], 'x', 1099999);
	many[0][1] = '=';
	many[0][1099999] = '\0';
	b.len = 0;
	CHECK(share_hello_encode(&b, SHARE_SESSION, id, "/", many, NULL) < 0 &&
	    errno == EMSGSIZE && b.len == 0);
	free(many[0]);
	free(many);

	/* Bounds and garbage, each refused with its reason. */
	base(&body, SHARE_SESSION);
	put_field(&body, 3, "/", 1);
	CHECK(decode(&body, &why) == 0);
	body.len -= 1;
	CHECK(decode(&body, &why) < 0 && contains(&why, "longer than"));
	body.len -= 3;
	CHECK(decode(&body, &why) < 0 && contains(&why, "cut short"));
	base(&body, SHARE_SESSION);
	CHECK(decode(&body, &why) < 0 && contains(&why, "without its "
	    "directory"));
	base(&body, SHARE_SESSION);
	put_field(&body, 3, "rel", 3);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 3"));
	base(&body, SHARE_SESSION);
	put_field(&body, 3, "/a\0b", 4);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 3"));
	base(&body, SHARE_STATUS);
	put_field(&body, 3, "/a", 2);
	put_field(&body, 3, "/b", 2);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 3"));
	base(&body, SHARE_STATUS);
	put_field(&body, 1, "\002", 1);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 1"));
	body.len = 0;
	put_field(&body, 1, "\003", 1);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 1"));
	body.len = 0;
	put_field(&body, 1, "\002", 1);
	CHECK(decode(&body, &why) < 0 && contains(&why, "without its "
	    "identity"));
	body.len = 0;
	put_field(&body, 2, id, 16);
	CHECK(decode(&body, &why) < 0 && contains(&why, "without its kind"));
	put_field(&body, 1, "\002", 1);
	CHECK(decode(&body, &why) == 0);
	put_field(&body, 2, id, 15);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 2"));
	base(&body, SHARE_STATUS);
	put_field(&body, 9, "", 0);
	CHECK(decode(&body, &why) < 0 && contains(&why, "unknown tag 9"));
	base(&body, SHARE_STATUS);
	put_field(&body, 4, "NOEQ", 4);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 4"));
	base(&body, SHARE_STATUS);
	put_field(&body, 4, "=v", 2);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 4"));
	base(&body, SHARE_STATUS);
	put_field(&body, 4, "A=\0", 3);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 4"));
	base(&body, SHARE_STATUS);
	for (i = 0; i < 32; i++)
		put_field(&body, 5, "o=1", 3);
	CHECK(decode(&body, &why) == 0);
	put_field(&body, 5, "o=1", 3);
	CHECK(decode(&body, &why) < 0 && contains(&why, "tag 5"));
	base(&body, SHARE_STATUS);
	buf_reserve(&body, 1048577);
	memset(body.data + body.len, 0, 1048577 - body.len);
	body.len = 1048577;
	CHECK(decode(&body, &why) < 0 && contains(&why, "at most 1048576"));

	/* Random bytes: no crash; what is accepted round-trips. */
	for (i = 0; i < 20000; i++) {
		size_t n = (size_t)(rand() % 64), k;

		base(&body, 1 + rand() % 2);
		for (k = 0; k < n; k++)
			buf_putc(&body, (char)(rand() % 8 == 0 ? '=' :
			    rand() % 4 == 0 ? rand() % 6 : rand()));
		if (share_hello_decode(&h, body.data, body.len, &why) == 0) {
			b.len = 0;
			CHECK(share_hello_encode(&b, h.kind, h.id, h.cwd,
			    h.env, h.opt) == 0);
			share_hello_free(&h);
			CHECK(share_hello_decode(&h, b.data + 8, b.len - 8,
			    &why) == 0);
			share_hello_free(&h);
		}
		why.len = 0;
	}
	buf_free(&b);
	buf_free(&body);
	buf_free(&why);
}

/*
 * The daemon's side, in this process.
 */

static struct share_dir sdir;
static struct share_id sid;
static struct share_server *srv;
static int status_calls;

static void
status_cb(struct buf *b, void *arg)
{
	status_calls++;
	buf_printf(b, "{\"pid\":%ld,\"arg\":\"%s\"}", (long)getpid(),
	    (const char *)arg);
}

/*
 * Run the server's side until until() says so or 5 s pass (a verdict
 * that waits on events: a slow machine only takes longer).  Sessions
 * taken go to *taken.
 */
static bool
pump(bool (*until)(void *), void *arg, struct share_hello **taken)
{
	struct pollfd pfd[SHARE_POLLFDS];
	long long end = now_ms() + 5000, due;
	struct share_hello *h;
	int n;

	while (!until(arg) && now_ms() < end) {
		n = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
		due = share_server_deadline(srv);
		poll(pfd, (nfds_t)n, due > 0 && due - now_ms() < 50 ?
		    (int)(due - now_ms() > 0 ? due - now_ms() : 0) : 50);
		share_server_events(srv, pfd, n, now_ms());
		if ((h = share_server_take(srv)) != NULL && taken != NULL)
			*taken = h;
	}
	return until(arg);
}

/* A child to wait for: st[0] its pid (0 once reaped), st[1] status. */
static bool
child_done(void *arg)
{
	int *st = arg;

	if (st[0] > 0 && waitpid(st[0], &st[1], WNOHANG) == st[0])
		st[0] = 0;
	return st[0] == 0;
}

static bool
taken_one(void *arg)
{
	return *(struct share_hello **)arg != NULL;
}

/* Is fd readable with end of file (its writers all gone)? */
static bool
at_eof(void *arg)
{
	char c;
	int fd = *(int *)arg;

	return read(fd, &c, 1) == 0;
}

static int
raw_connect(void)
{
	struct sockaddr_un sun;
	struct buf why = { 0 };
	char name[32];
	int fd, len;

	snprintf(name, sizeof(name), "%s.sock", sid.name);
	len = share_sockaddr(&sdir, name, &sun, &why);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (len < 0 || fd < 0 ||
	    connect(fd, (struct sockaddr *)&sun, (socklen_t)len) < 0) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	buf_free(&why);
	if (fd >= 0)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* Send b with nfds descriptors on its first byte. */
static void
raw_send(int fd, const struct buf *b, const int *fds, int nfds)
{
	union {
		struct cmsghdr	 align;
		char		 buf[CMSG_SPACE(sizeof(int) * 4)];
	} cmsg;
	struct cmsghdr *cm;
	struct msghdr msg;
	struct iovec iov;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = b->data;
	iov.iov_len = b->len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cmsg, 0, sizeof(cmsg));
		msg.msg_control = cmsg.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	CHECK(sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)b->len);
}

/* The type of the message read from fd once it has come; 0: EOF. */
struct answer {
	int	 fd;
	int	 type;
	struct buf body;
};

static bool
answered(void *arg)
{
	struct answer *a = arg;
	unsigned char *p;
	ssize_t n;

	buf_reserve(&a->body, 4096);
	n = recv(a->fd, a->body.data + a->body.len, 4096, MSG_DONTWAIT);
	if (n > 0)
		a->body.len += (size_t)n;
	p = (unsigned char *)a->body.data;
	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		a->type = a->body.len >= 8 ? p[5] : 0;
		return true;
	}
	return false;
}

/* The first 8 bytes of an answer have come. */
static bool
welcomed(void *arg)
{
	struct answer *a = arg;
	ssize_t n;

	buf_reserve(&a->body, 8);
	n = recv(a->fd, a->body.data + a->body.len, 8 - a->body.len,
	    MSG_DONTWAIT);
	if (n > 0)
		a->body.len += (size_t)n;
	return a->body.len == 8;
}

/* Send a hand-made b to the server; what comes back before it closes. */
static int
exchange(const struct buf *b, const int *fds, int nfds, struct buf *body)
{
	struct answer a = { -1, -1, { 0 } };

	if ((a.fd = raw_connect()) < 0)
		return -2;
	if (b != NULL)
		raw_send(a.fd, b, fds, nfds);
	CHECK(pump(answered, &a, NULL));
	close(a.fd);
	if (body != NULL) {
		body->len = 0;
		if (a.body.len > 8)
			buf_put(body, a.body.data + 8, a.body.len - 8);
	}
	buf_free(&a.body);
	return a.type;
}

static void
header(struct buf *b, unsigned len, unsigned type, unsigned version)
{
	unsigned char h[8] = { (unsigned char)(len >> 24),
	    (unsigned char)(len >> 16), (unsigned char)(len >> 8),
	    (unsigned char)len, 0, (unsigned char)type, 0,
	    (unsigned char)version };

	b->len = 0;
	buf_put(b, h, 8);
}

/* Hand-made peers: garbage, bounds, descriptors, status, versions. */
static void
test_share_peers(void)
{
	struct answer slow = { -1, -1, { 0 } };
	struct pollfd pfd[SHARE_POLLFDS];
	struct buf b = { 0 }, body = { 0 };
	int p[2], fds[4], n;

	/* A status request: the callback's JSON. */
	b.len = 0;
	share_hello_encode(&b, SHARE_STATUS, sid.id, NULL, NULL, NULL);
	CHECK(exchange(&b, NULL, 0, &body) == 5 && status_calls == 1 &&
	    contains(&body, "\"arg\":\"probe\""));
	/*
	 * Another identity: a status is answered (--status lists every
	 * shared workbench); a session is refused, with the reason.
	 */
	b.len = 0;
	share_hello_encode(&b, SHARE_STATUS, sdir.key, NULL, NULL, NULL);
	CHECK(exchange(&b, NULL, 0, &body) == 5 && status_calls == 2);
	b.len = 0;
	share_hello_encode(&b, SHARE_SESSION, sdir.key, "/", NULL, NULL);
	CHECK(exchange(&b, NULL, 0, &body) == 3 &&
	    contains(&body, "another build or configuration"));
	/* Another version of the protocol: refused, saying so. */
	header(&b, 0, 1, 2);
	CHECK(exchange(&b, NULL, 0, &body) == 3 &&
	    contains(&body, "a hello of protocol version 2; this shared "
	    "workbench speaks version 1"));
	/* The largest length a peer can claim, said as it is (the log). */
	header(&b, 0xffffffffu, 1, 1);
	CHECK(exchange(&b, NULL, 0, NULL) == 0);
	/* Something before the hello; a hello too large; garbage. */
	header(&b, 0, 4, 1);
	CHECK(exchange(&b, NULL, 0, NULL) == 0);
	header(&b, 2u << 20, 1, 1);
	CHECK(exchange(&b, NULL, 0, NULL) == 0);
	header(&b, 20, 1, 1);
	buf_put(&b, "garbage garbage garb", 20);
	CHECK(exchange(&b, NULL, 0, NULL) == 0);
	/* A session's hello without its descriptors; a status with some. */
	b.len = 0;
	share_hello_encode(&b, SHARE_SESSION, sid.id, "/", NULL, NULL);
	CHECK(exchange(&b, NULL, 0, NULL) == 0);
	CHECK(pipe(p) == 0);
	fds[0] = fds[1] = fds[2] = fds[3] = p[1];
	b.len = 0;
	share_hello_encode(&b, SHARE_STATUS, sid.id, NULL, NULL, NULL);
	CHECK(exchange(&b, fds, 1, NULL) == 0);
	/* Four descriptors: dropped, and every copy it got closed. */
	b.len = 0;
	share_hello_encode(&b, SHARE_SESSION, sid.id, "/", NULL, NULL);
	CHECK(exchange(&b, fds, 4, NULL) == 0);
	/* Descriptors that are not stdio: stdin write-only. */
	fds[0] = p[1];
	fds[1] = fds[2] = p[1];
	CHECK(exchange(&b, fds, 3, &body) == 3 &&
	    contains(&body, "its standard input cannot be read"));
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	CHECK(pump(at_eof, &p[0], NULL));
	close(p[0]);
	/*
	 * A front that leaves after WELCOME without GO: no session, and
	 * the descriptors it sent are closed unused.
	 */
	{
		struct answer a = { raw_connect(), -1, { 0 } };
		struct share_hello *h = NULL;

		CHECK(pipe(p) == 0);
		fds[0] = p[0];
		fds[1] = fds[2] = p[1];
		b.len = 0;
		share_hello_encode(&b, SHARE_SESSION, sid.id, "/", NULL, NULL);
		raw_send(a.fd, &b, fds, 3);
		close(p[1]);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		CHECK(pump(welcomed, &a, &h) && a.body.len == 8 &&
		    a.body.data[5] == 2);
		CHECK(!at_eof(&p[0]));	/* The daemon holds the writer. */
		close(a.fd);
		CHECK(pump(at_eof, &p[0], &h) && h == NULL);
		close(p[0]);
		buf_free(&a.body);
	}

	/* Too slow: half a header, then nothing; dropped at its deadline. */
	header(&b, 0, 1, 1);
	b.len = 3;
	slow.fd = raw_connect();
	raw_send(slow.fd, &b, NULL, 0);
	n = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
	poll(pfd, (nfds_t)n, 1000);
	share_server_events(srv, pfd, n, now_ms());
	n = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
	CHECK(n == 2 && share_server_deadline(srv) > now_ms());
	share_server_events(srv, pfd, 0, now_ms() + 10001);
	CHECK(pump(answered, &slow, NULL) && slow.type == 0);
	close(slow.fd);
	buf_free(&slow.body);
	buf_free(&b);
	buf_free(&body);
}

/*
 * In a child: fds 0 and 1 are the pipes in and out; join the server
 * and wait.  Its exit status: share_wait's, or 100 + what went wrong.
 */
static void __attribute__((noreturn))
front_child(int in, int out, const struct share_id *id)
{
	char *argv[] = { (char *)"unit", NULL };
	char *opts[] = { (char *)"mode=dynamic", NULL };
	struct share_front f;
	struct buf why = { 0 };
	struct stat st, null;

	dup2(in, 0);
	dup2(out, 1);
	setenv("SHARE_UNIT", "yes", 1);
	if (share_join(&sdir, id, argv, opts, &f, &why) < 0) {
		/* Refused: the stdio is still the pipes, not /dev/null. */
		if (fstat(0, &st) < 0 || !S_ISFIFO(st.st_mode) ||
		    !contains(&why, "refused: it serves another build"))
			_exit(101);
		_exit(100);
	}
	if (stat("/dev/null", &null) < 0 || fstat(0, &st) < 0 ||
	    st.st_rdev != null.st_rdev || fstat(1, &st) < 0 ||
	    st.st_rdev != null.st_rdev)
		_exit(102);
	_exit(share_wait(&f));
}

static void
test_share_session(void)
{
	struct share_hello *h = NULL;
	struct share_id wrong = sid;
	int in[2], out[2], st[2], i, fl;
	char line[16], cwd[PATH_MAX];
	bool env = false;

	CHECK(pipe(in) == 0 && pipe(out) == 0);
	fcntl(in[0], F_SETFL, 0);
	if ((st[0] = fork()) == 0)
		front_child(in[0], out[1], &sid);
	CHECK(pump(taken_one, &h, &h));
	if (h == NULL)
		return;
	CHECK(h->pid == st[0] && h->kind == SHARE_SESSION);
	CHECK(h->cwd != NULL && getcwd(cwd, sizeof(cwd)) != NULL &&
	    strcmp(h->cwd, cwd) == 0);
	for (i = 0; i < (int)h->nenv; i++)
		env |= strcmp(h->env[i], "SHARE_UNIT=yes") == 0;
	CHECK(env && h->nopt == 1 && strcmp(h->opt[0], "mode=dynamic") == 0);
	/* The client's own pipes, non-blocking while the session lasts. */
	CHECK(write(in[1], "ping\n", 5) == 5);
	CHECK(read(h->fd[0], line, sizeof(line)) == 5 &&
	    memcmp(line, "ping\n", 5) == 0);
	CHECK(write(h->fd[1], "pong\n", 5) == 5);
	CHECK(read(out[0], line, sizeof(line)) == 5 &&
	    memcmp(line, "pong\n", 5) == 0);
	CHECK((fl = fcntl(in[0], F_GETFL)) >= 0 && (fl & O_NONBLOCK) != 0);
	CHECK(!share_session_gone(h));
	CHECK(share_server_linger(srv, 100) == 0);
	share_session_end(srv, h, 7);
	CHECK((fl = fcntl(in[0], F_GETFL)) >= 0 && (fl & O_NONBLOCK) == 0);
	CHECK(share_server_linger(srv, 100) > now_ms());
	CHECK(pump(child_done, st, NULL) && WIFEXITED(st[1]) &&
	    WEXITSTATUS(st[1]) == 7);

	/* A front whose identity differs: refused, keeps its stdio. */
	memset(wrong.id + 8, 0x5a, 8);
	if ((st[0] = fork()) == 0)
		front_child(in[0], out[1], &wrong);
	CHECK(pump(child_done, st, NULL) && WIFEXITED(st[1]) &&
	    WEXITSTATUS(st[1]) == 100);

	/* A front that is killed: its session's lifeline says so. */
	h = NULL;
	if ((st[0] = fork()) == 0)
		front_child(in[0], out[1], &sid);
	CHECK(pump(taken_one, &h, &h));
	kill(st[0], SIGKILL);
	waitpid(st[0], NULL, 0);
	CHECK(h != NULL && share_session_gone(h));
	if (h != NULL)
		share_session_end(srv, h, 0);

	/*
	 * The daemon dies (its lifeline closes without END): the front
	 * exits 4, and puts back the flags of the stderr it still holds,
	 * which the daemon made non-blocking and cannot restore now.
	 */
	h = NULL;
	fcntl(STDERR_FILENO, F_SETFL, fcntl(STDERR_FILENO, F_GETFL) &
	    ~O_NONBLOCK);
	if ((st[0] = fork()) == 0)
		front_child(in[0], out[1], &sid);
	CHECK(pump(taken_one, &h, &h));
	CHECK((fcntl(STDERR_FILENO, F_GETFL) & O_NONBLOCK) != 0);
	if (h != NULL)
		shutdown(h->sock, SHUT_RDWR);
	CHECK(pump(child_done, st, NULL) && WIFEXITED(st[1]) &&
	    WEXITSTATUS(st[1]) == 4);
	CHECK((fcntl(STDERR_FILENO, F_GETFL) & O_NONBLOCK) == 0);
	if (h != NULL)
		share_session_end(srv, h, 0);
	close(in[0]);
	close(in[1]);
	close(out[0]);
	close(out[1]);
}

/*
 * Another uid: its connection is closed unanswered (the daemon's
 * check); a listener of another uid is not joined (the front's).
 */
static void
test_share_other_uid(void)
{
	struct buf why = { 0 }, json = { 0 };
	struct share_id theirs = sid;
	int st[2], ready[2], hold[2];
	char c;

	if (geteuid() != 0)
		return;
	if ((st[0] = fork()) == 0) {
		struct buf b = { 0 };
		int fd;

		/* Another effective uid; the filesystem's stays root's. */
		if (setresuid((uid_t)-1, NOBODY, (uid_t)-1) < 0)
			_exit(10);
		setfsuid(0);
		if ((fd = raw_connect()) < 0)
			_exit(11);
		fcntl(fd, F_SETFL, 0);
		share_hello_encode(&b, SHARE_STATUS, sid.id, NULL, NULL, NULL);
		if (send(fd, b.data, b.len, MSG_NOSIGNAL) < 0) {
			/* Closed already. */
		}
		_exit(recv(fd, &c, 1, 0) <= 0 ? 0 : 12);
	}
	CHECK(pump(child_done, st, NULL) && WIFEXITED(st[1]) &&
	    WEXITSTATUS(st[1]) == 0);

	/*
	 * A daemon of nobody's (its filesystem uid root's, to share the
	 * directory): a front does not even send it a hello.  It serves
	 * until hold closes, then exits 1 if any hello reached it.
	 */
	memset(theirs.name, 'f', SHARE_NAME_LEN);
	CHECK(pipe(ready) == 0 && pipe(hold) == 0);
	if ((st[0] = fork()) == 0) {
		struct pollfd pfd[SHARE_POLLFDS + 1];
		int n;

		close(ready[0]);
		close(hold[1]);
		if (setresuid((uid_t)-1, NOBODY, (uid_t)-1) < 0)
			_exit(10);
		setfsuid(0);
		status_calls = 0;
		srv = share_listen(&sdir, &theirs, 1, status_cb, (void *)"x",
		    &why);
		c = srv != NULL ? 'y' : 'n';
		if (srv == NULL || write(ready[1], &c, 1) < 0)
			_exit(11);
		for (;;) {
			n = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
			pfd[n].fd = hold[0];
			pfd[n].events = POLLIN;
			poll(pfd, (nfds_t)n + 1, -1);
			if (pfd[n].revents != 0)
				break;
			share_server_events(srv, pfd, n, now_ms());
		}
		_exit(status_calls == 0 ? 0 : 12);
	}
	close(ready[1]);
	close(hold[0]);
	CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
	why.len = 0;
	CHECK(share_status(&sdir, &theirs, &json, &why) < 0 &&
	    contains(&why, "uid 65534") && contains(&why, "is not this user"));
	close(hold[1]);
	close(ready[0]);
	CHECK(waitpid(st[0], &st[1], 0) == st[0] && WIFEXITED(st[1]) &&
	    WEXITSTATUS(st[1]) == 0);
	buf_free(&why);
	buf_free(&json);
}

/*
 * The daemon's log: ours, not a link; past 1 MiB it becomes .log.old,
 * when opened and while the daemon writes to it.  The lock: not a link.
 */
static void
test_share_files(void)
{
	struct buf why = { 0 }, path = { 0 };
	struct stat st;
	char big[4096];
	int fd, saved, i;

	buf_printf(&path, "srv/%s.log", sid.name);
	fd = share_log_open(&sdir, sid.name, &why);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600);
	memset(big, 'x', sizeof(big));
	for (i = 0; fd >= 0 && i <= 256; i++)
		if (write(fd, big, sizeof(big)) != (ssize_t)sizeof(big))
			break;
	CHECK(i == 257);
	if (fd >= 0)
		close(fd);
	/* Opened past 1 MiB: a new one, the old kept once. */
	fd = share_log_open(&sdir, sid.name, &why);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0);
	buf_puts(&path, ".old");
	CHECK(stat(at(buf_cstr(&path)), &st) == 0 &&
	    st.st_size == 257 * 4096);
	/* Written past 1 MiB as our stderr: rotated by share_server_log. */
	for (i = 0; fd >= 0 && i <= 256; i++)
		if (write(fd, big, sizeof(big)) != (ssize_t)sizeof(big))
			break;
	CHECK(i == 257);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	share_server_log(srv);
	CHECK(fstat(STDERR_FILENO, &st) == 0 && st.st_size == 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	path.len -= 4;
	unlink(at(buf_cstr(&path)));
	CHECK(symlink(at("file"), at(buf_cstr(&path))) == 0);
	why.len = 0;
	CHECK(share_log_open(&sdir, sid.name, &why) < 0 &&
	    contains(&why, "a symbolic link"));
	unlink(at(buf_cstr(&path)));
	path.len = 0;
	buf_printf(&path, "srv/%s.lock", sid.name);
	CHECK(symlink(at("file"), at(buf_cstr(&path))) == 0);
	why.len = 0;
	CHECK(share_lock_open(&sdir, sid.name, &why) < 0 &&
	    contains(&why, "a symbolic link"));
	unlink(at(buf_cstr(&path)));
	buf_free(&why);
	buf_free(&path);
}

static void
test_share_server(void)
{
	struct buf why = { 0 }, json = { 0 };
	unsigned char exe[16] = { 0 };
	struct stat st;

	CHECK(share_dir_open(&sdir, at("srv"), &why) == 0);
	share_identity(&sid, sdir.key, "unit", exe, "config", 6);
	srv = share_listen(&sdir, &sid, 4, status_cb, (void *)"probe", &why);
	CHECK(srv != NULL);
	if (srv == NULL)
		return;
	CHECK(stat(at("srv"), &st) == 0);
	CHECK(lstat(at("srv"), &st) == 0);
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "srv/%s.sock", sid.name);
		CHECK(lstat(at(path), &st) == 0 && S_ISSOCK(st.st_mode) &&
		    (st.st_mode & 0777) == 0700);
	}
	test_share_files();
	/* A second listener on the same name: refused. */
	CHECK(share_listen(&sdir, &sid, 4, NULL, NULL, &why) == NULL &&
	    contains(&why, "another socket is there"));
	test_share_peers();
	test_share_session();
	test_share_other_uid();
	share_server_close(srv);
	srv = NULL;
	/* Closed, with the lock free: the socket is gone; none runs. */
	CHECK(share_status(&sdir, &sid, &json, &why) == 1);
	share_dir_close(&sdir);
	buf_free(&why);
	buf_free(&json);
}

/*
 * The daemon's side logs (to stderr) what it refuses: kept in a file
 * while it runs, shown only when a check failed meanwhile.
 */
static void
test_share_logged(void)
{
	struct buf log = { 0 };
	char *text;
	size_t len;
	int fd, saved;

	fflush(stderr);
	wb_log_flush();
	saved = dup(STDERR_FILENO);
	fd = open(at("log"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0)
		return;
	dup2(fd, STDERR_FILENO);
	close(fd);
	test_share_server();
	fflush(stderr);
	wb_log_flush();
	dup2(saved, STDERR_FILENO);
	close(saved);
	if ((text = file_read(at("log"), 1 << 20, &len)) != NULL) {
		buf_put(&log, text, len);
		CHECK(contains(&log, "refused pid") &&
		    contains(&log, "another build or configuration"));
		CHECK(contains(&log, "a hello of 4294967295 bytes (at most"));
		if (strstr(text, "FAIL ") != NULL)
			fputs(text, stderr);
	}
	free(text);
	buf_free(&log);
}

void
test_share(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	snprintf(tmp, sizeof(tmp), "/tmp/wb-unit-share.XXXXXX");
	if (mkdtemp(tmp) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	test_share_digest();
	test_share_dir_path();
	test_share_dir();
	test_share_key_race();
	test_share_identity();
	test_share_hello();
	test_share_logged();
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
