/*
 * report-nvtxmem.h - the reports' section on pools announced by NVTX
 * (report-nvtxmem.c, and report-json.c's "nvtx_pools").
 */
#ifndef MEMTRACE_REPORT_NVTXMEM_H
#define MEMTRACE_REPORT_NVTXMEM_H

#include <stdio.h>

#include "model/report.h"

void report_nvtxmem_text(const struct report *r, FILE *f);
/* The failed allocation of process proc at time t, NULL when not kept. */
const struct an_failure *report_nvtxmem_failure(const struct analysis *a, int proc, uint64_t t);

#endif
