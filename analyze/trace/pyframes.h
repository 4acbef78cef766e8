/*
 * pyframes.h - Python frames in stacks: decoding what the recorder wrote
 * (preload/pyframes.c) into file, function and line.
 *
 * A stack ip with MT_PYFRAME_TAG set is a Python frame: a code id (an
 * MT_REC_PYCODE record of the same trace) and an instruction offset in code
 * units (2 bytes) from the start of the bytecode. The pycode record holds
 * the file name, the qualified name (co_qualname; co_name before 3.11) and
 * the raw line table of its interpreter version, which py_frame_resolve()
 * decodes as that version's PyCode_Addr2Line() does: co_lnotab (3.9),
 * co_linetable (3.10), the location table (3.11 to 3.13).
 */
#ifndef MEMTRACE_PYFRAMES_H
#define MEMTRACE_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/trace-format.h"

struct trace;

/* True when a stack ip is a Python frame. */
static inline int py_is_frame(uint64_t ip)
{
	return (ip & MT_PYFRAME_TAG) != 0;
}

/*
 * The line of instruction offset (code units) of a code object whose
 * version is py_version (0xMMmm) and line table is linetable (len bytes).
 * Returns 0 with *line set (-1 when the instruction has no line, as
 * CPython's None), or -1 with *line = first_line when the table does not
 * cover the offset (cut by the recorder) or the version is not known.
 * Pure: reads only its arguments.
 */
int py_line_at(unsigned py_version, int first_line, const void *linetable, size_t len,
	       uint32_t offset, int *line);
/* The same, taking version, first line and line table from a record. */
int py_frame_resolve(const struct mt_pycode *code, const void *linetable, uint32_t offset,
		     int *line);

/* The code objects of one trace, by id. */
struct py_codes;

struct py_frame {
	const char *file;       /* UTF-8, not NUL-terminated */
	size_t file_len;
	const char *name;       /* qualified name */
	size_t name_len;
	int line;               /* -1: none */
};

/* Collects the trace's pycode records; NULL when out of memory. */
struct py_codes *py_codes_load(const struct trace *t);
void py_codes_free(struct py_codes *c);
/* Resolves a Python frame ip: 0, or -1 when its code id has no record. */
int py_codes_frame(const struct py_codes *c, uint64_t ip, struct py_frame *f);
/* The record of a code id, or NULL. */
const struct mt_pycode *py_codes_get(const struct py_codes *c, uint32_t id);

/*
 * True when a file is the user's own code: not under site-packages or
 * dist-packages, not the standard library (a /lib/pythonX.Y/ directory),
 * not frozen or generated ("<frozen ...>", "<string>").
 */
int py_file_is_user(const char *file, size_t len);

#endif
