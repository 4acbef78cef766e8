/*
 * screen.c - the interactive view of `memtrace top` (screen.h), drawn with
 * ncurses on stdin/stdout. Only ASCII is drawn (the sparkline's levels are
 * " .:-=+*#%@"), so any terminal ncurses knows can show it; a terminal it
 * does not know, or "dumb", gets the text frames instead (watch.c).
 */
#define _GNU_SOURCE
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/screen.h"
#include "views/format.h"

struct screen {
	SCREEN *s;
};

struct screen *screen_open(void)
{
	const char *term = getenv("TERM");
	struct screen *sc;

	if (!isatty(0) || !isatty(1) || !term || !*term || !strcmp(term, "dumb"))
		return NULL;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	sc->s = newterm(NULL, stdout, stdin);
	if (!sc->s) {
		free(sc);
		return NULL;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	return sc;
}

void screen_close(struct screen *sc)
{
	endwin();
	delscreen(sc->s);
	free(sc);
}

int screen_key(struct screen *sc)
{
	int c = getch();

	(void)sc;
	if (c == KEY_RESIZE)
		return 0;           /* redrawn by the caller at the new size */
	return c == ERR ? -1 : c;
}

static void spark(const struct lv_dev *d, int width)
{
	static const char lv[] = " .:-=+*#%@";
	uint64_t max = 0;
	int from = d->nhist > width ? d->nhist - width : 0;

	for (int i = from; i < d->nhist; i++)
		if (d->hist[i] > max)
			max = d->hist[i];
	for (int i = from; i < d->nhist; i++)
		addch((chtype)lv[max ? (int)(d->hist[i] * 9 / max) : 0]);
}

void screen_draw(struct screen *sc, const struct lv *v, enum lv_sort sort, int proc, int dev,
		 int paused, const char *warn)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	int rows, cols, y = 0, *order;

	(void)sc;
	getmaxyx(stdscr, rows, cols);
	erase();
	attron(A_BOLD);
	mvprintw(y++, 0, "memtrace top  %d process%s (%d running)  %" PRIu64 " records  %s%s",
		 v->nprocs, v->nprocs == 1 ? "" : "es", v->nrunning, v->records,
		 rep_duration(b1, sizeof(b1), v->time), paused ? "  [paused]" : "");
	attroff(A_BOLD);
	if (v->host.has_mem)
		mvprintw(y++, 0, "host: available %s of %s   /dev/shm free %s of %s, run %s",
			 rep_size(b1, sizeof(b1), v->host.mem_available),
			 rep_size(b2, sizeof(b2), v->host.mem_total),
			 rep_size(b3, sizeof(b3), v->host.shm_free),
			 rep_size(b4, sizeof(b4), v->host.shm_size),
			 rep_size(b5, sizeof(b5), v->host.shm_now));
	y++;
	attron(A_REVERSE);
	mvprintw(y++, 0, "%-4s %10s %10s %10s %10s %10s %10s %5s  %s", "DEV", "RESERVED", "ALLOC",
		 "CACHED", "USED", "UNTRACED", "PEAK", "FAIL", "RESERVED, LAST MINUTES");
	attroff(A_REVERSE);
	for (int i = 0; i < v->ndevs && y < rows - 4; i++) {
		const struct lv_dev *d = &v->devs[i];
		int x;

		if (dev >= 0 && d->dev != dev)
			continue;
		mvprintw(y, 0, "%-4d %10s %10s %10s %10s %10s %10s %5" PRIu64 "  ", d->dev,
			 rep_size(b1, sizeof(b1), d->reserved), rep_size(b2, sizeof(b2), d->allocated),
			 rep_size(b3, sizeof(b3), d->cached),
			 d->has_sample ? rep_size(b4, sizeof(b4), d->used) : "-",
			 d->has_sample && d->untraced >= 0 ?
			 rep_size(b5, sizeof(b5), (uint64_t)d->untraced) : "-",
			 rep_size(b6, sizeof(b6), d->peak), d->failures);
		x = getcurx(stdscr);
		if (cols - x > 4)
			spark(d, cols - x - 1);
		y++;
	}
	y++;
	attron(A_REVERSE);
	mvprintw(y++, 0, "%8s %4s %-7s %10s %10s %6s %4s %10s %10s %10s  %s", "PID", "RANK",
		 "STATE", "RESERVED", "PEAK", "LIVE", "FAIL", "RSS", "PINNED", "SHM", "COMMAND");
	attroff(A_REVERSE);
	order = calloc((size_t)(v->nprocs ? v->nprocs : 1), sizeof(int));
	if (order)
		lv_order(v, order);
	for (int j = 0; order && j < v->nprocs && y < rows - 4; j++) {
		int i = order[j];
		const struct lv_proc *p = &v->procs[i];

		if (proc >= 0 && i != proc)
			continue;
		if (proc == i)
			attron(A_BOLD);
		char rank[12] = "-";

		if (p->rank >= 0)
			snprintf(rank, sizeof(rank), "%d", p->rank);
		mvprintw(y++, 0, "%8u %4s %-7s %10s %10s %6" PRIu64 " %4" PRIu64 " %10s %10s %10s  %s",
			 p->pid, rank, lv_state_name(p->state),
			 rep_size(b1, sizeof(b1), p->reserved), rep_size(b2, sizeof(b2), p->peak),
			 p->live_allocs, p->failures,
			 p->has_rss ? rep_size(b3, sizeof(b3), p->rss) : "-",
			 rep_size(b4, sizeof(b4), p->pinned), rep_size(b5, sizeof(b5), p->shm_bytes),
			 p->command ? p->command : "");
		if (proc == i)
			attroff(A_BOLD);
	}
	if (v->has_ranges && order) {
		/* the program's units of time: where each process is now */
		y++;
		attron(A_REVERSE);
		mvprintw(y++, 0, "%8s %6s %9s %10s %10s  %s", "PID", "STEP", "LAST STEP", "ITS PEAK",
			 "AT ITS END", "RANGE NOW");
		attroff(A_REVERSE);
		for (int j = 0; j < v->nprocs && y < rows - 4; j++) {
			const struct lv_proc *p = &v->procs[order[j]];
			char st[16] = "-", ls[16] = "-";

			if (proc >= 0 && order[j] != proc)
				continue;
			if (p->step)
				snprintf(st, sizeof(st), "%" PRIu32, p->step);
			if (p->has_last_step)
				snprintf(ls, sizeof(ls), "%" PRIu32, p->last_step);
			mvprintw(y++, 0, "%8u %6s %9s %10s %10s  %.*s", p->pid, st, ls,
				 p->has_last_step ? rep_size(b1, sizeof(b1), p->last_step_peak) : "-",
				 p->has_last_step ? rep_size(b2, sizeof(b2), p->last_step_end) : "-",
				 cols > 60 ? cols - 60 : 0, *p->range ? p->range : "-");
		}
	}
	free(order);
	if (v->has_fw) {
		/* the framework's allocator, in PyTorch's terms: each device of
		   the run, then its largest tensor sites */
		y++;
		attron(A_REVERSE);
		mvprintw(y++, 0, "%-7s %-4s %10s %10s %10s %10s %10s  %s", "PYTORCH", "DEV", "RESERVED",
			 "ALLOCATED", "REQUESTED", "CACHED", "PEAK ALLOC", "TENSOR SITES");
		attroff(A_REVERSE);
		for (int i = 0; i < v->nfwdevs && y < rows - 4; i++) {
			const struct lv_fwdev *d = &v->fwdevs[i];

			if (d->proc >= 0)
				continue;
			mvprintw(y++, 0, "%-7s %-4d %10s %10s %10s %10s %10s", "", d->dev,
				 rep_size(b1, sizeof(b1), d->reserved),
				 rep_size(b2, sizeof(b2), d->allocated),
				 rep_size(b3, sizeof(b3), d->requested),
				 rep_size(b4, sizeof(b4), d->cached),
				 rep_size(b6, sizeof(b6), d->peak_allocated));
		}
		for (int i = 0; i < v->ntsites && i < 5 && y < rows - 4; i++) {
			const struct lv_tsite *t = &v->tsites[i];

			mvprintw(y++, 0, "%-7s %-4d %10s %10s  %.*s", "tensors", t->dev,
				 rep_size(b1, sizeof(b1), t->live), rep_size(b2, sizeof(b2), t->peak),
				 cols > 36 ? cols - 36 : 0, t->name);
		}
	}
	y++;
	attron(A_REVERSE);
	mvprintw(y++, 0, "%-4s %10s %8s %11s  %s  (sort: %s%s%s)", "DEV", "LIVE", "COUNT",
		 v->marked ? "SINCE MARK" : "SINCE START", "SITE",
		 sort == LV_SORT_COUNT ? "count" : sort == LV_SORT_GROWTH ? "growth" : "bytes",
		 proc >= 0 ? ", one process" : "", dev >= 0 ? ", one device" : "");
	attroff(A_REVERSE);
	for (int i = 0; i < v->nsites && y < rows - 1; i++) {
		const struct lv_site *s = &v->sites[i];
		uint64_t g = (uint64_t)(s->growth < 0 ? -s->growth : s->growth);

		b2[0] = s->growth < 0 ? '-' : '+';
		rep_size(b2 + 1, sizeof(b2) - 1, g);
		if (s->dev >= 0)
			snprintf(b3, sizeof(b3), "%d", s->dev);
		mvprintw(y++, 0, "%-4s %10s %8" PRIu64 " %11s  %.*s", s->dev >= 0 ? b3 : "host",
			 rep_size(b1, sizeof(b1), s->live), s->count, b2, cols > 40 ? cols - 40 : 0,
			 s->name);
	}
	if (warn && rows > 2) {
		attron(A_BOLD);
		mvprintw(rows - 2, 0, "warning: %.*s", cols > 9 ? cols - 9 : 0, warn);
		attroff(A_BOLD);
	}
	mvprintw(rows - 1, 0, "s sort  p process  d device  m mark  space pause  q quit");
	refresh();
}
