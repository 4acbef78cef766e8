/*
 * check-base.c - a baseline for `memtrace check` given as the JSON of
 * `memtrace report --json` (docs/report-json.md) instead of its traces:
 * the figures of the relative rules, read with json-c. docs/check.md maps
 * each figure to its key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "model/check.h"
#include "model/framework.h"

struct chk_jbase {
	json_object *root;
};

static json_object *key(json_object *o, const char *k)
{
	json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* An integer member; 0 when it is missing or null. */
static int num(json_object *o, const char *k, uint64_t *v)
{
	json_object *x = key(o, k);
	int64_t n;

	if (!x || !json_object_is_type(x, json_type_int))
		return 0;
	n = json_object_get_int64(x);
	*v = n > 0 ? (uint64_t)n : 0;
	return 1;
}

static int len(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? (int)json_object_array_length(a) : 0;
}

static json_object *at(json_object *a, int i)
{
	return json_object_array_get_idx(a, (size_t)i);
}

/* The element of array a whose member k is n, or NULL. */
static json_object *find(json_object *a, const char *k, long n)
{
	for (int i = 0; i < len(a); i++) {
		json_object *x = key(at(a, i), k);

		if (x && json_object_is_type(x, json_type_int) && json_object_get_int64(x) == n)
			return at(a, i);
	}
	return NULL;
}

int check_jbase_load(const char *path, struct chk_jbase **out, char *err, size_t errlen)
{
	struct chk_jbase *b;
	json_object *root = json_object_from_file(path), *fv;
	int64_t v;

	*out = NULL;
	if (!root) {
		snprintf(err, errlen, "cannot read '%s' as JSON: %s", path, json_util_get_last_err());
		/* json-c's message ends with a newline */
		err[strcspn(err, "\n")] = 0;
		return -1;
	}
	fv = key(root, "format_version");
	if (!fv || !json_object_is_type(fv, json_type_int) || !key(root, "devices") ||
	    !key(root, "peak_all_devices")) {
		snprintf(err, errlen, "'%s' is not the JSON of memtrace report (no format_version, "
			 "devices and peak_all_devices)", path);
		json_object_put(root);
		return -1;
	}
	v = json_object_get_int64(fv);
	if (v < 1 || v > REP_FORMAT_VERSION) {
		snprintf(err, errlen, "'%s' is a report of format_version %lld; this memtrace reads "
			 "up to %d", path, (long long)v, REP_FORMAT_VERSION);
		json_object_put(root);
		return -1;
	}
	if (!(b = calloc(1, sizeof(*b)))) {
		snprintf(err, errlen, "out of memory");
		json_object_put(root);
		return -1;
	}
	b->root = root;
	*out = b;
	return 0;
}

void check_jbase_free(struct chk_jbase *b)
{
	if (b) {
		json_object_put(b->root);
		free(b);
	}
}

/* Counts the elements of array a on device dev (-1 any) of process pid
   (-1 any). */
static uint64_t count_in(json_object *a, long dev, long pid)
{
	uint64_t n = 0, d, p;

	for (int i = 0; i < len(a); i++) {
		json_object *x = at(a, i);

		if ((dev >= 0 && (!num(x, "device", &d) || (long)d != dev)) ||
		    (pid >= 0 && (!num(x, "pid", &p) || (long)p != pid)))
			continue;
		n++;
	}
	return n;
}

/* The cache held at exit on the device entry d (of "devices", or of a
   process's): the sum of the report's "cache_at_exit" entries of its
   device; 0 when the list may be cut (REP_TOP entries) or, for a process
   of a run of several, when the device has such entries (they are not
   told apart by process). */
static int cache_on(json_object *root, json_object *d, int of_proc, uint64_t *c)
{
	json_object *l = key(root, "cache_at_exit");
	uint64_t dev, n, b;

	*c = 0;
	if (!num(d, "device", &dev))
		return 0;
	n = count_in(l, (long)dev, -1);
	if (len(l) >= REP_TOP || (n && of_proc && len(key(root, "processes")) > 1))
		return 0;
	for (int i = 0; i < len(l); i++)
		if (num(at(l, i), "device", &n) && n == dev && num(at(l, i), "bytes", &b))
			*c += b;
	return 1;
}

/* A framework figure from the report's "framework" (docs/report-json.md):
   for the result on device dev (-1: none) of process pid (-1: the run). */
static int fw_figure(json_object *root, const struct chk_rule *rule, int dev, long pid,
		     uint64_t *v)
{
	static const enum fw_verdict verdicts[] = {
		[CHK_OOM_FRAGMENTATION] = FW_FRAGMENTATION, [CHK_OOM_OTHER_STREAM] = FW_OTHER_STREAM,
		[CHK_OOM_FULL] = FW_FULL, [CHK_OOM_OUTSIDE] = FW_OUTSIDE,
	};
	json_object *fw = key(root, "framework"), *devs = key(fw, "devices"), *x;
	uint64_t n, p;
	int found = 0;

	*v = 0;
	if (!fw)
		return 0;
	switch (rule->metric) {
	case CHK_TENSOR_PEAK_ALLOCATED:
	case CHK_REQUESTED_PEAK:
		for (int i = 0; i < len(devs); i++) {
			x = at(devs, i);
			if (!num(x, "device", &n) || (long)n != dev)
				continue;
			if (pid < 0 ? num(x, "pid", &p) : !num(x, "pid", &p) || (long)p != pid)
				continue;
			return rule->metric == CHK_REQUESTED_PEAK ?
			       num(key(x, "peak_requested"), "requested_bytes", v) :
			       num(key(x, "peak_allocated"), "allocated_bytes", v);
		}
		return 0;
	case CHK_TENSOR_LIVE_AT_EXIT:
		if (pid >= 0) {
			for (int i = 0; i < len(devs); i++) {
				x = at(devs, i);
				if (!num(x, "pid", &p) || (long)p != pid || !num(x, "device", &n) ||
				    (rule->scope == CHK_DEV && (long)n != rule->scope_n) ||
				    !num(key(x, "at_exit"), "allocated_bytes", &p))
					continue;
				*v += p;
				found = 1;
			}
			return found;
		}
		x = key(fw, "leaks");
		for (int i = 0; i < len(x); i++)
			if (!(rule->scope == CHK_DEV && (!num(at(x, i), "device", &n) ||
							 (long)n != rule->scope_n)) &&
			    num(at(x, i), "bytes", &n))
				*v += n;
		return 1;
	default: {
		const char *want = rule->metric == CHK_OOMS ? NULL :
				   fw_verdict_name(verdicts[rule->metric]);

		x = key(fw, "ooms");
		for (int i = 0; i < len(x); i++) {
			json_object *vd = key(at(x, i), "verdict");

			if ((rule->scope == CHK_DEV && (!num(at(x, i), "device", &n) ||
						       (long)n != rule->scope_n)) ||
			    (pid >= 0 && (!num(at(x, i), "pid", &p) || (long)p != pid)) ||
			    (want && (!vd || strcmp(json_object_get_string(vd), want))))
				continue;
			(*v)++;
		}
		return 1;
	}
	}
}

/* A category at the peak of allocated: ranges.framework_peaks' entry of
   pid, else the highest one (as check.c's category_figure). */
static int category_figure(json_object *root, const struct chk_rule *rule, long pid, uint64_t *v)
{
	static const char *const keys[] = {
		[CHK_PARAMETERS_PEAK] = "parameters", [CHK_GRADIENTS_PEAK] = "gradients",
		[CHK_OPTIMIZER_STATE_PEAK] = "optimizer_state", [CHK_ACTIVATIONS_PEAK] = "activations",
		[CHK_TEMPORARIES_PEAK] = "temporaries",
	};
	json_object *pk = key(key(root, "ranges"), "framework_peaks"), *best = NULL;
	uint64_t n, bn = 0, p;

	if (rule->scope == CHK_DEV)
		return 0;
	for (int i = 0; i < len(pk); i++) {
		if (!num(at(pk, i), "allocated_bytes", &n) ||
		    (pid >= 0 && (!num(at(pk, i), "pid", &p) || (long)p != pid)))
			continue;
		if (!best || n > bn) {
			best = at(pk, i);
			bn = n;
		}
	}
	return best && num(key(best, "categories"), keys[rule->metric], v);
}

int check_jbase_figure(const struct chk_jbase *b, const struct chk_rule *rule, int dev,
		       uint64_t *v)
{
	json_object *root = b->root, *devs = key(root, "devices"), *proc = NULL, *d = NULL;
	long pid = -1;
	uint64_t n;

	*v = 0;
	/* the program's units: the report's JSON lists 1000 instances at
	   most, so it may not hold one; a trace as the baseline does */
	if (rule->scope >= CHK_RANGE)
		return 0;
	if (rule->scope == CHK_DEV && !(d = find(devs, "device", rule->scope_n)))
		return 0;
	if (rule->scope == CHK_PID || rule->scope == CHK_RANK) {
		if (!(proc = find(key(root, "processes"), rule->scope == CHK_PID ? "pid" : "rank",
				  rule->scope_n)) || !num(proc, "pid", &n))
			return 0;
		pid = (long)n;
		devs = key(proc, "devices");
	}
	/* the per-device figures: the baseline's device of the same index; a
	   baseline without it has no such figure (never another device's) */
	if (!d && (rule->metric == CHK_ALLOCATED_PEAK || rule->metric == CHK_UNTRACED)) {
		d = dev >= 0 ? find(devs, "device", dev) : NULL;
		if (!d)
			return 0;
	}
	switch (rule->metric) {
	case CHK_PEAK:
		if (d)
			return num(d, "peak_reserved_bytes", v);
		if (proc)
			return num(proc, "peak_reserved_bytes", v);
		return num(key(root, "peak_all_devices"), "reserved_bytes", v);
	case CHK_ALLOCATED_PEAK:
		return num(d, "peak_allocated_bytes", v);
	case CHK_UNTRACED:
		return num(d, "untraced_bytes_at_peak", v);
	case CHK_LIVE_AT_EXIT:
		/* left at exit less the cache held at exit, as the leak
		   candidates count it */
		if (d) {
			uint64_t c;

			if (!num(d, "left_at_exit_bytes", v) || !cache_on(root, d, pid >= 0, &c))
				return 0;
			*v = *v > c ? *v - c : 0;
			return 1;
		}
		for (int i = 0; i < len(devs); i++) {
			uint64_t c;

			if (!num(at(devs, i), "left_at_exit_bytes", &n) ||
			    !cache_on(root, at(devs, i), pid >= 0, &c))
				return 0;
			*v += n > c ? n - c : 0;
		}
		return 1;
	case CHK_TENSOR_PEAK_ALLOCATED:
	case CHK_REQUESTED_PEAK:
	case CHK_TENSOR_LIVE_AT_EXIT:
	case CHK_OOMS:
	case CHK_OOM_FRAGMENTATION:
	case CHK_OOM_OTHER_STREAM:
	case CHK_OOM_FULL:
	case CHK_OOM_OUTSIDE:
		return fw_figure(root, rule, dev, pid, v);
	case CHK_DRAIN_SHARE:       /* never relative */
		return 0;
	case CHK_PARAMETERS_PEAK:
	case CHK_GRADIENTS_PEAK:
	case CHK_OPTIMIZER_STATE_PEAK:
	case CHK_ACTIVATIONS_PEAK:
	case CHK_TEMPORARIES_PEAK:
		return category_figure(root, rule, pid, v);
	case CHK_FAILURES:
		if (!num(root, "failures_total", &n))
			return 0;
		if (!d && !proc) {
			*v = n;
			return 1;
		}
		/* only the first 1000 are listed */
		if (n > (uint64_t)len(key(root, "failures")))
			return 0;
		*v = count_in(key(root, "failures"), d ? (long)rule->scope_n : -1, pid);
		return 1;
	case CHK_OOM_RETRIES:
		*v = count_in(key(root, "oom_retries"), d ? (long)rule->scope_n : -1, pid);
		return 1;
	case CHK_SHM_LEFT:
		if (d)
			return 0;
		if (proc) {
			json_object *sp = find(key(key(root, "shm"), "processes"), "pid", pid);

			if (!sp)
				return key(root, "shm") != NULL;
			return num(sp, "present_bytes", v);
		}
		return num(key(root, "shm"), "present_bytes", v);
	case CHK_GROWTH_PER_STEP:       /* no baseline (check_rule_add) */
	case CHK_FIRST_STEP_EXCESS:
	case CHK_LEAKED:                /* a unit scope's only (above) */
	case CHK_NMETRICS:
		break;
	}
	return 0;
}
