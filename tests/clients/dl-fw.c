/*
 * dl-fw.c - a framework's drain as memtrace's Python side does it, in C:
 * finds the entry points of include/memtrace/framework.h with
 * dlsym(RTLD_DEFAULT) (present only when libmemtrace.so is preloaded) and
 * hands over two stacks, an info note and 48 events in two batches.
 *
 * dl-fw run        everything, then exits 0
 * dl-fw kill FILE  stacks, note and the first batch, then writes "batched"
 *                  to FILE and waits to be killed
 * Without the entry points it prints "no memtrace" and exits 0, having
 * done nothing else.
 *
 * Stack A (2 frames: train.py:42 step < /lib/nn.py:7 forward) is asked for
 * twice and must get the same id; stack B (1 frame: data.py:9 load) once.
 * Event k (0..47) is at T0 + 1000 * (k + 1) ns, T0 being CLOCK_MONOTONIC
 * after the note, printed as "t0=N" (the batches are handed over once
 * all those times have passed); its action 1 + k % 8 (every kind six
 * times), device k % 2, addr 0x7f0000000000 + k * 0x1000 (0 for an oom),
 * size 512 * (k + 1), stream 0x77 when k % 3 == 0 else 0, x 4096 for an
 * oom else 0, stack A for events 0 and 1, B for event 8, else none.
 * Events 0..23 are the first batch, 24..47 the second.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "memtrace/framework.h"

typedef int (*events_fn)(const struct mt_fw_input *, size_t);
typedef uint32_t (*stack_fn)(const void *, size_t, uint32_t);
typedef int (*info_fn)(const char *, size_t);

static size_t pack(unsigned char *out, size_t at, uint32_t line, const char *file, const char *func)
{
	uint16_t fl = (uint16_t)strlen(file), nl = (uint16_t)strlen(func);

	memcpy(out + at, &line, 4);
	memcpy(out + at + 4, &fl, 2);
	memcpy(out + at + 6, &nl, 2);
	memcpy(out + at + 8, file, fl);
	memcpy(out + at + 8 + fl, func, nl);
	return at + 8 + fl + nl;
}

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	events_fn events = (events_fn)dlsym(RTLD_DEFAULT, "memtrace_fw_events");
	stack_fn stack = (stack_fn)dlsym(RTLD_DEFAULT, "memtrace_fw_stack");
	info_fn info = (info_fn)dlsym(RTLD_DEFAULT, "memtrace_fw_info");
	int kill_mode = argc > 2 && !strcmp(argv[1], "kill");
	unsigned char a[128], b[64];
	size_t alen, blen;
	struct mt_fw_input ev[48];
	static const char note[] = "framework=dl-fw\nversion=1\n";

	if (argc < 2 || (strcmp(argv[1], "run") && !kill_mode)) {
		fprintf(stderr, "usage: dl-fw run | dl-fw kill FILE\n");
		return 2;
	}
	if (!events && !stack && !info) {
		puts("no memtrace");
		return 0;
	}
	if (!events || !stack || !info) {
		fprintf(stderr, "dl-fw: only some of the entry points\n");
		return 1;
	}
	alen = pack(a, 0, 42, "train.py", "step");
	alen = pack(a, alen, 7, "/lib/nn.py", "forward");
	blen = pack(b, 0, 9, "data.py", "load");
	uint32_t ida = stack(a, alen, 2), idb = stack(b, blen, 1), ida2 = stack(a, alen, 2);
	if (!ida || !idb || ida == idb || ida2 != ida) {
		fprintf(stderr, "dl-fw: stack ids %u %u %u\n", ida, idb, ida2);
		return 1;
	}
	if (info(note, sizeof note - 1) != 0) {
		fprintf(stderr, "dl-fw: info failed\n");
		return 1;
	}
	uint64_t t0 = now_mono();
	memset(ev, 0, sizeof ev);
	for (unsigned k = 0; k < 48; k++) {
		struct mt_fw_input *e = &ev[k];

		e->action = 1 + k % 8;
		e->device = (int32_t)(k % 2);
		e->time_ns = t0 + 1000ull * (k + 1);
		e->addr = e->action == MT_FW_OOM ? 0 : 0x7f0000000000ull + k * 0x1000ull;
		e->size = 512ull * (k + 1);
		e->stream = k % 3 == 0 ? 0x77 : 0;
		e->x = e->action == MT_FW_OOM ? 4096 : 0;
		e->stack_id = k < 2 ? ida : k == 8 ? idb : 0;
	}
	while (now_mono() <= t0 + 48000)
		;       /* hand over events of the past, as a drain does */
	printf("t0=%llu stacks=%u,%u\n", (unsigned long long)t0, ida, idb);
	int n1 = events(ev, 24);
	printf("batch %d\n", n1);
	fflush(stdout);
	if (kill_mode) {
		FILE *f = fopen(argv[2], "w");
		if (!f || fputs("batched\n", f) < 0 || fclose(f) != 0)
			return 1;
		for (;;)
			pause();
	}
	int n2 = events(ev + 24, 24);
	printf("batch %d\n", n2);
	return n1 == 24 && n2 == 24 ? 0 : 1;
}
