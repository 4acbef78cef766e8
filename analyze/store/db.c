/*
 * db.c - loads a run into SQLite (the schema is docs/schema.md).
 *
 * How it works: this file creates the schema and inserts what stream_open()
 * collected (processes, modules, stack frames); then the analysis pass
 * (account.c) walks the records in time order and hands each one to the
 * bulk loader (db-load.c), which numbers events in time order and, as the
 * pass pairs each free with its allocation, writes one allocs row per
 * allocation with its free (half the rows of one per event, and no index
 * to pair them); failed calls and the frees that are not an allocation's
 * own go to failures and frees, and the events view puts them together
 * again. All rows go in one transaction, without fsync; the small index on
 * frees is built after, on the loader's thread. Memory does not grow with
 * the trace: SQLite's page cache is bounded, the loader holds two batches
 * of rows and the allocations not freed yet (what the pass holds live).
 *
 * A killed load: the schema and meta rows are committed first, and SQLite's
 * rollback journal stays on (it costs little here: the rows go to new
 * pages, which are not journaled), so the next report rolls back what a
 * SIGKILL left, finds the file is its own and incomplete, and rebuilds it.
 * SIGINT, SIGTERM and SIGHUP, and a failed load, remove the file.
 *
 * Reuse: meta.traces lists the traces loaded (path, size, mtime in ns), and
 * meta.complete is written last. A later run reuses the file only when the
 * list matches exactly, the load completed, the schema version matches and
 * the file is newer than every trace; otherwise it is rebuilt.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/cuda-errors.h"
#include "store/db.h"
#include "store/db-load.h"

static const char schema[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value);\n"
	"CREATE TABLE traces(id INTEGER PRIMARY KEY, path TEXT, size INTEGER, mtime_ns INTEGER,"
	" pid INTEGER, start_wall_ns INTEGER, start_mono_ns INTEGER, run_id INTEGER,"
	" records INTEGER);\n"
	"CREATE TABLE processes(trace INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,"
	" hostname TEXT, command TEXT, exe TEXT, rank INTEGER, local_rank INTEGER,"
	" world_size INTEGER, driver_version INTEGER, first_ns INTEGER, last_ns INTEGER);\n"
	"CREATE TABLE modules(trace INTEGER, start INTEGER, end_ INTEGER,"
	" base INTEGER, build_id TEXT, path TEXT);\n"
	"CREATE TABLE frames(trace INTEGER, stack INTEGER, level INTEGER, ip INTEGER,"
	" PRIMARY KEY(trace, stack, level)) WITHOUT ROWID;\n"
	"CREATE TABLE allocs(id INTEGER, trace INTEGER, time_ns INTEGER,"
	" tid INTEGER, kind INTEGER, flags INTEGER, device INTEGER, api INTEGER, addr INTEGER,"
	" bytes INTEGER, stack INTEGER, free_id INTEGER, free_ns INTEGER, free_tid INTEGER,"
	" free_api INTEGER, free_flags INTEGER, free_stack INTEGER);\n"
	"CREATE TABLE failures(id INTEGER PRIMARY KEY, trace INTEGER, time_ns INTEGER,"
	" tid INTEGER, op INTEGER, kind INTEGER, flags INTEGER, device INTEGER, api INTEGER,"
	" addr INTEGER, bytes INTEGER, result INTEGER, stack INTEGER);\n"
	"CREATE TABLE frees(id INTEGER PRIMARY KEY, trace INTEGER, time_ns INTEGER,"
	" tid INTEGER, kind INTEGER, flags INTEGER, device INTEGER, api INTEGER, addr INTEGER,"
	" bytes INTEGER, stack INTEGER, alloc_id INTEGER);\n"
	"CREATE TABLE event_ex(id INTEGER PRIMARY KEY, x1 INTEGER, x2 INTEGER);\n"
	"CREATE TABLE pools(trace INTEGER, time_ns INTEGER, tid INTEGER, device INTEGER,"
	" pool INTEGER, reserved INTEGER, used INTEGER, api INTEGER);\n"
	"CREATE TABLE meminfo(trace INTEGER, time_ns INTEGER, tid INTEGER, device INTEGER,"
	" free INTEGER, total INTEGER);\n"
	"CREATE TABLE notes(trace INTEGER, time_ns INTEGER, tid INTEGER, text TEXT);\n"
	"CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT);\n"
	"CREATE TABLE kinds(id INTEGER PRIMARY KEY, name TEXT);\n"
	"CREATE TABLE cuda_errors(code INTEGER, api TEXT, name TEXT, PRIMARY KEY(api, code))"
	" WITHOUT ROWID;\n"
	"CREATE TABLE symbols(module TEXT, offset INTEGER, level INTEGER, function TEXT,"
	" file TEXT, line INTEGER, inlined INTEGER, PRIMARY KEY(module, offset, level))"
	" WITHOUT ROWID;\n"
	"CREATE VIEW events AS"
	" SELECT id, trace, time_ns, tid, 0 AS op, kind, flags, device, api, addr, bytes,"
	" 0 AS result, stack, NULL AS alloc_id FROM allocs"
	" UNION ALL SELECT free_id, trace, free_ns, free_tid, 1, kind, free_flags, device,"
	" free_api, addr, bytes, 0, free_stack, id FROM allocs WHERE free_id IS NOT NULL"
	" UNION ALL SELECT id, trace, time_ns, tid, op, kind, flags, device, api, addr, bytes,"
	" result, stack, NULL FROM failures"
	" UNION ALL SELECT id, trace, time_ns, tid, 1, kind, flags, device, api, addr, bytes,"
	" 0, stack, alloc_id FROM frees"
	" ORDER BY 1;\n"
	"CREATE VIEW ev AS SELECT e.id, e.trace, p.pid, p.rank, e.time_ns, e.tid,"
	" CASE e.op WHEN 0 THEN 'alloc' ELSE 'free' END AS op, k.name AS kind, e.device,"
	" a.name AS api, printf('0x%x', e.addr) AS addr, e.bytes, e.result, e.stack,"
	" e.alloc_id FROM events e LEFT JOIN kinds k ON k.id = e.kind"
	" LEFT JOIN apis a ON a.id = e.api LEFT JOIN processes p ON p.trace = e.trace;\n"
	"CREATE VIEW allocations AS SELECT a.id, a.trace, a.time_ns AS alloc_ns,"
	" coalesce(a.free_ns, (SELECT min(f.time_ns) FROM frees f WHERE f.alloc_id = a.id))"
	" AS free_ns, a.kind, a.device, a.addr, a.bytes, a.stack FROM allocs a;\n";

/* What the loader runs once every row is in. */
static const char closing_sql[] =
	"COMMIT;\n"
	"PRAGMA cache_size=-16384;\n"
	"CREATE INDEX frees_alloc ON frees(alloc_id) WHERE alloc_id IS NOT NULL;\n"
	"INSERT INTO meta VALUES ('complete', '1');\n";

struct db {
	sqlite3 *h;
	char *path;
	struct db_load *load;       /* while loading */
	int loading;                /* created here and not complete yet: a
	                               failed load removes the file */
	char *err;
	size_t errlen;
};

/*
 * While a database is being loaded, SIGINT, SIGTERM and SIGHUP (Ctrl-C, a
 * job killed) remove the half-written file before the signal takes its
 * usual course, as a failed load does. A signal the user ignores stays
 * ignored.
 */
static const int guarded[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction unguarded[3];
static char guarded_path[PATH_MAX], guarded_journal[PATH_MAX + 8];
static volatile sig_atomic_t guarding;

static void on_guarded_signal(int sig)
{
	if (guarding) {
		unlink(guarded_path);
		unlink(guarded_journal);
	}
	raise(sig);         /* SA_RESETHAND: the default action, once we return */
}

static void guard_start(const char *path)
{
	struct sigaction sa;

	if (!path || strlen(path) >= sizeof(guarded_path))
		return;
	strcpy(guarded_path, path);
	snprintf(guarded_journal, sizeof(guarded_journal), "%s-journal", path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guarded_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 3; i++) {
		sigaction(guarded[i], NULL, &unguarded[i]);
		if (unguarded[i].sa_handler != SIG_IGN)
			sigaction(guarded[i], &sa, NULL);
	}
	guarding = 1;
}

static void guard_end(void)
{
	if (!guarding)
		return;
	guarding = 0;
	for (size_t i = 0; i < 3; i++)
		sigaction(guarded[i], &unguarded[i], NULL);
}

static int exec(struct db *d, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(d->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "'%s': %s", d->path, msg ? msg : sqlite3_errmsg(d->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int prep(struct db *d, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(d->h, sql, -1, st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "'%s': %s", d->path, sqlite3_errmsg(d->h));
		return -1;
	}
	return 0;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* "path\tsize\tmtime\n" per trace: what meta.traces must equal. */
static char *trace_list(const char *const *traces, int n)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		char line[64];
		size_t need;

		if (stat(traces[i], &st) != 0)
			memset(&st, 0, sizeof(st));
		snprintf(line, sizeof(line), "\t%lld\t%lld\n", (long long)st.st_size,
			 (long long)mtime_ns(&st));
		need = len + strlen(traces[i]) + strlen(line) + 1;
		if (need > cap) {
			char *n2;

			while (cap < need)
				cap *= 2;
			n2 = realloc(s, cap);
			if (!n2) {
				free(s);
				return NULL;
			}
			s = n2;
		}
		len += (size_t)sprintf(s + len, "%s%s", traces[i], line);
	}
	return s;
}

/* 1 reuse, 0 rebuild, -1 not ours (refuse). */
static int check_existing(const char *path, const char *list, const char *const *traces, int n)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	struct stat dst, tst;
	int ok = 0, ours = 0, complete = 0, schema_ok = 0, tables = -1;

	/* read-write where it can: SQLite then rolls back what a load
	   killed in the middle left in its journal */
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
			sqlite3_close(h);
			return -1;
		}
	}
	/* an empty database (a report killed before its first commit, or an
	   empty file) holds nothing to lose */
	if (sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			tables = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if (tables == 0) {
		sqlite3_close(h);
		return 0;
	}
	if (sqlite3_prepare_v2(h, "SELECT key, value FROM meta", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			const char *v = (const char *)sqlite3_column_text(st, 1);

			if (!k || !v)
				continue;
			if (!strcmp(k, "creator") && !strcmp(v, "memtrace"))
				ours = 1;
			else if (!strcmp(k, "traces") && !strcmp(v, list))
				ok = 1;
			else if (!strcmp(k, "complete") && !strcmp(v, "1"))
				complete = 1;
			else if (!strcmp(k, "schema_version") && atoi(v) == DB_SCHEMA_VERSION)
				schema_ok = 1;
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	if (!ours)
		return -1;
	if (!ok || !complete || !schema_ok || stat(path, &dst) != 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (stat(traces[i], &tst) != 0 || mtime_ns(&tst) >= mtime_ns(&dst))
			return 0;
	return 1;
}

static void bind_bytes_text(sqlite3_stmt *st, int i, struct trace_bytes b)
{
	sqlite3_bind_text(st, i, b.p, (int)b.len, SQLITE_TRANSIENT);
}

/* The command line with its NUL separators turned into spaces. */
static void bind_cmdline(sqlite3_stmt *st, int i, struct trace_bytes b)
{
	char *s = malloc(b.len + 1);

	if (!s) {
		sqlite3_bind_null(st, i);
		return;
	}
	memcpy(s, b.p, b.len);
	while (b.len && s[b.len - 1] == 0)
		b.len--;
	for (size_t k = 0; k < b.len; k++)
		if (!s[k])
			s[k] = ' ';
	sqlite3_bind_text(st, i, s, (int)b.len, SQLITE_TRANSIENT);
	free(s);
}

static int step(struct db *d, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		snprintf(d->err, d->errlen, "'%s': %s", d->path, sqlite3_errmsg(d->h));
		return -1;
	}
	return 0;
}

/* The meta rows that say whose file this is and what it holds. */
static int write_meta(struct db *d, const char *list, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (prep(d, &st, "INSERT INTO meta VALUES (?1, ?2)", err, errlen))
		return -1;
	const char *kv[][2] = { { "creator", "memtrace" }, { "memtrace_version", MEMTRACE_VERSION },
				{ "traces", list } };
	char sv[16];

	snprintf(sv, sizeof(sv), "%d", DB_SCHEMA_VERSION);
	for (size_t i = 0; i < 3; i++) {
		sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_STATIC);
		if (step(d, st))
			goto out;
	}
	sqlite3_bind_text(st, 1, "schema_version", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, sv, -1, SQLITE_STATIC);
	rc = step(d, st);
out:
	sqlite3_finalize(st);
	return rc;
}

/* cuda_errors: the name of every CUresult (api 'driver') and cudaError_t
   (api 'runtime'), so that a query can name events.result. */
static int load_cuda_errors(struct db *d, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (prep(d, &st, "INSERT INTO cuda_errors VALUES (?1, ?2, ?3)", err, errlen))
		return -1;
	for (int runtime = 0; runtime <= 1; runtime++) {
		size_t n;
		const struct cuda_error *e = cuda_errors(runtime, &n);

		for (size_t i = 0; i < n; i++) {
			sqlite3_bind_int64(st, 1, e[i].code);
			sqlite3_bind_text(st, 2, runtime ? "runtime" : "driver", -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, e[i].name, -1, SQLITE_STATIC);
			if (step(d, st))
				goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

static int load_static(struct db *d, const char *const *traces, struct trace **t, int n,
		       struct stream *s, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (prep(d, &st, "INSERT INTO apis VALUES (?1, ?2)", err, errlen))
		goto out;
	for (unsigned i = 0; i < MT_API_MAX; i++) {
		const char *nm = trace_api_name(i);

		if (!nm)
			continue;
		sqlite3_bind_int(st, 1, (int)i);
		sqlite3_bind_text(st, 2, nm, -1, SQLITE_STATIC);
		if (step(d, st))
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (prep(d, &st, "INSERT INTO kinds VALUES (?1, ?2)", err, errlen))
		goto out;
	for (unsigned i = 1; i <= MT_KIND_MASK; i++) {
		const char *nm = trace_kind_name(i);

		if (!nm)
			continue;
		sqlite3_bind_int(st, 1, (int)i);
		sqlite3_bind_text(st, 2, nm, -1, SQLITE_STATIC);
		if (step(d, st))
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;

	if (prep(d, &st, "INSERT INTO traces VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", err,
		 errlen))
		goto out;
	for (int i = 0; i < n; i++) {
		const struct mt_file_header *h = trace_header(t[i]);
		struct stat sb;

		if (stat(traces[i], &sb) != 0)
			memset(&sb, 0, sizeof(sb));
		sqlite3_bind_int(st, 1, i + 1);
		sqlite3_bind_text(st, 2, traces[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)sb.st_size);
		sqlite3_bind_int64(st, 4, mtime_ns(&sb));
		sqlite3_bind_int64(st, 5, h->pid);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)h->start_wall_ns);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)h->start_mono_ns);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)h->run_id);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)trace_stats(t[i])->records);
		if (step(d, st))
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;

	if (prep(d, &st, "INSERT INTO processes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
		 " ?11, ?12)", err, errlen))
		goto out;
	for (int i = 0; i < n; i++) {
		const struct sproc *p = stream_proc(s, i);
		struct trace_bytes host = { "", 0 }, cmd = { "", 0 }, exe = { "", 0 };

		sqlite3_bind_int(st, 1, i + 1);
		if (p->process) {
			trace_process_strings(p->process, &host, &cmd, &exe);
			sqlite3_bind_int64(st, 2, p->process->pid);
			sqlite3_bind_int64(st, 3, p->process->ppid);
			sqlite3_bind_int(st, 7, p->process->rank);
			sqlite3_bind_int(st, 8, p->process->local_rank);
			sqlite3_bind_int(st, 9, p->process->world_size);
		} else {
			sqlite3_bind_int64(st, 2, trace_header(t[i])->pid);
			for (int k = 3; k <= 9; k++)
				sqlite3_bind_null(st, k);
		}
		bind_bytes_text(st, 4, host);
		bind_cmdline(st, 5, cmd);
		bind_bytes_text(st, 6, exe);
		sqlite3_bind_int(st, 10, p->driver_version);
		sqlite3_bind_int64(st, 11, (sqlite3_int64)p->first_t);
		sqlite3_bind_int64(st, 12, (sqlite3_int64)p->last_t);
		if (step(d, st))
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;

	if (prep(d, &st, "INSERT INTO modules VALUES (?1, ?2, ?3, ?4, ?5, ?6)", err, errlen))
		goto out;
	for (int i = 0; i < n; i++) {
		const struct sproc *p = stream_proc(s, i);

		for (uint32_t k = 0; k < p->nmodules; k++) {
			const struct mt_module *m = p->modules[k];
			struct trace_bytes id, path;
			char hex[2 * 64 + 1];

			trace_module_strings(m, &id, &path);
			hex[0] = 0;
			for (size_t j = 0; j < id.len && j < 64; j++)
				snprintf(hex + 2 * j, 3, "%02x", (unsigned char)id.p[j]);
			sqlite3_bind_int(st, 1, i + 1);
			sqlite3_bind_int64(st, 2, (sqlite3_int64)m->start);
			sqlite3_bind_int64(st, 3, (sqlite3_int64)m->end);
			sqlite3_bind_int64(st, 4, (sqlite3_int64)m->base);
			sqlite3_bind_text(st, 5, hex, -1, SQLITE_TRANSIENT);
			bind_bytes_text(st, 6, path);
			if (step(d, st))
				goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;

	if (prep(d, &st, "INSERT OR IGNORE INTO frames VALUES (?1, ?2, ?3, ?4)", err, errlen))
		goto out;
	for (int i = 0; i < n; i++) {
		const struct sproc *p = stream_proc(s, i);

		for (uint32_t id = 0; id < p->nstacks; id++) {
			const struct mt_stack *sk = p->stacks[id];

			for (uint32_t k = 0; sk && k < sk->depth; k++) {
				sqlite3_bind_int(st, 1, i + 1);
				sqlite3_bind_int64(st, 2, id);
				sqlite3_bind_int(st, 3, (int)k);
				sqlite3_bind_int64(st, 4, (sqlite3_int64)sk->ips[k]);
				if (step(d, st))
					goto out;
			}
		}
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

struct db *db_open(const char *path, const char *const *traces, struct trace **t, int n,
		   struct stream *s, int *fresh, char *err, size_t errlen)
{
	struct db *d = calloc(1, sizeof(*d));
	char *list = trace_list(traces, n);
	int ex;

	if (!d || !list || !(d->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	d->err = err;
	d->errlen = errlen;
	*fresh = 1;
	if (access(path, F_OK) == 0) {
		ex = check_existing(path, list, traces, n);
		if (ex < 0) {
			snprintf(err, errlen, "'%s' exists and is not a memtrace database; "
				 "remove it or choose another with --db", path);
			goto fail;
		}
		if (ex == 1) {
			*fresh = 0;
		} else if (unlink(path) != 0) {
			snprintf(err, errlen, "cannot replace '%s': %s", path, strerror(errno));
			goto fail;
		}
	}
	if (*fresh)
		guard_start(strcmp(path, ":memory:") ? path : NULL);
	/* serialized: the loader's thread and the symbol cache share it */
	if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open '%s': %s", path,
			 d->h ? sqlite3_errmsg(d->h) : "out of memory");
		goto fail;
	}
	if (exec(d, "PRAGMA cache_size=-2048", err, errlen))
		goto fail;
	if (!*fresh) {
		free(list);
		return d;
	}
	d->loading = strcmp(path, ":memory:") != 0;
	/* the schema and meta first, in a transaction of their own: a report
	   killed while loading leaves a file the next one knows to rebuild */
	if (exec(d, "PRAGMA synchronous=OFF; PRAGMA page_size=16384;"
		 " BEGIN;", err, errlen) || exec(d, schema, err, errlen) ||
	    write_meta(d, list, err, errlen) || exec(d, "COMMIT; BEGIN;", err, errlen))
		goto fail;
	if (load_static(d, traces, t, n, s, err, errlen) || load_cuda_errors(d, err, errlen) ||
	    !(d->load = db_load_start(d->h, d->path, closing_sql, err, errlen)))
		goto fail;
	free(list);
	return d;
fail:
	free(list);
	db_close(d);
	return NULL;
}

struct an_sink *db_sink(struct db *d)
{
	return d->load ? db_load_sink(d->load) : NULL;
}

sqlite3 *db_handle(struct db *d)
{
	return d->h;
}

int db_finish(struct db *d, char *err, size_t errlen)
{
	struct db_load *l = d->load;

	d->load = NULL;
	if (l && db_load_wait(l, err, errlen))
		return -1;
	d->loading = 0;
	guard_end();
	return 0;
}

void db_close(struct db *d)
{
	if (!d)
		return;
	db_load_abort(d->load);
	if (d->h)
		sqlite3_close(d->h);
	if (d->loading) {
		char journal[PATH_MAX + 8];

		unlink(d->path);
		snprintf(journal, sizeof(journal), "%s-journal", d->path);
		unlink(journal);
	}
	guard_end();
	free(d->path);
	free(d);
}
