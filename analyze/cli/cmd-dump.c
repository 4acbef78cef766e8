/*
 * cmd-dump.c - memtrace dump FILE: every record of a trace, one line each,
 * in file order (slab by slab), as key=value pairs. It is how people and the
 * tests look at the format; docs/trace-format.md shows each line.
 *
 * Times are printed relative to the header's start_mono_ns. Strings are
 * quoted and escaped C-style; bytes that are not printable or not valid
 * UTF-8 print as \xNN, so one record is always one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "trace/pyframes.h"
#include "trace/trace-read.h"
#include "views/utf8.h"

static const char usage_text[] =
	"usage: memtrace dump [--resolve-python] FILE\n"
	"\n"
	"Prints every record of the trace FILE, one per line, in file order:\n"
	"a first line '# trace ...' with the header, then process, module, stack,\n"
	"alloc, free, pool, meminfo, driver, note, shm, timebase, exit and the\n"
	"framework records fw_event, fw_stack and fw_info.\n"
	"Times are nanoseconds since the trace started. Warnings about a torn record\n"
	"or a cut file go to stderr.\n"
	"\n"
	"Python frames in stacks print as py:CODE_ID+OFFSET; with --resolve-python\n"
	"as py:FILE:LINE:FUNCTION, decoded from the trace's pycode records.\n"
	"\n"
	"exit status: 0 success, 1 invalid trace, 2 usage error or missing file\n";

/* Prints the bytes with C escapes, no quotes. */
static void put_escaped(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t u;

		if (c == '"' || c == '\\') {
			printf("\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", stdout);
		} else if (c == '\t') {
			fputs("\\t", stdout);
		} else if (c == '\r') {
			fputs("\\r", stdout);
		} else if (c >= 0x20 && c < 0x7f) {
			putchar(c);
		} else if (c >= 0x80 && (u = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, u, stdout);
			i += u;
			continue;
		} else {
			printf("\\x%02x", c);
		}
		i++;
	}
}

/* Prints "..." with C escapes. */
static void put_string(const char *str, size_t n)
{
	putchar('"');
	put_escaped(str, n);
	putchar('"');
}

/* The command line: one quoted string per NUL-separated argument. */
static void put_cmdline(struct trace_bytes b)
{
	size_t start = 0;

	if (b.len == 0) {
		put_string("", 0);
		return;
	}
	if (b.p[b.len - 1] == '\0')
		b.len--;    /* a trailing NUL ends the last argument */
	for (size_t i = 0; i <= b.len; i++) {
		if (i == b.len || b.p[i] == '\0') {
			if (start)
				putchar(' ');
			put_string(b.p + start, i - start);
			start = i + 1;
		}
	}
}

static void put_time(const struct trace *t, uint64_t ns)
{
	uint64_t start = trace_header(t)->start_mono_ns;

	if (ns >= start)
		printf(" time=+%" PRIu64, ns - start);
	else
		printf(" time=-%" PRIu64, start - ns);
}

static void put_api(unsigned api)
{
	const char *name = trace_api_name(api);

	if (name)
		printf(" api=%s", name);
	else
		printf(" api=%u", api);
}

/* tid= dev= for events, pool and meminfo records. */
static void put_tid_dev(const struct trace_rec *r)
{
	printf(" tid=%" PRIu32 " dev=%d", r->tid, ((const struct mt_head *)r->p)->b);
}

static void dump_event(const struct trace *t, const struct trace_rec *r)
{
	const struct mt_event *e = r->p;
	unsigned kind = e->h.a & MT_KIND_MASK;
	const char *kname = trace_kind_name(kind);
	int is_free = r->type == MT_REC_FREE || r->type == MT_REC_FREE_EX;

	fputs(is_free ? "free" : "alloc", stdout);
	put_time(t, r->time_ns);
	put_tid_dev(r);
	put_api(e->api);
	if (kname)
		printf(" kind=%s", kname);
	else
		printf(" kind=%u", kind);
	if (e->h.a & MT_KIND_ESTIMATED)
		fputs(",estimated", stdout);
	printf(" addr=0x%" PRIx64 " bytes=%" PRIu64 " result=%u%s stack=%" PRIu32,
	       e->addr, e->bytes, e->result, e->h.a & MT_KIND_RUNTIME ? "(runtime)" : "",
	       e->stack_id);
	if (r->type == MT_REC_ALLOC_EX || r->type == MT_REC_FREE_EX) {
		const struct mt_event_ex *x = r->p;

		if (kind == MT_KIND_ASYNC)
			printf(" stream=0x%" PRIx64 " pool=0x%" PRIx64, x->x1, x->x2);
		else if (kind == MT_KIND_VMM_MAP && !is_free)
			printf(" handle=0x%" PRIx64 " offset=%" PRIu64, x->x1, x->x2);
		else if (kind == MT_KIND_VMM_PHYS)
			printf(" location_type=%" PRIu64 " location_id=%" PRIu64, x->x1, x->x2);
		else if (kind != MT_KIND_VMM_MAP)
			printf(" x1=0x%" PRIx64 " x2=0x%" PRIx64, x->x1, x->x2);
	}
	putchar('\n');
}

/* Set by --resolve-python: Python frames print as file, line, function. */
static struct py_codes *py_codes;

static void put_frame(uint64_t ip)
{
	struct py_frame f;

	if (!py_is_frame(ip)) {
		printf(" 0x%" PRIx64, ip);
	} else if (py_codes && py_codes_frame(py_codes, ip, &f) == 0) {
		printf(" py:%.*s:%d:%.*s", (int)f.file_len, f.file, f.line, (int)f.name_len, f.name);
	} else {
		printf(" py:%" PRIu32 "+%" PRIu32, MT_PYFRAME_CODE(ip), MT_PYFRAME_OFFSET(ip));
	}
}

static void dump_record(const struct trace *t, const struct trace_rec *r)
{
	switch (r->type) {
	case MT_REC_PROCESS: {
		const struct mt_process *p = r->p;
		struct trace_bytes host, cmdline, exe;

		trace_process_strings(p, &host, &cmdline, &exe);
		printf("process pid=%" PRIu32 " ppid=%" PRIu32 " rank=%" PRId32
		       " local_rank=%" PRId32 " world_size=%" PRId32 " host=",
		       p->pid, p->ppid, p->rank, p->local_rank, p->world_size);
		put_string(host.p, host.len);
		fputs(" exe=", stdout);
		put_string(exe.p, exe.len);
		fputs(" cmdline=", stdout);
		put_cmdline(cmdline);
		putchar('\n');
		break;
	}
	case MT_REC_MODULE: {
		const struct mt_module *m = r->p;
		struct trace_bytes id, path;

		trace_module_strings(m, &id, &path);
		fputs("module", stdout);
		put_time(t, r->time_ns);
		printf(" start=0x%" PRIx64 " end=0x%" PRIx64 " base=0x%" PRIx64 " build_id=",
		       m->start, m->end, m->base);
		if (!id.len)
			putchar('-');
		for (size_t i = 0; i < id.len; i++)
			printf("%02x", (unsigned char)id.p[i]);
		fputs(" path=", stdout);
		put_string(path.p, path.len);
		putchar('\n');
		break;
	}
	case MT_REC_STACK: {
		const struct mt_stack *s = r->p;

		printf("stack id=%" PRIu32 " depth=%" PRIu32, s->id, s->depth);
		for (uint32_t i = 0; i < s->depth; i++)
			put_frame(s->ips[i]);
		putchar('\n');
		break;
	}
	case MT_REC_ALLOC: case MT_REC_FREE: case MT_REC_ALLOC_EX: case MT_REC_FREE_EX:
		dump_event(t, r);
		break;
	case MT_REC_POOL: {
		const struct mt_pool *p = r->p;

		fputs("pool", stdout);
		put_time(t, r->time_ns);
		put_tid_dev(r);
		put_api(p->api);
		printf(" pool=0x%" PRIx64 " reserved=%" PRIu64 " used=%" PRIu64 "\n",
		       p->pool, p->reserved, p->used);
		break;
	}
	case MT_REC_MEMINFO: {
		const struct mt_meminfo *m = r->p;

		fputs("meminfo", stdout);
		put_time(t, r->time_ns);
		put_tid_dev(r);
		printf(" free=%" PRIu64 " total=%" PRIu64 "\n", m->free_bytes, m->total_bytes);
		break;
	}
	case MT_REC_TIMEBASE:
		fputs("timebase", stdout);
		put_time(t, r->time_ns);
		putchar('\n');
		break;
	case MT_REC_OWNER:      /* format 2: the slab's rest is another thread's */
		fputs("owner", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32 "\n", r->tid);
		break;
	case MT_REC_DRIVER:
		printf("driver version=%" PRId32 "\n", ((const struct mt_driver *)r->p)->driver_version);
		break;
	case MT_REC_NOTE: {
		struct trace_bytes text = trace_note_text(r->p);

		fputs("note", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32 " text=", r->tid);
		put_string(text.p, text.len);
		putchar('\n');
		break;
	}
	case MT_REC_SHM: {
		const struct mt_shm *s = r->p;
		const char *op = trace_shm_op_name(s->lh.h.a);
		struct trace_bytes name = trace_shm_name(s);

		fputs("shm", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32, r->tid);
		if (op)
			printf(" op=%s", op);
		else
			printf(" op=%u", s->lh.h.a);
		printf(" fd=%" PRId32 " flags=0x%" PRIx32 " name=", s->fd, (uint32_t)s->flags);
		put_string(name.p, name.len);
		printf(" size=%" PRIu64 " addr=0x%" PRIx64 " err=%" PRId32 " stack=%" PRIu32 "\n",
		       s->size, s->addr, s->err, s->stack_id);
		break;
	}
	case MT_REC_PYCODE: {
		const struct mt_pycode *c = r->p;
		struct trace_bytes file, name, lt;

		trace_pycode_strings(c, &file, &name, &lt);
		printf("pycode id=%" PRIu32 " line=%" PRId32 " version=%u.%u linetable=%" PRIu32 " file=",
		       c->id, c->first_line, c->py_version >> 8, c->py_version & 0xff, c->linetable_len);
		put_string(file.p, file.len);
		fputs(" name=", stdout);
		put_string(name.p, name.len);
		putchar('\n');
		break;
	}
	case MT_REC_FW_EVENT: {
		const struct mt_fw_event *e = r->p;
		const char *action = trace_fw_action_name(e->h.a);

		fputs("fw_event", stdout);
		put_time(t, r->time_ns);
		printf(" dev=%d", e->h.b);
		if (action)
			printf(" action=%s", action);
		else
			printf(" action=%u", e->h.a);
		printf(" addr=0x%" PRIx64 " size=%" PRIu64 " stream=0x%" PRIx64 " x=%" PRIu64
		       " stack=%" PRIu32 "\n", e->addr, e->size, e->stream, e->x, e->stack_id);
		break;
	}
	case MT_REC_FW_STACK: {
		const struct mt_fw_stack *s = r->p;
		/* trace_open() checked the frames fit: at most one per 8 bytes */
		struct trace_fw_frame *f = malloc((s->nframes ? s->nframes : 1) * sizeof(*f));
		uint32_t n = f ? trace_fw_frames(s, f, s->nframes) : 0;

		printf("fw_stack id=%" PRIu32 " frames=\"", s->id);
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				fputs(" < ", stdout);
			put_escaped(f[i].file, f[i].file_len);
			printf(":%" PRIu32 " ", f[i].line);
			put_escaped(f[i].function, f[i].function_len);
		}
		fputs("\"\n", stdout);
		free(f);
		break;
	}
	case MT_REC_RANGE: {     /* format 2.1: a range, mark or thread name */
		static const char *const ops[] = { NULL, "push", "pop", "start", "end", "mark",
						   "name_thread" };
		static const char *const origins[] = { NULL, "nvtx", "c", "python", "pytest" };
		const struct mt_range *g = r->p;

		fputs("range", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32, r->tid);
		if (g->h.a < sizeof(ops) / sizeof(ops[0]) && ops[g->h.a])
			printf(" op=%s", ops[g->h.a]);
		else
			printf(" op=%u", g->h.a);
		if (g->h.b > 0 && (size_t)g->h.b < sizeof(origins) / sizeof(origins[0]))
			printf(" origin=%s", origins[g->h.b]);
		else
			printf(" origin=%d", g->h.b);
		printf(" domain=%" PRIu32 " message=%" PRIu32, g->domain, g->message);
		if (r->size >= sizeof(struct mt_range_id))
			printf(" id=%" PRIu64, ((const struct mt_range_id *)r->p)->id);
		putchar('\n');
		break;
	}
	case MT_REC_NVTX_MEM: {  /* format 2.2: an NVTX heap or region */
		static const char *const ops[] = { NULL, "heap_register", "heap_unregister",
						   "heap_reset", "region_register", "region_resize",
						   "region_unregister" };
		const struct mt_nvtx_mem *m = r->p;

		fputs("nvtx_mem", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32, r->tid);
		if (m->lh.h.a < sizeof(ops) / sizeof(ops[0]) && ops[m->lh.h.a])
			printf(" op=%s", ops[m->lh.h.a]);
		else
			printf(" op=%u", m->lh.h.a);
		printf(" domain=0x%" PRIx64 " heap=0x%" PRIx64 " addr=0x%" PRIx64 " size=%" PRIu64
		       " handle=0x%" PRIx64 " usage=%" PRIu32 " type=%" PRIu32 " stack=%" PRIu32,
		       m->domain, m->heap, m->addr, m->size, m->handle, m->usage, m->type, m->stack_id);
		if (m->lh.h.a == MT_NVMEM_HEAP_REGISTER) {
			fputs(" domain_name=", stdout);
			put_string((const char *)(m + 1), m->domain_len);
			fputs(" name=", stdout);
			put_string((const char *)(m + 1) + m->domain_len, m->name_len);
		}
		putchar('\n');
		break;
	}
	case MT_REC_STRING: {
		const struct mt_string *g = r->p;

		printf("string id=%" PRIu32 " text=", g->id);
		put_string((const char *)(g + 1), g->len);
		putchar('\n');
		break;
	}
	case MT_REC_FW_INFO: {
		struct trace_bytes text = trace_fw_info_text(r->p);

		fputs("fw_info", stdout);
		put_time(t, r->time_ns);
		fputs(" text=", stdout);
		put_string(text.p, text.len);
		putchar('\n');
		break;
	}
	case MT_REC_EXIT: {
		const struct mt_exit *x = r->p;
		const char *how = trace_exit_how_name(x->h.a);

		fputs("exit", stdout);
		put_time(t, r->time_ns);
		printf(" tid=%" PRIu32, r->tid);
		if (how)
			printf(" how=%s", how);
		else
			printf(" how=%u", x->h.a);
		printf(" status=%" PRId32 "\n", x->status);
		break;
	}
	default:
		printf("record type=%u size=%" PRIu32 "\n", r->type, r->size);
		break;
	}
}

enum { OPT_RESOLVE_PYTHON = 256 };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "resolve-python", no_argument, NULL, OPT_RESOLVE_PYTHON },
	{ NULL, 0, NULL, 0 },
};

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	struct trace *t;
	struct trace_iter it;
	struct trace_rec rec;
	char err[512];
	int c, resolve_python = 0;

	optind = 0;
	while ((c = cli_getopt("dump", argc, argv, ":h", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_RESOLVE_PYTHON:
			resolve_python = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("dump", "dump takes one FILE");
	path = optind < argc ? argv[optind] : NULL;
	if (!path)
		return cli_usage_error("dump", "no trace FILE given");

	t = trace_open(path, err, sizeof(err));
	if (!t) {
		int missing = errno == ENOENT || errno == ENOTDIR;

		cli_error("%s", err);
		return missing ? EXIT_USAGE : 1;
	}
	for (unsigned w = 0; trace_warning(t, w, err, sizeof(err)) == 0; w++)
		cli_warn("%s", err);

	printf("# trace '%s': format %" PRIu32, path, trace_header(t)->version);
	if (trace_header(t)->version_minor)
		printf(".%" PRIu32, trace_header(t)->version_minor);
	printf(", pid %" PRIu32 ", slab %" PRIu32 ", %" PRIu64 " record%s\n", trace_header(t)->pid,
	       trace_header(t)->slab_size, trace_stats(t)->records,
	       trace_stats(t)->records == 1 ? "" : "s");
	if (resolve_python && !(py_codes = py_codes_load(t))) {
		cli_error("out of memory");
		trace_close(t);
		return 1;
	}
	trace_iter_init(&it, t);
	while (trace_next(&it, &rec))
		dump_record(t, &rec);
	py_codes_free(py_codes);
	py_codes = NULL;
	trace_close(t);
	return 0;
}
