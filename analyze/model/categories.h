/*
 * categories.h - what PyTorch's allocated memory is, at the moments the
 * report names (docs/units.md): the split of the framework's allocated
 * into parameters, gradients, optimizer state (named by the "categories="
 * notes python/memtrace_torch.py writes), activations (tensor blocks
 * allocated in a "forward" phase and named by no note) and temporaries
 * (the other tensor blocks), and the cache (reserved - allocated).
 *
 * cat_end() runs once after ranges_end() (account.c): it classifies every
 * block of the framework model for its whole life, then fills the splits
 * of the ranges model (each process's peaks, each step's and module's
 * peak, each OOM) in one sweep. Returns -1 when out of memory.
 */
#ifndef MEMTRACE_CATEGORIES_H
#define MEMTRACE_CATEGORIES_H

#include <stdint.h>

struct analysis;

enum cat {
	CAT_PARAMETERS,
	CAT_GRADIENTS,
	CAT_OPTIMIZER,
	CAT_ACTIVATIONS,
	CAT_TEMPORARIES,
	CAT_N
};

/* The framework's memory of one process (over its devices) at one
   moment: after FW event number seq. */
struct cat_split {
	int has;                    /* computed (the moment has FW events) */
	uint64_t bytes[CAT_N];      /* block bytes of each category */
	uint64_t allocated;         /* their sum */
	uint64_t reserved;          /* the process's segments */
	uint64_t own;               /* a module's moment: bytes of the live
	                               blocks allocated inside that module */
};

/* What the notes said. */
struct cat_model {
	uint64_t notes;             /* "categories=" notes read */
	uint64_t entries;           /* storages they named */
	uint64_t unmatched;         /* entries inside no live block */
	uint64_t bad;               /* lines cut short or unreadable */
	uint64_t bad_notes;         /* notes missing a category's line */
	uint64_t blocks[CAT_N];     /* blocks classified so */
};

int cat_end(struct analysis *a);
/* "parameters", "gradients", "optimizer state", "activations",
   "temporaries" (words); cat_key: the same as JSON keys and note keys
   ("optimizer_state"). */
const char *cat_name(int c);
const char *cat_key(int c);

#endif
