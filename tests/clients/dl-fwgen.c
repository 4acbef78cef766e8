/*
 * dl-fwgen.c - scripted framework allocator histories with figures worked
 * out by hand, handed to memtrace through the entry points of
 * include/memtrace/framework.h (looked up with dlsym, as the Python hook
 * does), over real segments of the simulated runtime (cudaMalloc of
 * libcudart.so.13 from LD_LIBRARY_PATH), so the CUDA level sees them too.
 * Used by tests/t72x-*.sh and t250. Usage: dl-fwgen SCENARIO, one of
 * split|leak|oom|expand|odd|round|maxsplit|stream|badcheck. Each history
 * is one PyTorch's allocator could write (c10/cuda/CUDACachingAllocator.cpp
 * @001074d: round_size, get_allocation_size, should_split), with an
 * "alloc_settings" note as python/memtrace_torch.py writes it. Sizes are
 * the requests (orig_size); the blocks they get are worked out here:
 *
 *   split  segments A, B of 20 MiB; tensors 8 (train.py:21) + 8 (:21) +
 *          4 MiB (:22) in A, 6 MiB (:23) in B; the middle 8 MiB freed
 *          (requested, then completed). Peak of reserved 40 MiB (at B's
 *          segment_alloc: allocated 20, largest free 20, inactive split 0);
 *          peak of allocated 26 MiB (cached 14, inactive split 14, largest
 *          free 14); at exit allocated 18, cached 22, inactive split 22
 *          (8 in A + 14 in B), largest free 14 MiB.
 *   leak   one 20 MiB segment; 8 steps, 2 ms apart, each allocating a
 *          1 MiB tensor kept in a list (train.py:33) at the start of the
 *          free block, then a 2 MiB activation (train.py:30, freed in the
 *          step) after it: at exit 8 MiB in 8 tensors left live at :33,
 *          which kept growing; cache at exit 12 MiB.
 *   oom    one 20 MiB segment tiled 3,2,3,2,3,2,3,2 MiB; the four 3 MiB
 *          blocks freed: 12 MiB cached in 4 pieces of 3 MiB, 8 MiB
 *          allocated at train.py:45; then an OOM of a 6 MiB request with x
 *          = the device's free bytes: fragmentation.
 *   expand an expandable segment over a 20 MiB cudaMalloc at a (the
 *          address range it reserves), every event on stream 7: map
 *          [a, +4 MiB), 3 MiB tensor at a (train.py:70), map [a+4, +4),
 *          4 MiB tensor at a+3 (:71), the 3 MiB freed, unmap [a, +2)
 *          (leaves [a+2, a+4) mapped), the 4 MiB freed, unmap [a+2, +6)
 *          (ends both mapped ranges), map [a+10, +2), 1 MiB tensor at a+10
 *          (:72) left live: at exit 2 MiB mapped, 1 MiB allocated; with
 *          expandable_segments set, so every block is split (should_split:
 *          remaining >= 512).
 *   odd    sizes that are no multiple of 512: in a 2 MiB segment S, 4 B at
 *          S (block 512), 1000 B (block 1024), 1 MiB - 100 (block 1 MiB);
 *          in a 34 MiB segment L, 33 MiB (not split: 1 MiB left is not
 *          > kSmallSize, block 34 MiB); in a 20 MiB segment M, 3 MiB + 1
 *          (block 3 MiB + 512) then 16 MiB (1 MiB - 512 left: block
 *          17 MiB - 512). Then the 33 MiB freed, the 4 B's free requested
 *          (another stream used it) and a check of PyTorch's counters
 *          (the drain's MT_FW_CHECK), then its free completed.
 *   round  roundup_power2_divisions:4 in every interval: 1300000 B takes
 *          a block of 1.25 MiB, 5 MiB + 1 one of 6 MiB, in a 20 MiB segment.
 *   maxsplit max_split_size 40 MiB: 50 MiB in a 50 MiB segment, freed;
 *          45 MiB takes that whole oversize block (50 MiB: no split at
 *          or over max_split_size); 12 MiB in a 12 MiB segment, freed,
 *          then 5 MiB from it (split).
 *   stream 8 MiB at A of a 20 MiB segment, its free requested: allocated
 *          0, requested 8 MiB (a check says so); the next malloc completes
 *          it, then 4 MiB at A.
 *   badcheck the odd history, with a check that says allocated is 1 KiB
 *          more than it is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memtrace/framework.h"

#define MiB (1024ull * 1024)

static int (*fw_events)(const struct mt_fw_input *, size_t);
static uint32_t (*fw_stack)(const void *, size_t, uint32_t);
static int (*fw_info)(const char *, size_t);
static int (*rt_malloc)(void **, size_t);
static int (*rt_getinfo)(size_t *, size_t *);

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void settings(const char *max_split, int expandable, int div)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "framework=torch\nalloc_settings=test\n"
			 "max_split_size=%s\nexpandable_segments=%d\nroundup_power2_divisions=",
			 max_split, expandable);

	for (int i = 0; i < 16; i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%d", i ? "," : "", div);
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "\n");
	fw_info(buf, (size_t)n);
}

/* One event, handed over at once (a drain of one entry). */
static void ev(uint32_t action, uint64_t addr, uint64_t size, uint64_t x, uint32_t stack)
{
	struct mt_fw_input e = { action, 0, now(), addr, size, 7, x, stack, 0 };

	if (fw_events(&e, 1) != 1) {
		fprintf(stderr, "dl-fwgen: memtrace_fw_events failed\n");
		exit(1);
	}
}

/* A stack of a user frame at train.py:line (function fn) called from
   main, below a frame inside torch. */
static uint32_t stack(int line, const char *fn)
{
	static const char *files[3] = { "/usr/lib/python3/site-packages/torch/nn/functional.py",
					"/work/train.py", "/work/train.py" };
	const char *funcs[3] = { "linear", fn, "main" };
	uint32_t lines[3] = { 2100, (uint32_t)line, 60 };
	char buf[512];
	size_t n = 0;

	for (int i = 0; i < 3; i++) {
		uint16_t fl = (uint16_t)strlen(files[i]), nl = (uint16_t)strlen(funcs[i]);

		memcpy(buf + n, &lines[i], 4);
		memcpy(buf + n + 4, &fl, 2);
		memcpy(buf + n + 6, &nl, 2);
		memcpy(buf + n + 8, files[i], fl);
		memcpy(buf + n + 8 + fl, funcs[i], nl);
		n += 8u + fl + nl;
	}
	return fw_stack(buf, n, 3);
}

static uint64_t segment(uint64_t size);

/* PyTorch's counters as a drain reads them (MT_FW_CHECK). */
static void check(uint64_t reserved, uint64_t allocated, uint64_t requested)
{
	ev(MT_FW_CHECK, reserved, allocated, requested, 0);
}

static void freed(uint64_t addr, uint64_t size, uint32_t stack)
{
	ev(MT_FW_FREE_REQUESTED, addr, size, 0, stack);
	ev(MT_FW_FREE_COMPLETED, addr, size, 0, stack);
}

/* The odd history; bad: its check is off by 1 KiB. */
static void odd(int bad)
{
	uint32_t s80 = stack(80, "odd"), s81 = stack(81, "odd"), s82 = stack(82, "odd");
	uint64_t s, l, m, al, rq;

	settings("0", 0, 0);
	s = segment(2 * MiB);
	ev(MT_FW_ALLOC, s, 4, 0, s80);
	ev(MT_FW_ALLOC, s + 512, 1000, 0, s80);
	ev(MT_FW_ALLOC, s + 1536, MiB - 100, 0, s80);
	l = segment(34 * MiB);
	ev(MT_FW_ALLOC, l, 33 * MiB, 0, s81);
	m = segment(20 * MiB);
	ev(MT_FW_ALLOC, m, 3 * MiB + 1, 0, s82);
	ev(MT_FW_ALLOC, m + 3 * MiB + 512, 16 * MiB, 0, s82);
	freed(l, 33 * MiB, s81);
	ev(MT_FW_FREE_REQUESTED, s, 4, 0, s80);
	al = 1024 + MiB + (3 * MiB + 512) + (17 * MiB - 512);
	rq = 4 + 1000 + (MiB - 100) + (3 * MiB + 1) + 16 * MiB;
	check(56 * MiB, al + (bad ? 1024 : 0), rq);
	ev(MT_FW_FREE_COMPLETED, s, 4, 0, s80);
}

static uint64_t segment(uint64_t size)
{
	void *p = NULL;

	if (rt_malloc(&p, size) != 0) {
		fprintf(stderr, "dl-fwgen: cudaMalloc of %llu failed\n", (unsigned long long)size);
		exit(1);
	}
	ev(MT_FW_SEGMENT_ALLOC, (uint64_t)(uintptr_t)p, size, 0, 0);
	return (uint64_t)(uintptr_t)p;
}

int main(int argc, char **argv)
{
	void *rt = dlopen("libcudart.so.13", RTLD_NOW);
	const char *info = "framework=pytorch\nversion=2.11.0 (test)\n";

	if (argc != 2 || !rt) {
		fprintf(stderr, "usage: dl-fwgen split|leak|oom|expand|odd|round|maxsplit|stream|badcheck "
			"(libcudart.so.13 on LD_LIBRARY_PATH)\n");
		return 2;
	}
	fw_events = (int (*)(const struct mt_fw_input *, size_t))dlsym(RTLD_DEFAULT, "memtrace_fw_events");
	fw_stack = (uint32_t (*)(const void *, size_t, uint32_t))dlsym(RTLD_DEFAULT, "memtrace_fw_stack");
	fw_info = (int (*)(const char *, size_t))dlsym(RTLD_DEFAULT, "memtrace_fw_info");
	rt_malloc = (int (*)(void **, size_t))dlsym(rt, "cudaMalloc");
	rt_getinfo = (int (*)(size_t *, size_t *))dlsym(rt, "cudaMemGetInfo");
	if (!fw_events || !fw_stack || !fw_info || !rt_malloc || !rt_getinfo) {
		fprintf(stderr, "dl-fwgen: not under memtrace (no memtrace_fw_* entry points)\n");
		return 3;
	}
	fw_info(info, strlen(info));
	if (!strcmp(argv[1], "split")) {
		uint32_t s21 = stack(21, "step"), s22 = stack(22, "step"), s23 = stack(23, "step");
		uint64_t a, b;

		a = segment(20 * MiB);
		ev(MT_FW_ALLOC, a, 8 * MiB, 0, s21);
		ev(MT_FW_ALLOC, a + 8 * MiB, 8 * MiB, 0, s21);
		ev(MT_FW_ALLOC, a + 16 * MiB, 4 * MiB, 0, s22);
		b = segment(20 * MiB);
		ev(MT_FW_ALLOC, b, 6 * MiB, 0, s23);
		ev(MT_FW_FREE_REQUESTED, a + 8 * MiB, 8 * MiB, 0, s21);
		ev(MT_FW_FREE_COMPLETED, a + 8 * MiB, 8 * MiB, 0, s21);
	} else if (!strcmp(argv[1], "leak")) {
		uint32_t s30 = stack(30, "step"), s33 = stack(33, "step");
		uint64_t a = segment(20 * MiB);

		for (int i = 0; i < 8; i++) {
			uint64_t keep = a + (uint64_t)i * MiB, act = keep + MiB;

			ev(MT_FW_ALLOC, keep, 1 * MiB, 0, s33);
			ev(MT_FW_ALLOC, act, 2 * MiB, 0, s30);
			ev(MT_FW_FREE_REQUESTED, act, 2 * MiB, 0, s30);
			ev(MT_FW_FREE_COMPLETED, act, 2 * MiB, 0, s30);
			usleep(2000);
		}
	} else if (!strcmp(argv[1], "oom")) {
		uint32_t s44 = stack(44, "fill"), s45 = stack(45, "fill"), s50 = stack(50, "grow");
		uint64_t a = segment(20 * MiB), at = a;
		size_t fr = 0, tot = 0;

		for (int i = 0; i < 8; i++) {
			uint64_t sz = (i % 2 ? 2 : 3) * MiB;

			ev(MT_FW_ALLOC, at, sz, 0, i % 2 ? s45 : s44);
			at += sz;
		}
		for (int i = 0; i < 4; i++) {
			ev(MT_FW_FREE_REQUESTED, a + (uint64_t)i * 5 * MiB, 3 * MiB, 0, s44);
			ev(MT_FW_FREE_COMPLETED, a + (uint64_t)i * 5 * MiB, 3 * MiB, 0, s44);
		}
		rt_getinfo(&fr, &tot);
		ev(MT_FW_OOM, 0, 6 * MiB, fr, s50);
		printf("device_free=%zu total=%zu\n", fr, tot);
	} else if (!strcmp(argv[1], "expand")) {
		uint32_t s70 = stack(70, "grow"), s71 = stack(71, "grow"), s72 = stack(72, "grow");
		void *p = NULL;
		uint64_t a;

		if (rt_malloc(&p, 20 * MiB) != 0) {
			fprintf(stderr, "dl-fwgen: cudaMalloc of the range failed\n");
			return 1;
		}
		a = (uint64_t)(uintptr_t)p;
		settings("0", 1, 0);
		ev(MT_FW_SEGMENT_MAP, a, 4 * MiB, 0, 0);
		ev(MT_FW_ALLOC, a, 3 * MiB, 0, s70);
		ev(MT_FW_SEGMENT_MAP, a + 4 * MiB, 4 * MiB, 0, 0);
		ev(MT_FW_ALLOC, a + 3 * MiB, 4 * MiB, 0, s71);
		ev(MT_FW_FREE_REQUESTED, a, 3 * MiB, 0, s70);
		ev(MT_FW_FREE_COMPLETED, a, 3 * MiB, 0, s70);
		ev(MT_FW_SEGMENT_UNMAP, a, 2 * MiB, 0, 0);
		ev(MT_FW_FREE_REQUESTED, a + 3 * MiB, 4 * MiB, 0, s71);
		ev(MT_FW_FREE_COMPLETED, a + 3 * MiB, 4 * MiB, 0, s71);
		ev(MT_FW_SEGMENT_UNMAP, a + 2 * MiB, 6 * MiB, 0, 0);
		ev(MT_FW_SEGMENT_MAP, a + 10 * MiB, 2 * MiB, 0, 0);
		ev(MT_FW_ALLOC, a + 10 * MiB, 1 * MiB, 0, s72);
	} else if (!strcmp(argv[1], "odd") || !strcmp(argv[1], "badcheck")) {
		odd(!strcmp(argv[1], "badcheck"));
	} else if (!strcmp(argv[1], "round")) {
		uint32_t s90 = stack(90, "round");
		uint64_t m;

		settings("0", 0, 4);
		m = segment(20 * MiB);
		ev(MT_FW_ALLOC, m, 1300000, 0, s90);
		ev(MT_FW_ALLOC, m + 1310720, 5 * MiB + 1, 0, s90);
		check(20 * MiB, 1310720 + 6 * MiB, 1300000 + 5 * MiB + 1);
	} else if (!strcmp(argv[1], "maxsplit")) {
		uint32_t s95 = stack(95, "big");
		uint64_t a, b;

		settings("41943040", 0, 0);
		a = segment(50 * MiB);
		ev(MT_FW_ALLOC, a, 50 * MiB, 0, s95);
		freed(a, 50 * MiB, s95);
		ev(MT_FW_ALLOC, a, 45 * MiB, 0, s95);
		b = segment(12 * MiB);
		ev(MT_FW_ALLOC, b, 12 * MiB, 0, s95);
		freed(b, 12 * MiB, s95);
		ev(MT_FW_ALLOC, b, 5 * MiB, 0, s95);
		check(62 * MiB, 55 * MiB, 50 * MiB);
	} else if (!strcmp(argv[1], "stream")) {
		uint32_t s99 = stack(99, "side");
		uint64_t a;

		settings("0", 0, 0);
		a = segment(20 * MiB);
		ev(MT_FW_ALLOC, a, 8 * MiB, 0, s99);
		ev(MT_FW_FREE_REQUESTED, a, 8 * MiB, 0, s99);
		check(20 * MiB, 0, 8 * MiB);
		ev(MT_FW_FREE_COMPLETED, a, 8 * MiB, 0, s99);
		ev(MT_FW_ALLOC, a, 4 * MiB, 0, s99);
		check(20 * MiB, 4 * MiB, 4 * MiB);
	} else {
		fprintf(stderr, "dl-fwgen: unknown scenario '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
