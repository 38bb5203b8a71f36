/*
 * probe.c: mcp-workbench --probe [TOOLBOX...].  The servers of the named
 * toolboxes (all when none is named) start at once, as open_toolbox
 * starts them; once none is starting, each gets a line on stdout: ready
 * with its tools and the time it took, or why it failed, with its last
 * words on stderr.  What a user runs when a client says "failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workbench.h"

#define PROBE_CAPS	ERA_TYPICAL_CAPS

static struct toolbox **chosen;
static int nchosen;

static void
choose(struct toolbox *b)
{
	int i;

	for (i = 0; i < nchosen; i++)
		if (chosen[i] == b)
			return;
	chosen = xrealloc(chosen, ((size_t)nchosen + 1) * sizeof(*chosen));
	chosen[nchosen++] = b;
}

/* Choose the toolboxes; false, said on stderr, when one is not known. */
static bool
choose_all(char **names, int n)
{
	const struct cfg_toolbox *cb;
	struct toolbox *b;
	int i;

	for (i = 0; i < n; i++) {
		if ((b = box_find(names[i], strlen(names[i]))) == NULL) {
			fprintf(stderr, WB_NAME ": --probe: no toolbox '%s' in "
			    "%s; it has:", names[i], wb.cfg.path);
			for (i = 0; i < wb.cfg.nboxes; i++)
				fprintf(stderr, " %s", wb.cfg.boxes[i].name);
			fprintf(stderr, "%s\n", wb.cfg.nboxes == 0 ? " none" : "");
			return false;
		}
		choose(b);
	}
	for (i = 0; n == 0 && i < wb.cfg.nboxes; i++) {
		cb = &wb.cfg.boxes[i];
		choose(box_find(cb->name, strlen(cb->name)));
	}
	return true;
}

/*
 * What servers are told the probing client can do: caps (a JSON object,
 * as a client declares it), else what a typical client declares, so
 * that servers list the tools they offer such a client, and their
 * catalogue entries are those such a client is given.  False, said on
 * stderr, when caps is not a JSON object.
 */
static bool
probe_caps(struct session *se, const char *caps)
{
	struct json j = { 0 };
	struct buf members = { 0 };
	bool ok;

	if (caps == NULL)
		caps = PROBE_CAPS;
	ok = json_parse(&j, caps, strlen(caps)) == JSON_OK;
	if (ok) {
		(void)era_caps(&j, 0, &members);
		session_assume(se, &members);
	} else
		fprintf(stderr, WB_NAME ": --capabilities: expected a JSON "
		    "object, such as %s\n", PROBE_CAPS);
	buf_free(&members);
	free(j.tok);
	return ok;
}

/*
 * Start the chosen toolboxes' servers, told the capabilities caps (or
 * NULL); false when a name is not known or caps is not valid.
 */
static void	probe_before_poll(void);

static const struct loop_step probe_step = {
	LOOP_LAST, probe_before_poll, NULL, NULL, NULL, NULL
};
static bool as_json;			/* --json */
static int status;			/* The exit status. */

bool
probe_start(char **names, int n, const char *caps, bool json)
{
	struct session *se = dispatch_open(-1, -1, NULL, NULL);	/* No client. */
	int i, k;

	if (!probe_caps(se, caps) || !choose_all(names, n))
		return false;
	for (i = 0; i < nchosen; i++)
		for (k = 0; k < chosen[i]->nservers; k++)
			srv_open(box_srv(NULL, chosen[i], k), se);
	as_json = json;
	loop_step_add(&probe_step);
	return true;
}

/* Is a chosen server still starting? */
static bool
probe_waiting(void)
{
	int i, k;

	for (i = 0; i < nchosen; i++)
		for (k = 0; k < chosen[i]->nservers; k++)
			if (srv_state(box_srv(NULL, chosen[i], k)) == SRV_STARTING)
				return true;
	return false;
}

/* A server's line of the text report, without its newline. */
static void
report_text(const struct server *s, struct buf *b)
{
	int n[LIST_KINDS], k;

	if (!srv_serving(s)) {
		buf_printf(b, "%s: failed: %s", srv_label(s), srv_error(s) !=
		    NULL ? srv_error(s) : "not started");
		return;
	}
	for (k = 0; k < LIST_KINDS; k++)
		n[k] = list_count(s, k);
	buf_printf(b, "%s: ready, %d tool%s", srv_label(s), n[LIST_TOOLS],
	    n[LIST_TOOLS] == 1 ? "" : "s");
	if (srv_caps(s) & CAP_PROMPTS)
		buf_printf(b, ", %d prompt%s", n[LIST_PROMPTS],
		    n[LIST_PROMPTS] == 1 ? "" : "s");
	if (srv_caps(s) & CAP_RESOURCES)
		buf_printf(b, ", %d resource%s, %d template%s",
		    n[LIST_RESOURCES], n[LIST_RESOURCES] == 1 ? "" : "s",
		    n[LIST_TEMPLATES], n[LIST_TEMPLATES] == 1 ? "" : "s");
	buf_printf(b, ", %lld ms", srv_ready_ms(s));
}

static void
report_json(const struct server *s, struct buf *b)
{
	buf_puts(b, b->len == 0 ? "{\"servers\":[" : ",");
	buf_puts(b, "{\"toolbox\":");
	json_put_cstr(b, box_of(s)->cfg->name);
	buf_puts(b, ",\"server\":");
	json_put_cstr(b, srv_name(s));
	if (srv_serving(s))
		buf_printf(b, ",\"state\":\"ready\",\"tools\":%d,"
		    "\"prompts\":%d,\"resources\":%d,\"resourceTemplates\":%d,"
		    "\"readyMs\":%lld}", list_count(s, LIST_TOOLS),
		    list_count(s, LIST_PROMPTS), list_count(s, LIST_RESOURCES),
		    list_count(s, LIST_TEMPLATES), srv_ready_ms(s));
	else {
		buf_puts(b, ",\"state\":\"failed\",\"error\":");
		json_put_cstr(b, srv_error(s) != NULL ? srv_error(s) :
		    "not started");
		buf_putc(b, '}');
	}
}

/* Say how each server went; the exit status: 0 when all are ready. */
static int
probe_report(bool json)
{
	const struct server *s;
	struct buf b = { 0 }, line = { 0 };
	int i, k, failed = 0;

	for (i = 0; i < nchosen; i++)
		for (k = 0; k < chosen[i]->nservers; k++) {
			s = box_srv(NULL, chosen[i], k);
			failed += !srv_serving(s);
			if (json)
				report_json(s, &b);
			else {
				/* It may quote the server: for a terminal. */
				line.len = 0;
				report_text(s, &line);
				term_escape(&b, line.data, line.len);
				buf_putc(&b, '\n');
			}
		}
	if (json) {
		buf_puts(&b, b.len == 0 ? "{\"servers\":[" : "");
		buf_printf(&b, "],\"ok\":%s}\n", failed == 0 ? "true" : "false");
	}
	fwrite(b.data, 1, b.len, stdout);
	fflush(stdout);
	buf_free(&b);
	buf_free(&line);
	free(chosen);
	return failed == 0 ? 0 : 1;
}

/* The probe ends once none of its servers is starting. */
static void
probe_before_poll(void)
{
	if (loop_stopping() || probe_waiting())
		return;
	status = probe_report(as_json);
	loop_stop("the probe is done");
}

int
probe_status(void)
{
	return status;
}
