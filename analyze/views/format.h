/*
 * format.h - formatting shared by the views (format.c): sizes, times,
 * escaped strings, device names.
 */
#ifndef MEMTRACE_FORMAT_H
#define MEMTRACE_FORMAT_H

#include <stdint.h>
#include <stdio.h>

#include "model/report.h"

/* "64.0 MiB", "3000 B" */
const char *rep_size(char *buf, size_t len, uint64_t bytes);
/* "+1.234 s", "+2.9 ms": a time since the run's start */
const char *rep_time(char *buf, size_t len, uint64_t ns);
/* "1.234 s", "2.9 ms": a length of time */
const char *rep_duration(char *buf, size_t len, uint64_t ns);
/* a JSON string, quoted; bytes that are not valid UTF-8 become \u00XX */
void rep_json_str(FILE *f, const char *s, size_t len);
/* text for a person: controls and invalid UTF-8 as \xNN */
void rep_text_str(FILE *f, const char *s, size_t len);
/* the device's name: "device 0", or "host:0" when the run spans hosts */
const char *rep_dev_name(const struct report *r, const struct an_dev *d, char *buf, size_t len);

#endif
