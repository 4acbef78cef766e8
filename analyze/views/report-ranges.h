/*
 * report-ranges.h - the reports' section on ranges and steps
 * (report-ranges.c, and report-json.c's "ranges").
 */
#ifndef MEMTRACE_REPORT_RANGES_H
#define MEMTRACE_REPORT_RANGES_H

#include <stdio.h>

#include "model/report.h"

void report_ranges_text(const struct report *r, FILE *f);

#endif
