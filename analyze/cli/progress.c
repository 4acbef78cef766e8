/*
 * progress.c - the progress line of progress.h.
 *
 * The stream calls progress_cb every STREAM_PROGRESS_EVERY records (a few
 * hundred times a second); the line is drawn again only when its percent
 * or its phase changes, so a terminal gets at most about a hundred short
 * writes per walk. A rewind (done 0) starts the next walk of the phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"

static struct {
	int on;                     /* progress_start() and stderr a tty */
	uint64_t start_ns;
	const char *first, *then;   /* names of the phase's walks */
	int walks;                  /* walks begun in this phase */
	const char *drawn_name;     /* what the line shows now */
	int drawn_pct;
	int width;                  /* characters on the line, 0: no line */
	uint64_t delay_ns;          /* shown once the work took this long */
} P;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void progress_start(void)
{
	memset(&P, 0, sizeof(P));
	P.on = isatty(STDERR_FILENO);
	P.start_ns = now_ns();
	P.delay_ns = PROGRESS_DELAY_MS * 1000000ull;
	/* MEMTRACE_PROGRESS_AFTER_MS: another delay (tests, slow terminals) */
	const char *e = getenv("MEMTRACE_PROGRESS_AFTER_MS");
	char *end;
	if (e && *e) {
		unsigned long long ms = strtoull(e, &end, 10);

		if (!*end && *e != '-')
			P.delay_ns = ms * 1000000ull;
	}
}

void progress_clear(void)
{
	if (!P.width)
		return;
	fprintf(stderr, "\r%*s\r", P.width, "");
	P.width = 0;
	P.drawn_name = NULL;
}

void progress_end(void)
{
	progress_clear();
	P.on = 0;
}

static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	const char *name;
	int pct, n;

	(void)ctx;
	if (done == 0) {
		P.walks++;
		return;
	}
	if (!P.on || !total || now_ns() - P.start_ns < P.delay_ns)
		return;
	name = P.walks > 1 && P.then ? P.then : P.first;
	pct = done >= total ? 100 : (int)(done * 100 / total);
	if (name == P.drawn_name && pct == P.drawn_pct)
		return;
	n = fprintf(stderr, "\rmemtrace: %s %d%%", name, pct);
	if (n > 0 && n - 1 < P.width)
		fprintf(stderr, "%*s", P.width - (n - 1), "");
	if (n > 0 && n - 1 > P.width)
		P.width = n - 1;
	P.drawn_name = name;
	P.drawn_pct = pct;
}

void progress_phase(struct stream *s, const char *first, const char *then)
{
	if (!P.on || !s)
		return;
	P.first = first;
	P.then = then;
	P.walks = 0;
	stream_set_progress(s, progress_cb, NULL);
}
