/*
 * metrics.h - the metric modules the pass (account.c) calls at each
 * change: peak.c, leaks.c, frag.c, failures.c. They read the analysis and
 * the live set (live.h); they never call back into the pass.
 */
#ifndef MEMTRACE_METRICS_H
#define MEMTRACE_METRICS_H

#include "model/analysis.h"

/* peak.c: sample_reserved is reserved on d when its latest sample came */
void peak_check(struct analysis *a, struct an_dev *d, uint64_t t, uint64_t seq, int proc,
		uint16_t api, uint32_t stack, uint64_t bytes, uint64_t sample_reserved);
void peak_sample(struct an_dev *d, uint64_t t);
/* What device di holds now, by site, into its peak_sites (the replay
   calls it when it reaches the peak); -1 when out of memory. */
int peak_snapshot(struct analysis *a, int di);
/* What device di holds now by site (the live set grouped as at a peak),
   largest first; the caller frees *out. */
int peak_group(const struct analysis *a, int di, struct an_sitebytes **out, uint32_t *nout);

/* leaks.c */
void leaks_on_grow(struct an_site *site, uint64_t t);
/* 1 when the site passes the growth test of docs/analysis.md */
int leaks_is_growing(const struct analysis *a, const struct an_site *site);

/* frag.c */
void frag_advance(struct an_dev *d, uint64_t t);
void frag_hist_add(struct an_dev *d, uint64_t bytes);
void frag_oom_failed(struct analysis *a, int proc, uint32_t tid, int dev, uint64_t bytes,
		     uint16_t result, uint64_t t);
void frag_reset(void);
void frag_oom_free(struct analysis *a, int proc, uint32_t tid, uint64_t bytes);
void frag_oom_alloc(struct analysis *a, int proc, uint32_t tid, uint64_t bytes, uint16_t result,
		    uint64_t t);
/* pools and reservations: free extents, from the live set at a peak */
int frag_extents(struct analysis *a, struct an_dev *d);
int frag_bucket(uint64_t bytes);

/* failures.c */
int failures_add(struct analysis *a, uint64_t t, int proc, uint32_t tid, const struct mt_event *e,
		 int dev, const struct an_dev *pd);
void failures_sample(struct analysis *a, int proc, int dev, uint64_t free_bytes);

#endif
