/*
 * config.c - the MEMTRACE_* environment variables, read in one place.
 *
 * `memtrace run` sets them; docs/environment.md is the contract. Read once
 * per process image, from the library constructor, before any hook can run.
 * Bad values fall back to the defaults: the traced program must not fail
 * because of a typo in a tracer variable. Each bad one is said once on
 * stderr, with the value used instead, by the run's first process only
 * (its children read the same environment).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt.h"

struct mt_config mt_config;

static int quiet;   /* a child of the traced run: its root said it */

static void bad_value(const char *name, const char *s, const char *why, long used)
{
	char buf[512];
	int n;

	if (quiet)
		return;
	n = snprintf(buf, sizeof buf, "memtrace: warning: %s='%.200s' %s: using %ld\n", name, s, why, used);
	if (n > 0)
		(void)!write(2, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	char *end, why[96];
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (!*end && v >= min && v <= max)
		return v;
	snprintf(why, sizeof why, "is not a whole number from %ld to %ld", min, max);
	bad_value(name, s, why, def);
	return def;
}

void mt_config_load(void)
{
	const char *s;
	size_t n;

	/* MEMTRACE_OUTPUT: trace of the first process; default ./trace.bin */
	s = getenv("MEMTRACE_OUTPUT");
	if (!s || !*s)
		s = "trace.bin";
	mt_config.output[0] = 0;
	if (s[0] != '/' && getcwd(mt_config.output, sizeof mt_config.output - 2)) {
		n = strlen(mt_config.output);
		mt_config.output[n] = '/';
		mt_config.output[n + 1] = 0;
	}
	n = strlen(mt_config.output);
	if (n + strlen(s) < sizeof mt_config.output - 32)
		memcpy(mt_config.output + n, s, strlen(s) + 1);
	else
		strcpy(mt_config.output, "trace.bin");

	/* MEMTRACE_ROOT_PID: the pid that writes MEMTRACE_OUTPUT itself */
	mt_config.root_pid = (int)env_long("MEMTRACE_ROOT_PID", 0, 1, INT_MAX);
	quiet = mt_config.root_pid && mt_config.root_pid != getpid();
	/* MEMTRACE_FOLLOW: 0 traces only the root process */
	mt_config.follow = (int)env_long("MEMTRACE_FOLLOW", 1, 0, 1);
	/* MEMTRACE_DEPTH: native frames per backtrace, 0 = none */
	mt_config.depth = (int)env_long("MEMTRACE_DEPTH", 64, 0, MT_MAX_DEPTH);
	/* MEMTRACE_SAMPLE_MS: least interval between cuMemGetInfo samples */
	mt_config.sample_ns = (uint64_t)env_long("MEMTRACE_SAMPLE_MS", 100, 0, 86400000) * 1000000u;
	/* MEMTRACE_SAMPLE_GROWTH_US: least interval between two samples
	   taken because a device's allocations grew by 1% (recorder.c) */
	mt_config.growth_ns = (uint64_t)env_long("MEMTRACE_SAMPLE_GROWTH_US", 1000, 0, 86400000) * 1000u;
	/* MEMTRACE_RUN_ID: written into each header so `memtrace run` finds it */
	s = getenv("MEMTRACE_RUN_ID");
	mt_config.run_id = 0;
	if (s && *s) {
		char *end;
		mt_config.run_id = strtoull(s, &end, 10);
		if (*end || *s == '-') {
			mt_config.run_id = 0;
			bad_value("MEMTRACE_RUN_ID", s, "is not a whole number", 0);
		}
	}
	/* MEMTRACE_TORCH: 1 when memtrace run set up PyTorch's capture (the
	   Python side reads it; here only to say when it could not run) */
	mt_config.torch = (int)env_long("MEMTRACE_TORCH", 0, 0, 1);
	/* MEMTRACE_PYTHON: 0 leaves Python frames out of stacks */
	mt_config.python = (int)env_long("MEMTRACE_PYTHON", 1, 0, 1);
	/* MEMTRACE_STACK_CACHE: 0 unwinds every stack with unw_backtrace, 2
	   walks each without the per-thread memo of recent walks (comparing) */
	mt_config.stack_cache = (int)env_long("MEMTRACE_STACK_CACHE", 1, 0, 2);
	/* MEMTRACE_STACK_CHECK: 1 also unwinds each stack with unw_backtrace
	   and notes any difference (tests) */
	mt_config.stack_check = (int)env_long("MEMTRACE_STACK_CHECK", 0, 0, 1);
	/* MEMTRACE_PYTHON_VERSION: "3.N" taken as the interpreter's version (tests) */
	s = getenv("MEMTRACE_PYTHON_VERSION");
	mt_config.python_version[0] = 0;
	if (s && strlen(s) < sizeof mt_config.python_version)
		strcpy(mt_config.python_version, s);
	/* MEMTRACE_RESOLVE_LOG: append each wrapped look-up answer (debugging) */
	s = getenv("MEMTRACE_RESOLVE_LOG");
	mt_config.resolve_log = s && *s ? open(s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
}
