/*
 * trace-format.h - the memtrace trace file: the only contract between the
 * recorder (libmemtrace.so) and the analyzer (the memtrace command).
 *
 * A trace is one file per traced process. It starts with a fixed 64-byte
 * file header (struct mt_file_header); slabs of slab_size bytes follow at
 * offsets header_size + k * slab_size, k = 0, 1, ... The writer sets
 * header_size = slab_size (the bytes between the header and the first slab
 * are zero), so that every slab starts on a page boundary and can be mapped.
 *
 * Slabs are what make the file crash-safe without a system call per event.
 * The recorder maps the file MAP_SHARED, so a store into it reaches the page
 * cache at once and survives a SIGKILL of the process. Each thread claims a
 * whole slab for itself and appends records to it; nobody else writes into
 * that slab while it owns it (format 2: when it ends, another thread may
 * take over the slab's tail after an MT_REC_OWNER record). A record is written body first and its 4-byte head last
 * (a release store), so a head that reads as zero means "nothing more in this
 * slab": either the slab was never filled further, or its thread was killed
 * in the middle of that record (a torn record, skipped by construction).
 * Records never cross a slab boundary. Records of one slab are in time
 * order; slabs of different threads interleave, so readers sort by time.
 *
 * Every classic record starts with struct mt_head. Its size8 field gives
 * the record size in 8-byte units; when it is 0 the record is "long" and a
 * uint32_t byte size follows the head (struct mt_long_head). Every classic
 * record size is a multiple of 8 (compact records, format 2: below). Readers skip record types they do not know, so new record
 * types may be added without a version bump; changing the layout of an
 * existing record, the header or the slab rules requires bumping
 * MT_FORMAT_VERSION. Readers reject a newer major version naming both.
 *
 * MT_FORMAT_MINOR (the header's version_minor) is bumped when a writer
 * starts making a promise an old reader can ignore but a new one relies
 * on, such as a record type whose absence means something. Readers accept
 * every minor of the version they read and ask it what the trace promises.
 *   1.0  the first format (version_minor was reserved, zero)
 *   1.1  MT_REC_EXIT: a process that ends by exit(), a return from main or
 *        _exit() writes one as its last record; a 1.1 trace without one
 *        was killed (a signal, a crash, power loss)
 *   1.2  framework records may be present (MT_REC_FW_EVENT, MT_REC_FW_STACK,
 *        MT_REC_FW_INFO): a framework's own allocator, seen through
 *        include/memtrace/framework.h
 *   2.0  compact event records (below) and slabs with several owners in
 *        turn (MT_REC_OWNER); the promises of 1.1 and 1.2 hold
 *   2.1  range records may be present (MT_REC_RANGE, MT_REC_STRING): the
 *        program's own units of time (NVTX ranges and marks, memtrace's
 *        marker API: include/memtrace/markers.h); a 2.1 trace without
 *        any marked none that memtrace saw. 2.0 readers skip both types
 *   2.2  NVTX memory records may be present (MT_REC_NVTX_MEM): heaps and
 *        regions a pool allocator announced through nvToolsExtMem.h; a
 *        2.2 trace without any had no NVTX memory call that memtrace saw.
 *        2.1 readers skip the type
 *
 * Compact records (format 2). A byte b >= 0x80 where a record starts is a
 * compact record: its body is the (b & 0x7f) bytes after b, and b is
 * stored last (a one-byte release store), so a compact record is byte
 * granular and needs no alignment. b == 0x80 (no body) is one byte of
 * padding. Classic records (type < 0x80) keep their 8-byte heads and start
 * on 8-byte offsets: a writer pads to the next one with 0x80 bytes first.
 * A zero byte where a record starts (aligned or not) ends the slab's
 * records, as a zero head does in format 1. Readers of format 1 traces see
 * no compact records (there, every record is classic).
 *
 * A compact event: a tag byte (enum mt_compact_tag), then LEB128 varints:
 *   time   zigzag(time - previous time)
 *   addr   zigzag(addr - previous addr)
 *   kind (one byte), device (one byte, int8_t), api    unless SAME_KDA
 *   bytes                                              unless BYTES0
 *   stack id                                           unless SAME_STACK
 *   result                                             if RESULT
 *   x1, x2                                             if EX, unless SAME_X
 * "previous" is the state of struct mt_compact_state: per slab (and per
 * owner of a slab), so each slab decodes on its own; time starts at the
 * slab's (or owner's) time base, everything else at zero, and the kind /
 * device / api and stack are remembered per class (alloc, free, fw), the
 * others across classes. Fields left out are the previous value (0 for
 * bytes and result). Classic records keep their own time_delta from the
 * slab's time base; compact ones need no MT_REC_TIMEBASE.
 * A class-2 (fw) compact event is an MT_REC_FW_EVENT: kind = action,
 * bytes = size, x1 = stream, x2 = x (both 0 without EX), api and result
 * 0; format 2 writers write FW events this way. A class-3 compact
 * record is reserved: readers skip it.
 *
 * All integers are little-endian (the recorder runs on x86-64 and aarch64
 * Linux; both are little-endian). All times are CLOCK_MONOTONIC nanoseconds.
 * docs/trace-format.md describes the same in prose, with examples.
 */
#ifndef MEMTRACE_TRACE_FORMAT_H
#define MEMTRACE_TRACE_FORMAT_H

#include <stdint.h>

#define MT_MAGIC "MEMTRACE"        /* 8 bytes, no terminating NUL on disk */
#define MT_FORMAT_VERSION 2        /* bump on any incompatible layout change */
#define MT_FORMAT_MINOR 2          /* bump when writers promise more (above) */
#define MT_FILE_HEADER_SIZE 64
#define MT_SLAB_SIZE (64 * 1024)   /* power of two; records never cross it */
#define MT_SLAB_MAGIC 0x424c534du  /* "MSLB" little-endian */
#define MT_MAX_DEPTH 256           /* most frames a stack record may hold */
#define MT_MAX_RECORD (16 * 1024)  /* largest record a writer produces */

struct mt_file_header {
	char magic[8];              /* MT_MAGIC */
	uint32_t version;           /* MT_FORMAT_VERSION of the writer */
	uint32_t header_size;       /* offset of the first slab: a multiple of
	                               4096, >= MT_FILE_HEADER_SIZE */
	uint32_t slab_size;         /* MT_SLAB_SIZE of the writer */
	uint32_t pid;
	uint64_t start_wall_ns;     /* CLOCK_REALTIME at start, ns since epoch */
	uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at the same moment */
	uint64_t run_id;            /* MEMTRACE_RUN_ID of `memtrace run`, or 0 */
	uint32_t version_minor;     /* MT_FORMAT_MINOR of the writer; 0 in
	                               traces older than the field */
	uint8_t reserved[12];
};

/*
 * Every slab begins with this. A slab whose magic is not MT_SLAB_MAGIC was
 * claimed but never written (or never claimed): readers skip it.
 */
struct mt_slab_header {
	uint32_t magic;             /* MT_SLAB_MAGIC, stored last */
	uint32_t tid;               /* the thread that owns the slab */
	uint64_t time_base;         /* event times are offsets from this */
};

/* Record types. Values are never reused. */
enum mt_record_type {
	MT_REC_PROCESS = 1,         /* long: who this process is */
	MT_REC_MODULE = 2,          /* long: a loaded ELF object */
	MT_REC_STACK = 3,           /* long: an interned backtrace */
	MT_REC_ALLOC = 4,           /* 32 B: something was allocated or tried */
	MT_REC_FREE = 5,            /* 32 B: something was released or tried */
	MT_REC_ALLOC_EX = 6,        /* 48 B: alloc with two extra fields */
	MT_REC_FREE_EX = 7,         /* 48 B: free with two extra fields */
	MT_REC_POOL = 8,            /* 48 B: a memory pool's reserved/used */
	MT_REC_MEMINFO = 9,         /* 32 B: cuMemGetInfo of one device */
	MT_REC_TIMEBASE = 10,       /* 16 B: new time base for this slab */
	MT_REC_DRIVER = 11,         /* 16 B: CUDA driver version */
	MT_REC_NOTE = 12,           /* long: a warning the recorder emitted */
	MT_REC_PYCODE = 13,         /* long: a Python code object, first seen */
	MT_REC_SHM = 14,            /* long: a POSIX shared memory operation */
	MT_REC_EXIT = 15,           /* 16 B: how the process ended (1.1) */
	MT_REC_FW_EVENT = 16,       /* 56 B: a framework allocator event (1.2) */
	MT_REC_FW_STACK = 17,       /* long: an interned framework stack (1.2) */
	MT_REC_FW_INFO = 18,        /* long: a note about the framework (1.2) */
	MT_REC_OWNER = 19,          /* 16 B: a new owner of the slab (2.0) */
	MT_REC_RANGE = 20,          /* 16/24 B: a range, mark or name (2.1) */
	MT_REC_STRING = 21,         /* long: an interned string (2.1) */
	MT_REC_NVTX_MEM = 22,       /* long: an NVTX heap or region (2.2) */
};

/* A compact record's first byte (format 2.0): 0x80 | body length. */
#define MT_COMPACT 0x80u
#define MT_COMPACT_MAX 72          /* largest compact record a writer makes */

/* The tag byte of a compact event: its class in the low two bits. */
enum mt_compact_tag {
	MT_CT_ALLOC = 0,            /* an MT_REC_ALLOC(_EX) */
	MT_CT_FREE = 1,             /* an MT_REC_FREE(_EX) */
	MT_CT_FW = 2,               /* an MT_REC_FW_EVENT */
	MT_CT_CLASS = 3,            /* mask; class 3 is reserved */
	MT_CT_EX = 1 << 2,          /* x1, x2 (an _EX event; a FW event's
	                               stream and x) */
	MT_CT_SAME_KDA = 1 << 3,    /* kind, device, api as the class's last */
	MT_CT_SAME_STACK = 1 << 4,  /* stack id as the class's last */
	MT_CT_RESULT = 1 << 5,      /* a result follows (else 0) */
	MT_CT_BYTES0 = 1 << 6,      /* bytes is 0 (else it follows) */
	MT_CT_SAME_X = 1 << 7,      /* x1 and x2 as the last EX event's */
};

/* What compact events count from: reset at each slab and owner start. */
struct mt_compact_state {
	uint64_t time;              /* the last compact event's time, at first
	                               the slab's (owner's) time base */
	uint64_t addr, x1, x2;
	uint32_t kda[3];            /* kind | device << 8 | api << 16, per
	                               class; 0 at first */
	uint32_t stack[3];          /* per class */
};

static inline void mt_compact_reset(struct mt_compact_state *c, uint64_t time_base)
{
	*c = (struct mt_compact_state){ .time = time_base };
}

/* The head of every record; stored last, as one 32-bit release store. */
struct mt_head {
	uint8_t type;               /* enum mt_record_type, never 0 */
	uint8_t size8;              /* size / 8, or 0 for a long record */
	uint8_t a;                  /* per-type: kind for events */
	int8_t b;                   /* per-type: device for events, -1 none */
};

struct mt_long_head {
	struct mt_head h;
	uint32_t size;              /* whole record size in bytes */
};

/* What an event is about. Values are never reused. */
enum mt_kind {
	MT_KIND_DEVICE = 1,         /* cuMemAlloc, cuMemAllocPitch */
	MT_KIND_MANAGED = 2,        /* cuMemAllocManaged */
	MT_KIND_HOST = 3,           /* pinned host: cuMemAllocHost, cuMemHostAlloc */
	MT_KIND_HOST_REGISTER = 4,  /* cuMemHostRegister: pins, no new bytes */
	MT_KIND_ASYNC = 5,          /* stream-ordered: cuMemAllocAsync & co. */
	MT_KIND_VMM_PHYS = 6,       /* cuMemCreate/cuMemRelease: addr = handle */
	MT_KIND_VMM_RETAIN = 7,     /* cuMemRetainAllocationHandle: +1 ref */
	MT_KIND_VMM_RESERVE = 8,    /* cuMemAddressReserve/Free: address space */
	MT_KIND_VMM_MAP = 9,        /* cuMemMap/cuMemUnmap */
	MT_KIND_ARRAY = 10,         /* cuArray*Create/Destroy: size estimated */
	MT_KIND_FOREIGN = 11,       /* IPC / imported: not this process's bytes */
	MT_KIND_POOL = 12,          /* cuMemPoolCreate/Destroy: addr = pool */
};
#define MT_KIND_MASK 0x3f
#define MT_KIND_ESTIMATED 0x40      /* size is an estimate (arrays) */
#define MT_KIND_RUNTIME 0x80        /* result is a cudaError_t, recorded
                                       at the runtime level */

/*
 * MT_REC_ALLOC / MT_REC_FREE (32 bytes). head.a = kind | flags,
 * head.b = device (-1 when not known, e.g. host memory or a free).
 * A failed call is recorded too, with result != 0; a failed allocation keeps
 * the requested size and addr 0. A free's bytes is 0 when the recorder does
 * not know it (the analyzer pairs frees with allocations by address).
 */
struct mt_event {
	struct mt_head h;
	uint32_t time_delta;        /* ns since the slab's time base */
	uint64_t addr;              /* pointer, or handle for VMM_PHYS/POOL */
	uint64_t bytes;
	uint32_t stack_id;          /* 0: no stack recorded */
	uint16_t api;               /* enum mt_api: the outermost API called */
	uint16_t result;            /* CUresult, or cudaError_t with RUNTIME */
};

/*
 * MT_REC_ALLOC_EX / MT_REC_FREE_EX (48 bytes): an event and two fields whose
 * meaning depends on the kind:
 *   ASYNC:     x1 = stream, x2 = pool (0 if not known)
 *   VMM_MAP:   x1 = handle, x2 = offset into the handle (alloc); free: none
 *   VMM_PHYS:  x1 = location type (CUmemLocationType), x2 = location id
 */
struct mt_event_ex {
	struct mt_event e;
	uint64_t x1;
	uint64_t x2;
};

/*
 * MT_REC_POOL (48 bytes): the state of a memory pool after an operation that
 * may change it. head.b = device of the pool. Written only when reserved or
 * used changed since the last POOL record of that pool.
 */
struct mt_pool {
	struct mt_head h;
	uint32_t time_delta;
	uint64_t pool;
	uint64_t reserved;          /* CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT */
	uint64_t used;              /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */
	uint16_t api;               /* the call after which it was sampled */
	uint16_t pad16;
	uint32_t pad32;
	uint64_t pad64;
};

/* MT_REC_MEMINFO (32 bytes): cuMemGetInfo_v2 of device head.b. */
struct mt_meminfo {
	struct mt_head h;
	uint32_t time_delta;
	uint64_t free_bytes;
	uint64_t total_bytes;
	uint64_t pad;
};

/* MT_REC_TIMEBASE (16 bytes): later events of this slab count from here. */
struct mt_timebase {
	struct mt_head h;
	uint32_t pad;
	uint64_t time_base;
};

/*
 * MT_REC_OWNER (16 bytes, format 2.0): the rest of this slab belongs to
 * thread tid, from time_base on: a thread that ended gave its slab's tail
 * back and another took it over. Records after it are tid's, classic times
 * count from time_base, and compact state starts over as at a slab start.
 * Each owner's records are after the previous owner's in time.
 */
struct mt_owner {
	struct mt_head h;
	uint32_t tid;
	uint64_t time_base;
};

/* MT_REC_DRIVER (16 bytes): cuDriverGetVersion, once per process. */
struct mt_driver {
	struct mt_head h;
	int32_t driver_version;     /* e.g. 13000 */
	uint64_t pad;
};

/*
 * MT_REC_STACK (long): stack head.b unused. ips[0] is the innermost frame
 * (the caller of the CUDA function); memtrace's own frames are removed.
 */
struct mt_stack {
	struct mt_long_head lh;
	uint32_t id;                /* > 0, unique in the file */
	uint32_t depth;             /* number of ips */
	uint64_t ips[];
};

/*
 * MT_REC_MODULE (long): an ELF object mapped into the process, written at
 * start and after each dlopen. Strings follow the fixed part: build id bytes
 * (build_id_len of them), then the path (path_len bytes, no NUL), padded with
 * zeros to a multiple of 8.
 */
struct mt_module {
	struct mt_long_head lh;
	uint64_t base;              /* load bias (dlpi_addr) */
	uint64_t start;             /* lowest mapped address of PT_LOAD segments */
	uint64_t end;               /* one past the highest */
	uint32_t time_delta;
	uint16_t build_id_len;
	uint16_t path_len;
};

/*
 * MT_REC_PROCESS (long): written first in the first slab. Strings follow
 * in this order, each with its length in the fixed part: hostname, command
 * line (each argument followed by a NUL byte, as in
 * /proc/PID/cmdline; cut at 8 KiB), executable path. rank, local_rank
 * and world_size are -1 when RANK / LOCAL_RANK / WORLD_SIZE are unset.
 */
struct mt_process {
	struct mt_long_head lh;
	uint32_t pid;
	uint32_t ppid;
	int32_t rank;
	int32_t local_rank;
	int32_t world_size;
	uint16_t hostname_len;
	uint16_t exe_len;
	uint32_t cmdline_len;
	uint32_t pad;
};

/*
 * Python frames inside stacks. A stack's ips may hold, where the
 * interpreter's evaluation loop was on the native stack, the Python frames it
 * was running, innermost first, each encoded as
 *   MT_PYFRAME_TAG | code_id << 24 | instruction offset (24 bits)
 * A native address never has bit 63 set on the supported platforms. code_id
 * names an MT_REC_PYCODE record of the same file; the offset is in the
 * units that record's line table counts (see docs/trace-format.md).
 */
#define MT_PYFRAME_TAG (1ull << 63)
#define MT_PYFRAME_CODE(ip) ((uint32_t)(((ip) & ~MT_PYFRAME_TAG) >> 24))
#define MT_PYFRAME_OFFSET(ip) ((uint32_t)((ip) & 0xffffffu))

/*
 * MT_REC_PYCODE (long): what is needed to turn (code object, instruction
 * offset) into file, function and line later, copied when the recorder first
 * saw the code object (so a freed and reused code object cannot give a
 * wrong line). Strings follow the fixed part: filename, qualified name, then
 * the raw line table bytes of that interpreter version, padded to 8.
 */
struct mt_pycode {
	struct mt_long_head lh;
	uint32_t id;                /* > 0, unique in the file */
	int32_t first_line;         /* co_firstlineno */
	uint16_t py_version;        /* 0xMMmm: 0x030b for 3.11 */
	uint16_t filename_len;
	uint16_t name_len;
	uint16_t pad;
	uint32_t linetable_len;
	uint32_t pad2;
};

/*
 * MT_REC_SHM (long): a POSIX shared memory operation (shm_open, ftruncate
 * or fallocate of its descriptor, mmap of it, shm_unlink, close), as used by
 * PyTorch's DataLoader and torch.multiprocessing for /dev/shm segments.
 * head.a = enum mt_shm_op. The segment name follows (name_len bytes, padded
 * to 8): the one given to shm_open / shm_unlink, and on the other operations
 * the name the descriptor or mapping was opened under, so that a record is
 * understood without its open (a forked worker's inherited descriptor).
 * Times: open, truncate, fallocate, mmap after the call; close, unlink,
 * munmap before it (the hook ordering of recorder.c).
 */
enum mt_shm_op {
	MT_SHM_OPEN = 1, MT_SHM_TRUNCATE = 2, MT_SHM_MMAP = 3, MT_SHM_UNLINK = 4,
	MT_SHM_CLOSE = 5, MT_SHM_FALLOCATE = 6, MT_SHM_MUNMAP = 7,
};

struct mt_shm {
	struct mt_long_head lh;
	uint32_t time_delta;
	uint32_t stack_id;
	int32_t fd;                 /* -1 when none (unlink) */
	int32_t flags;              /* open flags, or mmap prot */
	int32_t err;                /* 0, or the errno of a failed call */
	uint32_t name_len;
	uint64_t size;              /* truncate/fallocate size, mmap length */
	uint64_t addr;              /* mmap/munmap address */
};

/*
 * MT_REC_EXIT (16 bytes, format 1.1): the process ends. head.a = enum
 * mt_exit_how, head.b = 0. status is the value given to exit() or _exit()
 * (or returned from main), as passed: the parent sees status & 0xff. Written
 * at most once per trace, after every other record of the process (in time
 * order; in file order it sits in the slab of the thread that ended the
 * process), and nothing is recorded after it. A process that is killed
 * (SIGKILL, a fatal signal, abort()), that exec()s, or that ends by an exit
 * path the recorder does not see (the exit_group system call itself,
 * quick_exit()) has none.
 */
enum mt_exit_how {
	MT_EXIT_EXIT = 1,           /* exit() or a return from main, seen by
	                               an on_exit() handler that runs last */
	MT_EXIT__EXIT = 2,          /* _exit() or _Exit() */
};

struct mt_exit {
	struct mt_head h;
	uint32_t time_delta;
	int32_t status;
	uint32_t pad;
};

/*
 * Framework records (format 1.2): what a framework's own allocator (PyTorch's
 * caching allocator) did inside the segments it took from CUDA, handed to
 * the recorder through the entry points of include/memtrace/framework.h.
 *
 * MT_REC_FW_EVENT (56 bytes): one event. head.a = enum mt_fw_action of
 * framework.h, head.b = device (-1 when the framework gave none or one
 * outside -128..127). The time is the framework's, converted to
 * CLOCK_MONOTONIC by the caller; addr, size, stream and x as framework.h
 * says (x: an OOM's device free bytes as the framework saw them, else 0).
 * stack_id names an MT_REC_FW_STACK of the same file, 0 none.
 *
 * FW events reach the recorder in batches, long after they happened (a
 * drain of the framework's history), so they never go into a slab of a
 * thread, which holds later records already: they fill slabs of their own,
 * in time order within each slab like every state record. Such a slab's
 * tid is that of the thread that handed the batch over; a batch that
 * starts earlier than the last event written starts a new slab.
 */
struct mt_fw_event {
	struct mt_head h;
	uint32_t time_delta;
	uint64_t addr;
	uint64_t size;
	uint64_t stream;
	uint64_t x;
	uint32_t stack_id;
	uint32_t pad;
	uint64_t pad2;
};

/*
 * MT_REC_FW_STACK (long): a framework stack, interned: the same frames are
 * written once per file and events carry its id. nframes frames follow the
 * fixed part, innermost first, packed one after another exactly as
 * memtrace_fw_stack() received them: each { uint32_t line; uint16_t
 * file_len; uint16_t func_len; file bytes; function bytes } with no padding;
 * then zeros to a multiple of 8. A stack whose record would exceed
 * MT_MAX_RECORD keeps its innermost frames that fit. Written in the slab of
 * the calling thread, before memtrace_fw_stack() returns its id; a side
 * record with no time of its own.
 */
struct mt_fw_stack {
	struct mt_long_head lh;
	uint32_t id;                /* > 0, unique among the file's FW stacks */
	uint32_t nframes;
};

/* One packed frame of an MT_REC_FW_STACK, before its two strings. */
struct mt_fw_frame {
	uint32_t line;
	uint16_t file_len;
	uint16_t func_len;
};

/*
 * MT_REC_FW_INFO (long): "key=value\n" lines about the framework (its name
 * and version, the allocator's settings, what a drain could not keep), len
 * bytes after the fixed part, padded with zeros to 8; cut to fit
 * MT_MAX_RECORD. Written in the slab of the calling thread, at the time of
 * the call; a side record.
 */
struct mt_fw_info {
	struct mt_long_head lh;
	uint32_t time_delta;
	uint32_t len;
};

/*
 * Range records (format 2.1): the program's own units of time. NVTX v3
 * calls (push/pop, start/end, marks, thread names, in their domains) reach
 * the recorder through NVTX's injection interface (preload/nvtx.c); the
 * marker API of include/memtrace/markers.h and memtrace's Python API
 * (memtrace.phase, memtrace.mark, the pytest plugin) write the same.
 *
 * MT_REC_RANGE (16 bytes, or 24 with the id): head.a = enum mt_range_op,
 * head.b = enum mt_range_origin. Written in the calling thread's slab at
 * the time of the call, so its thread and time are read as an event's.
 * domain and message name MT_REC_STRING records of the same file (0: the
 * NVTX default domain; no message). id (records of 24 bytes, size8 3):
 * START and END the range's id (ends pair with starts by id, on any
 * thread); NAME_THREAD the OS thread id named (message its name); else 0.
 * A PUSH opens a range on its thread and domain, a POP closes the
 * innermost open one of that thread and domain (a POP with none open is
 * the program's misuse, reported, not an error of the file).
 */
enum mt_range_op {
	MT_RANGE_PUSH = 1,          /* nvtxRangePush*, nvtxDomainRangePushEx */
	MT_RANGE_POP = 2,           /* nvtxRangePop, nvtxDomainRangePop */
	MT_RANGE_START = 3,         /* nvtxRangeStart*: id */
	MT_RANGE_END = 4,           /* nvtxRangeEnd: id */
	MT_RANGE_MARK = 5,          /* nvtxMark*: an instant */
	MT_RANGE_NAME_THREAD = 6,   /* nvtxNameOsThread*: id = the thread */
};

enum mt_range_origin {
	MT_ORIGIN_NVTX = 1,         /* NVTX's injection interface */
	MT_ORIGIN_C = 2,            /* include/memtrace/markers.h */
	MT_ORIGIN_PYTHON = 3,       /* python/memtrace.py */
	MT_ORIGIN_PYTEST = 4,       /* python/memtrace_pytest.py: a test */
	MT_ORIGIN_TORCH = 5,        /* python/memtrace_hooks.py: PyTorch steps, phases, modules */
};

struct mt_range {
	struct mt_head h;
	uint32_t time_delta;
	uint32_t domain;            /* MT_REC_STRING id, 0: default domain */
	uint32_t message;           /* MT_REC_STRING id, 0: none */
};

struct mt_range_id {
	struct mt_range r;
	uint64_t id;
};

/*
 * MT_REC_STRING (long): a string that range records name, interned: the
 * same bytes are written once per file (ids > 0, unique among the file's
 * strings; after a fork the child starts afresh) before any record names
 * it, in the slab of the thread that first used it. len bytes follow the
 * fixed part (UTF-8 as the program gave them; a wide string converted),
 * cut at MT_STRING_MAX, then zeros to a multiple of 8. A side record with
 * no time of its own.
 */
#define MT_STRING_MAX 1024
struct mt_string {
	struct mt_long_head lh;
	uint32_t id;
	uint32_t len;
};

/*
 * MT_REC_NVTX_MEM (long, format 2.2): one heap or region operation of
 * NVTX's memory extension (nvToolsExtMem.h), as a pool allocator announces
 * the memory it sub-allocates: nvtxMemHeapRegister (a heap: address, size,
 * usage), nvtxMemHeapUnregister, nvtxMemHeapReset (its regions dropped),
 * nvtxMemRegionsRegister / Resize / Unregister (sub-allocations; a batch
 * is one record per region, in its order). head.a = enum mt_nvtx_mem_op,
 * head.b = 0. Written in the calling thread's slab at the time of the
 * call, after the chained tool (if any) answered, so its thread and time
 * are read as an event's. Fields:
 *   domain  the nvtxDomainHandle_t the program passed, as memtrace handed
 *           it out (0: the default domain); its name is in the heap's
 *           HEAP_REGISTER record of the same domain
 *   heap    the heap handle the program got back from nvtxMemHeapRegister
 *           (HEAP_* and REGION_REGISTER; 0: NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE)
 *   addr, size  HEAP_REGISTER the heap's range; REGION_REGISTER the
 *           region's; REGION_RESIZE the region (by its address) and its new
 *           size; REGION_UNREGISTER by pointer the address
 *   handle  REGION_REGISTER the region handle the program got (its address
 *           unless a chained tool gave its own); REGION_UNREGISTER by
 *           handle that handle
 *   usage   HEAP_REGISTER the NVTX_MEM_HEAP_USAGE_* bits; REGION_UNREGISTER
 *           the reference type (NVTX_MEM_REGION_REF_TYPE_*: 1 pointer,
 *           2 handle)
 *   type    NVTX_MEM_TYPE_* of the heap or regions (1: virtual address,
 *           the only one whose addr and size the recorder reads; others
 *           are recorded with addr and size 0)
 *   stack_id  the call's stack, as an allocation's (0: none)
 * HEAP_REGISTER's names follow the fixed part: the domain's name
 * (domain_len bytes, 0 for the default domain) then the heap's message
 * (name_len bytes, ASCII or converted from wide, 0: none), each cut at
 * MT_STRING_MAX, then zeros to a multiple of 8. Misuse (a region outside
 * its heap, an unknown handle) is recorded as it happened, for the
 * analyzer to say.
 */
enum mt_nvtx_mem_op {
	MT_NVMEM_HEAP_REGISTER = 1,
	MT_NVMEM_HEAP_UNREGISTER = 2,
	MT_NVMEM_HEAP_RESET = 3,
	MT_NVMEM_REGION_REGISTER = 4,
	MT_NVMEM_REGION_RESIZE = 5,
	MT_NVMEM_REGION_UNREGISTER = 6,
};

struct mt_nvtx_mem {
	struct mt_long_head lh;
	uint32_t time_delta;
	uint32_t stack_id;
	uint64_t domain;
	uint64_t heap;
	uint64_t addr;
	uint64_t size;
	uint64_t handle;
	uint32_t usage;
	uint32_t type;
	uint16_t domain_len;
	uint16_t name_len;
	uint32_t pad;
};

/* MT_REC_NOTE (long): text follows the fixed part (len bytes, no NUL). */
struct mt_note {
	struct mt_long_head lh;
	uint32_t time_delta;
	uint32_t len;
};

/*
 * API identifiers: the outermost CUDA function the program called. The list
 * only grows; an id is never reused. MT_API(name, id).
 */
#define MT_API_LIST(X) \
	X(unknown, 0) \
	X(cuMemAlloc, 1) X(cuMemAlloc_v2, 2) \
	X(cuMemAllocPitch, 3) X(cuMemAllocPitch_v2, 4) \
	X(cuMemAllocManaged, 5) X(cuMemFree, 6) X(cuMemFree_v2, 7) \
	X(cuMemAllocAsync, 8) X(cuMemAllocAsync_ptsz, 9) \
	X(cuMemAllocFromPoolAsync, 10) X(cuMemAllocFromPoolAsync_ptsz, 11) \
	X(cuMemFreeAsync, 12) X(cuMemFreeAsync_ptsz, 13) \
	X(cuMemPoolCreate, 14) X(cuMemPoolDestroy, 15) X(cuMemPoolTrimTo, 16) \
	X(cuMemAllocHost, 17) X(cuMemAllocHost_v2, 18) X(cuMemHostAlloc, 19) \
	X(cuMemFreeHost, 20) X(cuMemHostRegister, 21) \
	X(cuMemHostRegister_v2, 22) X(cuMemHostUnregister, 23) \
	X(cuMemCreate, 24) X(cuMemRelease, 25) \
	X(cuMemRetainAllocationHandle, 26) X(cuMemAddressReserve, 27) \
	X(cuMemAddressFree, 28) X(cuMemMap, 29) X(cuMemUnmap, 30) \
	X(cuArrayCreate, 31) X(cuArrayCreate_v2, 32) \
	X(cuArray3DCreate, 33) X(cuArray3DCreate_v2, 34) X(cuArrayDestroy, 35) \
	X(cuMipmappedArrayCreate, 36) X(cuMipmappedArrayDestroy, 37) \
	X(cuIpcOpenMemHandle, 38) X(cuIpcOpenMemHandle_v2, 39) \
	X(cuIpcCloseMemHandle, 40) X(cuMemPoolImportPointer, 41) \
	X(cuExternalMemoryGetMappedBuffer, 42) \
	X(cuStreamSynchronize, 43) X(cuStreamSynchronize_ptsz, 44) \
	X(cuCtxSynchronize, 45) X(cuEventSynchronize, 46) \
	X(cuCtxSynchronize_v2, 47) X(cuGetProcAddress, 48) X(cuGetProcAddress_v2, 49) \
	X(cudaMalloc, 64) X(cudaFree, 65) X(cudaMallocAsync, 66) \
	X(cudaMallocAsync_ptsz, 67) X(cudaFreeAsync, 68) \
	X(cudaFreeAsync_ptsz, 69) X(cudaMallocFromPoolAsync, 70) \
	X(cudaMallocFromPoolAsync_ptsz, 71) X(cudaMallocManaged, 72) \
	X(cudaMallocHost, 73) X(cudaHostAlloc, 74) X(cudaFreeHost, 75) \
	X(cudaMallocPitch, 76) X(cudaMalloc3D, 77) X(cudaMallocArray, 78) \
	X(cudaMalloc3DArray, 79) X(cudaFreeArray, 80) \
	X(cudaHostRegister, 81) X(cudaHostUnregister, 82) \
	X(cudaMemPoolCreate, 83) X(cudaMemPoolDestroy, 84) \
	X(cudaMemPoolTrimTo, 85) X(cudaDeviceSynchronize, 86) \
	X(cudaStreamSynchronize, 87) X(cudaStreamSynchronize_ptsz, 88) \
	X(cudaIpcOpenMemHandle, 89) X(cudaIpcCloseMemHandle, 90) \
	X(cudaMallocMipmappedArray, 91) X(cudaFreeMipmappedArray, 92) \
	X(cuMemGetInfo_v2, 120)

enum mt_api {
#define MT_API_ENUM(name, id) MT_API_##name = id,
	MT_API_LIST(MT_API_ENUM)
#undef MT_API_ENUM
	MT_API_MAX = 128
};

#endif
