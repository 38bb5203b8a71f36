/*
 * config_int.h: layer 3, private to the configuration's two files: the
 * table of its keys (config_keys.c) and the reader that walks it
 * (config.c).  tests/unit.c prints the table for the test that holds it
 * to the manual (tests/e2e/docs.test.mjs).
 */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include "config.h"

/* The objects of the file a key is written in. */
enum cfg_in {
	CFG_TOP,		/* The top level: struct cfg. */
	CFG_TOOLBOX,		/* A toolbox: struct cfg_toolbox. */
	CFG_SERVER,		/* A server: struct cfg_server. */
	CFG_NIN
};
#define CFG_IN(in)	(1u << (in))

/*
 * What a key's value is, and so what its field is: the reader checks
 * and stores these itself (config.c's value()), and says what it
 * expected in the same words for every key of a type.
 */
enum cfg_type {
	CFG_BOOL,	/* true or false: a bool. */
	CFG_INT,	/* A whole number from min to max: an int. */
	CFG_SIZE,	/* The same, kept in a size_t. */
	CFG_ENUM,	/* One of names: its index, kept in an enum. */
	CFG_TEXT,	/* A string taken literally: a char *. */
	CFG_STRING,	/* A string, ${VAR} expanded: a char *. */
	CFG_LIST,	/* An array of strings taken literally: a char **. */
	CFG_OTHER	/* What its setter alone reads. */
};

#define CFG_REQUIRED	0x01	/* An object without it is invalid. */
#define CFG_LISTENING	0x02	/* Only --listen reads it: problems wait. */

struct loader;
struct cfg_key;

/* An object being read, and the kind of it. */
struct cfg_obj {
	void	*base;
	int	 in;
};

/* Where key k's value is kept in object o. */
#define CFG_SLOT(o, k)	((void *)((char *)(o)->base + (k)->at[(o)->in]))

/*
 * A key's setter: for CFG_OTHER it reads token t and keeps what it
 * means; for the other types it runs once the value is read and kept,
 * to check or complete it (nginx's post handlers).
 */
typedef void cfg_set_fn(struct loader *, const struct cfg_key *,
    const struct cfg_obj *, int);

/*
 * A key of the configuration (nginx's ngx_command_t).  A key with one
 * meaning at two levels is one row: a server's timeouts are the top
 * level's keys, and a server without one takes the top level's value.
 * "share" means one thing at the top (join the shared workbench) and
 * another in a server (share its process), so it has a row for each.
 */
struct cfg_key {
	const char		*name;
	unsigned char		 in;	/* CFG_IN() of the objects it is in. */
	unsigned char		 type;	/* enum cfg_type */
	unsigned char		 flags;
	unsigned short		 at[CFG_NIN];	/* Its field in each. */
	int			 min;	/* An integer's limits, */
	int			 max;
	int			 dflt;	/* and a bool's, integer's or enum's
					   default (the top level's). */
	const char *const	*names;	/* An enum's values, NULL-ended. */
	const char		*what;	/* An integer's unit; what a required
					   key or filters hold. */
	cfg_set_fn		*set;
	const char		*doc;	/* The manual's line for it. */
};

extern const struct cfg_key cfg_keys[];	/* Ended by a NULL name. */

/* The state of one load: where we are, where problems go. */
struct loader {
	struct cfg	*cfg;
	struct json	 j;
	struct buf	 path;		/* "toolboxes.dev.mcpServers.fs" */
	FILE		*err;
	int		 errors;
	bool		 http;		/* In a setting only --listen uses. */
	struct buf	 deferred;	/* Its problems: cfg.http_problems. */
};

typedef void cfg_member_fn(struct loader *, const char *, int, void *);

void	 cfg_problem(struct loader *, bool, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 cfg_each(struct loader *, int, cfg_member_fn *, void *);
void	 cfg_read(struct loader *, const struct cfg_obj *, int);
char	*cfg_expanded(struct loader *, int);
char	*cfg_literal(struct loader *, int);
char   **cfg_strings(struct loader *, int, bool);
void	 cfg_strings_free(char **);
bool	 cfg_var_name(const char *, size_t);

#endif /* CONFIG_INT_H */
