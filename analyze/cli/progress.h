/*
 * progress.h - one line on stderr saying how far a long report has got,
 * "memtrace: loading 42%", rewritten in place with '\r' and cleared at
 * the end. Only when stderr is a terminal, and only once the work has
 * taken more than PROGRESS_DELAY_MS (MEMTRACE_PROGRESS_AFTER_MS, when set):
 * quick commands and redirected output never see it.
 *
 * There is one line per process, so the state is this file's own: the
 * pipeline names its walks over the stream without carrying a handle, and
 * the message helpers of cli.c clear the line before they print.
 */
#ifndef MEMTRACE_PROGRESS_H
#define MEMTRACE_PROGRESS_H

#include "trace/stream.h"

#define PROGRESS_DELAY_MS 1000

/* The work starts now; shows progress from here on if stderr is a tty. */
void progress_start(void);
/*
 * The next walk over s is named first, and the walks after it (until the
 * next call) then; then NULL shows first for them all. Does nothing unless
 * progress_start() was called.
 */
void progress_phase(struct stream *s, const char *first, const char *then);
/* Clears the line, if one is shown; the next walk draws it again. */
void progress_clear(void);
/* Clears the line and shows nothing more (until progress_start()). */
void progress_end(void);

#endif
