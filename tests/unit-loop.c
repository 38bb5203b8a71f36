/*
 * Unit tests of the loop (loop.c), driven through loop_run by a step
 * that plays a script, one act a turn: descriptors with the events
 * registered and no others, a registration removed by another's handler
 * in the same turn, events changed and turned off, a lazy descriptor
 * polled before long,
 * timers in the order of their times, steps in the order of their
 * phases, shutdown waiting for finished, then the end.  loop_stop is for
 * good, so this runs last in tests/unit.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../loop.h"

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

void	 check(int, const char *, const char *, int);
void	 test_loop(void);

static struct loop_io io_a, io_b, io_c, io_d;
static int a[2], b[2], c[2], d[2];
static int got_a, got_b, got_c, got_d;
static long long began;
static short rev_a;
static int act;
static char order[64];			/* Timers and steps, as they ran. */
static size_t norder;
static bool may_finish;
static struct loop_timer t1, t2, t3;

static void
note(char c)
{
	if (norder < sizeof(order) - 1)
		order[norder++] = c;
}

static void
on_a(void *arg, int fd, short revents)
{
	char ch;

	(void)arg;
	got_a++;
	rev_a = revents;
	if (revents & POLLIN)
		(void)read(fd, &ch, 1);
}

/* B's handler removes C, whose byte waits in the same turn. */
static void
on_b(void *arg, int fd, short revents)
{
	char ch;

	(void)arg;
	(void)revents;
	got_b++;
	(void)read(fd, &ch, 1);
	loop_io_del(&io_c);
}

static void
on_c(void *arg, int fd, short revents)
{
	(void)arg;
	(void)fd;
	(void)revents;
	got_c++;
}

static void
on_d(void *arg, int fd, short revents)
{
	char ch;

	(void)arg;
	(void)revents;
	got_d++;
	(void)read(fd, &ch, 1);
}

static void
on_timer(void *arg)
{
	note(*(const char *)arg);
}

static void
first_step(void)
{
	if (act == 0)
		note('1');
}

/* The script: each turn checks the last and sets up the next. */
static void
script(void)
{
	if (loop_stopping())
		return;
	if (act == 0)
		note('2');
	switch (act++) {
	case 0:
		CHECK(got_a == 0 && got_b == 0);
		(void)write(a[1], "x", 1);
		began = loop_ms();
		break;
	case 1:
		CHECK(got_a == 1 && (rev_a & POLLIN) && got_b == 0);
		/* Hang-up alone: the byte waiting is not reported. */
		loop_io_events(&io_a, 0);
		(void)write(a[1], "y", 1);
		(void)write(b[1], "z", 1);
		(void)write(c[1], "w", 1);
		(void)write(d[1], "v", 1);
		break;
	case 2:
		CHECK(got_a == 1 && got_b == 1 && got_c == 0);
		CHECK(!loop_io_on(&io_c));
		loop_io_events(&io_a, LOOP_OFF);
		close(a[1]);
		a[1] = -1;
		/* Timers out of order; one removed, one moved earlier. */
		loop_timer_set(&t1, loop_ms() + 30, on_timer, "c");
		loop_timer_set(&t2, loop_ms() + 10, on_timer, "a");
		loop_timer_set(&t3, loop_ms() + 20, on_timer, "x");
		loop_timer_del(&t3);
		loop_timer_set(&t3, loop_ms() + 5, on_timer, "A");
		break;
	default:
		/* The lazy one's byte comes within a second or so. */
		if ((strchr(order, 'c') == NULL || got_d == 0) &&
		    loop_ms() < began + 10000)
			break;
		CHECK(got_d == 1);
		CHECK(got_a == 1);	/* Off: not even its hang-up. */
		loop_io_events(&io_a, POLLIN);
		loop_stop("the script is done");
		break;
	}
}

static void
stopped(void)
{
	note('S');
}

static bool
finished(void)
{
	/* Not at first: the loop waits for it, turning. */
	if (!may_finish) {
		may_finish = true;
		return false;
	}
	return true;
}

static void
ended(void)
{
	note('E');
}

static const struct loop_step second = {
	LOOP_LAST, script, stopped, finished, ended, NULL
};
static const struct loop_step first = {
	LOOP_ACCEPT, first_step, NULL, NULL, NULL, NULL
};

void
test_loop(void)
{
	const char *p;
	char timers[8];
	size_t n = 0;

	CHECK(pipe(a) == 0 && pipe(b) == 0 && pipe(c) == 0 && pipe(d) == 0);
	loop_io_set(&io_a, a[0], POLLIN, on_a, NULL);
	loop_io_set(&io_b, b[0], POLLIN, on_b, NULL);
	loop_io_set(&io_c, c[0], POLLIN, on_c, NULL);
	loop_io_set(&io_d, d[0], POLLIN, on_d, NULL);
	loop_io_lazy(&io_d);
	/* Registered last, run first: the order is the phases'. */
	loop_step_add(&second);
	loop_step_add(&first);
	CHECK(loop_run(5000) == 0);
	CHECK(strcmp(loop_stop_why(), "the script is done") == 0);
	CHECK(order[0] == '1' && order[1] == '2');
	for (p = order; *p != '\0'; p++)
		if (strchr("Aacx", *p) != NULL && n < sizeof(timers) - 1)
			timers[n++] = *p;
	timers[n] = '\0';
	CHECK(strcmp(timers, "Aac") == 0);
	CHECK(strchr(order, 'S') != NULL && order[norder - 1] == 'E');
	/* POLLIN again after the writer closed: its hang-up came. */
	CHECK(got_a == 2 && (rev_a & POLLHUP));
	loop_io_del(&io_a);
	loop_io_del(&io_b);
	loop_io_del(&io_d);
	close(d[0]);
	close(d[1]);
	close(a[0]);
	close(b[0]);
	close(b[1]);
	close(c[0]);
	close(c[1]);
}
