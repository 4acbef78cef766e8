/*
 * framework.h - how a framework's own allocator reaches the trace: the C
 * entry points libmemtrace.so exports for memtrace's Python side
 * (python/memtrace_torch.py, which drains PyTorch's allocator history)
 * and the values they take. The records they write are MT_REC_FW_* of
 * trace-format.h.
 *
 * The entry points are called from ordinary Python code (through ctypes),
 * never from inside the framework's allocator: they take the writer's
 * lock for framework records and may block briefly. Each returns -1 (or 0
 * for an id) when tracing is off or the trace cannot be written, and
 * never fails the caller's program.
 */
#ifndef MEMTRACE_FRAMEWORK_H
#define MEMTRACE_FRAMEWORK_H

#include <stddef.h>
#include <stdint.h>

/* What a framework event is: PyTorch's TraceEntry actions. Values are
   never reused. */
enum mt_fw_action {
	MT_FW_ALLOC = 1,            /* a block handed to a tensor */
	MT_FW_FREE_REQUESTED = 2,   /* the tensor let go; the block waits for
	                               the streams that used it */
	MT_FW_FREE_COMPLETED = 3,   /* the block is free for reuse */
	MT_FW_SEGMENT_ALLOC = 4,    /* a segment from the driver (cudaMalloc) */
	MT_FW_SEGMENT_FREE = 5,     /* a segment given back (cudaFree) */
	MT_FW_SEGMENT_MAP = 6,      /* expandable segments: pages mapped */
	MT_FW_SEGMENT_UNMAP = 7,    /* expandable segments: pages unmapped */
	MT_FW_OOM = 8,              /* the allocator gave up: addr 0, size the
	                               request, x the device's free bytes as
	                               the framework saw them */
	MT_FW_CHECK = 9,            /* not PyTorch's: its counters, read by a
	                               drain when nothing changed while it
	                               read the history, stand after the events
	                               drained: addr reserved_bytes, size
	                               allocated_bytes, x requested_bytes
	                               ("all" pools, current) of the device */
	MT_FW_PEAKS = 10,           /* not PyTorch's: its peak counters as a
	                               drain or a tick of the drain thread read
	                               them: addr reserved_bytes, size
	                               allocated_bytes, x requested_bytes
	                               ("all" pools, peak) of the device */
};

/* One event as the caller hands it over (56 bytes, no padding). */
struct mt_fw_input {
	uint32_t action;            /* enum mt_fw_action */
	int32_t device;
	uint64_t time_ns;           /* CLOCK_MONOTONIC, like every trace time */
	uint64_t addr;
	uint64_t size;
	uint64_t stream;
	uint64_t x;                 /* MT_FW_OOM: device free bytes; else 0 */
	uint32_t stack_id;          /* from memtrace_fw_stack(), 0 none */
	uint32_t pad;
};

/*
 * Writes n events, which must be in time order and not earlier than the
 * events of earlier calls (a drain hands over what came since the last
 * one). Returns how many were written.
 */
int memtrace_fw_events(const struct mt_fw_input *ev, size_t n);

/*
 * Interns a stack of nframes frames packed one after another, innermost
 * first, each { uint32_t line; uint16_t file_len; uint16_t func_len;
 * file bytes; function bytes } with no padding. The same bytes give the
 * same id. Returns the id (> 0), 0 when it cannot be written.
 */
uint32_t memtrace_fw_stack(const void *frames, size_t len, uint32_t nframes);

/*
 * A note about the framework in "key=value" lines: its name and version,
 * the allocator's settings, what a drain could not keep ("dropped=N").
 * Returns 0, or -1.
 */
int memtrace_fw_info(const char *text, size_t len);

#endif
