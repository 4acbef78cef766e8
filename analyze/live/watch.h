/*
 * watch.h - the loop that watches a running job: follows its traces
 * (follow.h), takes a frame of figures (figures.h) every interval, and
 * shows it: on the terminal (screen.c), as /metrics over HTTP, and as a
 * node_exporter textfile. `memtrace top` runs it in its own process;
 * `memtrace run` in a child process of the launcher, so the traced program
 * and the launcher's supervision of it never wait for it.
 *
 * Functions return 0 / -1 with a message in err; they never print.
 */
#ifndef MEMTRACE_WATCH_H
#define MEMTRACE_WATCH_H

#include "model/symbols.h"

struct watch_opts {
	const char *trace;          /* follow this trace and its workers, or */
	const char *dir;            /* every trace in this folder */
	uint64_t run_id;            /* only traces of this run (0: any) */
	struct sym_opts sym;
	int screen;                 /* draw the interactive view */
	int once;                   /* print one frame as text and return */
	int bytes;                  /* --once: exact bytes */
	int json;                   /* --once: the frame as JSON */
	int max_sites;              /* sites in the text frame, -1 all */
	int interval_ms;            /* between frames (default 1000) */
	const char *metrics_addr;   /* "ADDR:PORT" or "PORT", NULL: no server */
	const char *textfile_dir;   /* NULL: no textfile */
	int top_sites;              /* sites in the metrics (default 10) */
	int linger_ms;              /* the job over: its last frame stays on
	                               /metrics this long (0: not at all) */
	int stop_fd;                /* readable (EOF) when the job is over, -1 */
	int ready_fd;               /* written once the server listens, -1 */
};

/* Runs until the job is over (stop_fd, or every process ended with
   stop_fd -1 and no screen), or the user quits the view. */
int watch_run(const struct watch_opts *o, char *err, size_t errlen);

/* Parses "[ADDR:]PORT"; 0, or -1 with a message. */
int watch_parse_addr(const char *s, char *addr, size_t addrlen, int *port, char *err,
		     size_t errlen);

#endif
