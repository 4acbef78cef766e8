/*
 * screen.h - the interactive view of `memtrace top` (ncurses): devices
 * with a sparkline of reserved, processes with their host memory, and the
 * top live sites. Keys: s sort (bytes, count, growth), p next process,
 * d next device, m mark, space pause, q quit.
 */
#ifndef MEMTRACE_SCREEN_H
#define MEMTRACE_SCREEN_H

#include "live/figures.h"

struct screen;

/* NULL when the terminal cannot be driven (not a tty, unknown or dumb). */
struct screen *screen_open(void);
void screen_close(struct screen *sc);
/* warn: the last warning about the traces, on the line above the keys (NULL: none) */
void screen_draw(struct screen *sc, const struct lv *v, enum lv_sort sort, int proc, int dev,
		 int paused, const char *warn);
/* The next key pressed, or -1 when none is waiting (resizes are handled). */
int screen_key(struct screen *sc);

#endif
