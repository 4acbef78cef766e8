/*
 * symbols.h - offline symbolization of recorded stacks with elfutils
 * libdw, from the module map and build ids in the trace, and the trimming
 * that makes a stack readable.
 *
 * Functions return NULL / -1 with a message in err on failure; they never
 * print.
 */
#ifndef MEMTRACE_SYMBOLS_H
#define MEMTRACE_SYMBOLS_H

#include <sqlite3.h>
#include <stdint.h>

#include "trace/stream.h"

struct symbols;

struct sym_opts {
	const char *sysroot;        /* prefix for module paths, or NULL */
	const char *debug_dir;      /* DIR/.build-id/xx/yyyy[.debug], or NULL */
};

/* One frame as shown: function and source, or module + offset. */
struct sym_frame {
	const char *function;       /* NULL when not resolved */
	const char *file;           /* NULL when not known */
	int line;                   /* 0 when not known */
	const char *module;         /* path of the module, "" when none */
	uint64_t offset;            /* ip - load bias of the module */
	uint64_t ip;
	int inlined;                /* inlined into the next frame */
	int user;                   /* the first frame in the user's code */
	int python;                 /* a Python frame: file, line, function
	                               (qualified name); module "python" */
};

/*
 * A trimmed stack: frames innermost first, without the collapsed ones.
 * When it holds Python frames, the interpreter's own native frames
 * (libpython, the python executable) are collapsed too, so it reads like a
 * traceback, and the highlighted user frame is the first Python frame in the
 * user's code (not site-packages, not the standard library).
 */
struct sym_stack {
	struct sym_frame *frames;
	int nframes;
	int hidden;                 /* memtrace / CUDA / libc start frames */
};

/* db (may be NULL) caches resolved frames in its symbols table. */
struct symbols *sym_open(const struct sym_opts *o, sqlite3 *db, char *err, size_t errlen);
void sym_close(struct symbols *sy);

/* The trimmed, resolved stack; owned by sy. NULL when out of memory. */
const struct sym_stack *sym_stack(struct symbols *sy, const struct stream *s, int proc,
				  uint32_t stack);
/* 1 when a frame of the stack belongs to a known caching allocator. */
int sym_is_caching(struct symbols *sy, const struct stream *s, int proc, uint32_t stack);

/* Frames looked up that could not be resolved (distinct module+offset). */
uint64_t sym_unresolved(const struct symbols *sy);
/* Module i that could not be used and why ("not found", "build id
   mismatch"); returns -1 past the last. */
int sym_problem(const struct symbols *sy, unsigned i, const char **path, const char **why);

/* The function names recognized as caching allocators, for the docs. */
int sym_name_is_caching(const char *function, const char *module);

#endif
