/*
 * dl-torch.c - a PyTorch training run as memtrace's PyTorch hooks record
 * it (the contract of docs/units.md "PyTorch's steps, phases, modules and
 * categories"), in C: phases are pushes of domain "torch", steps START/END
 * ranges "step N" of domain "torch", modules pushes of domain
 * "torch.module", the allocator's events go through memtrace_fw_events
 * one at a time as they happen, and the optimizer's post hook writes a
 * "categories=" note through memtrace_fw_info. No CUDA call at all.
 *
 * dl-torch run    the run below; exits 0
 * dl-torch twice  the same, then step 2's note written again (a note for
 *                 an unchanged set: the split must not change)
 * dl-torch damaged  the same, then a damaged note at step 2: parameters
 *                 naming P1 and 0x7e0000000000 (inside no block), an
 *                 unreadable gradients line, no optimizer_state line
 *                 (cut): 1 entry unmatched, 2 said cut or unreadable, the
 *                 split as in run
 * Without the entry points it prints "no memtrace" and exits 0.
 *
 * One segment of 64 MiB at S = 0x7f0000000000 on device 0; every block is
 * taken at the start of a free block of it and is a whole number of MiB
 * over 1 MiB, leaving more than 1 MiB after it (so PyTorch splits it and
 * the block is the request). Offsets in MiB, allocated after each event:
 *
 *   init           P1 4 @0, P2 4 @4 (parameters)                     8
 *   step 1 forward  module GPT > GPT.layers.0: A1 6 @8               14
 *                   module GPT > GPT.layers.1: A2 6 @14              20
 *          backward G1 4 @20, G2 4 @24 (gradients), T1 3 @28         31
 *                   free A2, A1, T1                                  16
 *          optimizer O1 8 @31, O2 8 @39 (optimizer state)            32
 *                   T2 2 @47                                         34  step 1's peak
 *                   free T2; note categories=1 names P1 P2, G1 G2,
 *                   O1 O2 (G and O named only now)                   32
 *   step 2 forward  GPT > GPT.layers.0: A1' 6 @8                     38
 *                   an OOM there (a request of 100 MiB)
 *                   GPT > GPT.layers.1: A2' 10 @47                   48  the run's peak
 *          backward free A2'; T3 3 @14; free A1', T3                 32
 *          optimizer T4 2 @57, free T4                               32
 *                   (no note: the set did not change)
 *
 * So the peak of allocated is 48 MiB in step 2, phase forward, module
 * GPT.layers.1: parameters 8, gradients 8, optimizer state 16,
 * activations 16 (A1' + A2'), temporaries 0; cache 64 - 48 = 16 MiB.
 * Step 1's peak 34 MiB (phase optimizer): 8, 8, 16, 0, 2; cache 30.
 * The OOM: step 2, phase forward, module GPT.layers.0, allocated 38:
 * 8, 8, 16, 6, 0; cache 26. Modules (highest allocated while open, the
 * bytes then of blocks allocated inside it or its submodules): GPT 48
 * (16), GPT.layers.1 48 (10), GPT.layers.0 38 (6), all in step 2.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "memtrace/framework.h"
#include "memtrace/markers.h"

#define MiB (1ull << 20)
#define S 0x7f0000000000ull

typedef int (*events_fn)(const struct mt_fw_input *, size_t);
typedef int (*info_fn)(const char *, size_t);

static events_fn events;
static info_fn info;

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int ev(unsigned action, uint64_t off, uint64_t size, uint64_t x)
{
	struct mt_fw_input e;

	memset(&e, 0, sizeof e);
	e.action = action;
	e.device = 0;
	e.time_ns = now_mono();
	e.addr = action == MT_FW_OOM ? 0 : S + off * MiB;
	e.size = size;
	e.x = x;
	return events(&e, 1) == 1 ? 0 : -1;
}

/* A tensor of n MiB at offset off, and its free (requested, completed). */
static int alloc(uint64_t off, uint64_t n)
{
	return ev(MT_FW_ALLOC, off, n * MiB, 0);
}

static int release(uint64_t off, uint64_t n)
{
	return ev(MT_FW_FREE_REQUESTED, off, n * MiB, 0) || ev(MT_FW_FREE_COMPLETED, off, n * MiB, 0);
}

static int note(int step)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf,
			 "categories=%d\n"
			 "parameters=0:0x%llx:%llu,0:0x%llx:%llu\n"
			 "gradients=0:0x%llx:%llu,0:0x%llx:%llu\n"
			 "optimizer_state=0:0x%llx:%llu,0:0x%llx:%llu\n", step,
			 S + 0 * MiB, 4 * MiB, S + 4 * MiB, 4 * MiB,
			 S + 20 * MiB, 4 * MiB, S + 24 * MiB, 4 * MiB,
			 S + 31 * MiB, 8 * MiB, S + 39 * MiB, 8 * MiB);
	return info(buf, (size_t)n);
}

int main(int argc, char **argv)
{
	int twice = argc > 1 && !strcmp(argv[1], "twice");
	int damaged = argc > 1 && !strcmp(argv[1], "damaged");
	static const char bad_note[] = "categories=2\n"
				       "parameters=0:0x7f0000000000:4194304,0:0x7e0000000000:4096\n"
				       "gradients=0:0xzz\n";
	uint64_t step;
	int bad = 0;

	if (argc < 2 || (strcmp(argv[1], "run") && !twice && !damaged)) {
		fprintf(stderr, "usage: dl-torch run | twice | damaged\n");
		return 2;
	}
	events = (events_fn)dlsym(RTLD_DEFAULT, "memtrace_fw_events");
	info = (info_fn)dlsym(RTLD_DEFAULT, "memtrace_fw_info");
	if (!events || !info) {
		puts("no memtrace");
		return 0;
	}
	bad |= ev(MT_FW_SEGMENT_ALLOC, 0, 64 * MiB, 0);
	bad |= alloc(0, 4) || alloc(4, 4);

	step = memtrace_start("torch", "step 1");
	memtrace_push("torch", "forward");
	memtrace_push("torch.module", "GPT");
	memtrace_push("torch.module", "GPT.layers.0");
	bad |= alloc(8, 6);
	memtrace_pop("torch.module");
	memtrace_push("torch.module", "GPT.layers.1");
	bad |= alloc(14, 6);
	memtrace_pop("torch.module");
	memtrace_pop("torch.module");
	memtrace_pop("torch");
	memtrace_push("torch", "backward");
	bad |= alloc(20, 4) || alloc(24, 4) || alloc(28, 3);
	bad |= release(14, 6) || release(8, 6) || release(28, 3);
	memtrace_pop("torch");
	memtrace_push("torch", "optimizer");
	bad |= alloc(31, 8) || alloc(39, 8) || alloc(47, 2) || release(47, 2);
	bad |= note(1);
	memtrace_pop("torch");
	memtrace_end(step);

	step = memtrace_start("torch", "step 2");
	memtrace_push("torch", "forward");
	memtrace_push("torch.module", "GPT");
	memtrace_push("torch.module", "GPT.layers.0");
	bad |= alloc(8, 6);
	bad |= ev(MT_FW_OOM, 0, 100 * MiB, 1 * MiB);
	memtrace_pop("torch.module");
	memtrace_push("torch.module", "GPT.layers.1");
	bad |= alloc(47, 10);
	memtrace_pop("torch.module");
	memtrace_pop("torch.module");
	memtrace_pop("torch");
	memtrace_push("torch", "backward");
	bad |= release(47, 10) || alloc(14, 3) || release(8, 6) || release(14, 3);
	memtrace_pop("torch");
	memtrace_push("torch", "optimizer");
	bad |= alloc(57, 2) || release(57, 2);
	if (twice)
		bad |= note(2);
	if (damaged)
		bad |= info(bad_note, sizeof bad_note - 1);
	memtrace_pop("torch");
	memtrace_end(step);
	if (bad) {
		fprintf(stderr, "dl-torch: an entry point failed\n");
		return 1;
	}
	return 0;
}
