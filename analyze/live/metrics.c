/*
 * metrics.c - a frame of figures (figures.h) in the Prometheus text
 * exposition format 0.0.4: every series of docs/metrics.md, with HELP and
 * TYPE lines, label values escaped as the format requires (backslash,
 * double quote and newline). The memtrace_torch_* series are the figures
 * of the framework's model (lv_fwdev, lv_tsite), written only when the
 * traces hold framework records; memtrace_step and memtrace_step_peak_bytes
 * those of the ranges model, only when they hold range records.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "live/figures.h"

static void esc(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void proc_labels(FILE *out, const struct lv_proc *p, int dev)
{
	fputs("{host=\"", out);
	esc(out, p->host);
	if (dev >= 0)
		fprintf(out, "\",device=\"%d", dev);
	if (p->rank >= 0)
		fprintf(out, "\",rank=\"%d", p->rank);
	else
		fputs("\",rank=\"", out);
	fprintf(out, "\",pid=\"%u\"}", p->pid);
}

static void dev_labels(FILE *out, const struct lv_dev *d)
{
	fputs("{host=\"", out);
	esc(out, d->host);
	fprintf(out, "\",device=\"%d\"}", d->dev);
}

/* One per-process, per-device series; off is the field's offset. */
static void pdev_series(FILE *out, const struct lv *v, const char *name, const char *type,
			const char *help, size_t off)
{
	head(out, name, type, help);
	for (int i = 0; i < v->npdevs; i++) {
		const struct lv_pdev *d = &v->pdevs[i];

		fputs(name, out);
		proc_labels(out, &v->procs[d->proc], d->dev);
		fprintf(out, " %" PRIu64 "\n", *(const uint64_t *)((const char *)d + off));
	}
}

static void dev_series(FILE *out, const struct lv *v, const char *name, const char *type,
		       const char *help, size_t off, int sampled)
{
	head(out, name, type, help);
	for (int i = 0; i < v->ndevs; i++) {
		const struct lv_dev *d = &v->devs[i];

		if (sampled && !d->has_sample)
			continue;
		fputs(name, out);
		dev_labels(out, d);
		if (off == offsetof(struct lv_dev, untraced))
			fprintf(out, " %" PRId64 "\n", d->untraced);
		else
			fprintf(out, " %" PRIu64 "\n", *(const uint64_t *)((const char *)d + off));
	}
}

static void proc_series(FILE *out, const struct lv *v, const char *name, const char *type,
			const char *help, size_t off, int rss)
{
	head(out, name, type, help);
	for (int i = 0; i < v->nprocs; i++) {
		const struct lv_proc *p = &v->procs[i];

		if (rss && !p->has_rss)
			continue;
		fputs(name, out);
		proc_labels(out, p, -1);
		fprintf(out, " %" PRIu64 "\n", *(const uint64_t *)((const char *)p + off));
	}
}

/* One framework series per device of a process (off: the field). */
static void fw_series(FILE *out, const struct lv *v, const char *name, const char *type,
		      const char *help, size_t off, int run)
{
	head(out, name, type, help);
	for (int i = 0; i < v->nfwdevs; i++) {
		const struct lv_fwdev *d = &v->fwdevs[i];
		uint64_t x = *(const uint64_t *)((const char *)d + off);

		if ((d->proc < 0) != run)
			continue;
		fputs(name, out);
		if (run) {
			fputs("{host=\"", out);
			esc(out, d->host);
			fprintf(out, "\",device=\"%d\"}", d->dev);
		} else {
			proc_labels(out, &v->procs[d->proc], d->dev);
		}
		fprintf(out, " %" PRIu64 "\n", x);
	}
}

static void torch_metrics(FILE *out, const struct lv *v, int top_k)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} per[] = {
		{ "reserved_bytes", "gauge", "PyTorch's reserved_bytes: its segments "
		  "(max_memory_reserved() at its peak).", offsetof(struct lv_fwdev, reserved) },
		{ "allocated_bytes", "gauge", "PyTorch's allocated_bytes: the tensors' blocks "
		  "(max_memory_allocated() at its peak).", offsetof(struct lv_fwdev, allocated) },
		{ "requested_bytes", "gauge", "PyTorch's requested_bytes: the tensors' own sizes.",
		  offsetof(struct lv_fwdev, requested) },
		{ "cached_bytes", "gauge", "PyTorch's reserved minus allocated: free blocks and "
		  "blocks awaiting other streams.", offsetof(struct lv_fwdev, cached) },
		{ "peak_allocated_bytes", "gauge", "The highest allocated so far.",
		  offsetof(struct lv_fwdev, peak_allocated) },
		{ "peak_reserved_bytes", "gauge", "The highest reserved so far.",
		  offsetof(struct lv_fwdev, peak_reserved) },
	};
	char name[96];

	if (!v->has_fw)
		return;
	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		snprintf(name, sizeof(name), "memtrace_torch_%s", per[k].name);
		fw_series(out, v, name, per[k].type, per[k].help, per[k].off, 0);
	}
	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		snprintf(name, sizeof(name), "memtrace_torch_device_%s", per[k].name);
		fw_series(out, v, name, per[k].type, per[k].help, per[k].off, 1);
	}
	fw_series(out, v, "memtrace_torch_ooms_total", "counter",
		  "PyTorch's out-of-memory errors on the device.", offsetof(struct lv_fwdev, ooms), 0);
	head(out, "memtrace_torch_site_live_bytes", "gauge",
	     "Block bytes of the top tensor sites (Python lines from the user's), at most K; "
	     "site_id is the report's tensor site.");
	for (int i = 0; i < v->ntsites && i < top_k; i++) {
		const struct lv_tsite *t = &v->tsites[i];

		fprintf(out, "memtrace_torch_site_live_bytes{rank_in_top=\"%d\",device=\"%d\","
			"site_id=\"%u\",site=\"", i + 1, t->dev, t->id);
		esc(out, t->name);
		fprintf(out, "\"} %" PRIu64 "\n", t->live);
	}
}

void lv_metrics(FILE *out, const struct lv *v, int top_k)
{
	pdev_series(out, v, "memtrace_reserved_bytes", "gauge",
		    "Bytes the process holds from the driver on the device (reserved).",
		    offsetof(struct lv_pdev, reserved));
	pdev_series(out, v, "memtrace_allocated_bytes", "gauge",
		    "Bytes of the process's buffers on the device (allocated).",
		    offsetof(struct lv_pdev, allocated));
	pdev_series(out, v, "memtrace_cached_bytes", "gauge",
		    "Reserved minus allocated: memory held but in no buffer.",
		    offsetof(struct lv_pdev, cached));
	pdev_series(out, v, "memtrace_peak_reserved_bytes", "gauge",
		    "Highest reserved bytes of the process on the device so far.",
		    offsetof(struct lv_pdev, peak));
	pdev_series(out, v, "memtrace_alloc_failures_total", "counter",
		    "Failed allocations of the process on the device.",
		    offsetof(struct lv_pdev, failures));
	pdev_series(out, v, "memtrace_oom_retries_total", "counter",
		    "Out-of-memory retries of a caching allocator (failure, frees, retry).",
		    offsetof(struct lv_pdev, oom_retries));
	dev_series(out, v, "memtrace_device_reserved_bytes", "gauge",
		   "Reserved bytes of every traced process on the device, summed.",
		   offsetof(struct lv_dev, reserved), 0);
	dev_series(out, v, "memtrace_device_allocated_bytes", "gauge",
		   "Allocated bytes of every traced process on the device, summed.",
		   offsetof(struct lv_dev, allocated), 0);
	dev_series(out, v, "memtrace_device_peak_reserved_bytes", "gauge",
		   "Highest summed reserved bytes of the device so far.",
		   offsetof(struct lv_dev, peak), 0);
	dev_series(out, v, "memtrace_device_used_bytes", "gauge",
		   "Device memory in use at the latest cuMemGetInfo sample (total - free).",
		   offsetof(struct lv_dev, used), 1);
	dev_series(out, v, "memtrace_device_total_bytes", "gauge",
		   "Device memory at the latest cuMemGetInfo sample.",
		   offsetof(struct lv_dev, total), 1);
	dev_series(out, v, "memtrace_device_untraced_bytes", "gauge",
		   "Used at the latest sample minus reserved now: context, other processes.",
		   offsetof(struct lv_dev, untraced), 1);
	proc_series(out, v, "memtrace_live_allocations", "gauge",
		    "Allocations of the process live now (device, managed, array, "
		    "stream-ordered, VMM, pinned host).", offsetof(struct lv_proc, live_allocs), 0);
	proc_series(out, v, "memtrace_pinned_host_bytes", "gauge",
		    "Pinned host memory of the process (cuMemHostAlloc and the like).",
		    offsetof(struct lv_proc, pinned), 0);
	proc_series(out, v, "memtrace_shm_bytes", "gauge",
		    "Bytes of the /dev/shm segments the process made that hold memory now.",
		    offsetof(struct lv_proc, shm_bytes), 0);
	proc_series(out, v, "memtrace_resident_bytes", "gauge",
		    "Resident memory of the running process (VmRSS of /proc/PID/status).",
		    offsetof(struct lv_proc, rss), 1);
	head(out, "memtrace_process_running", "gauge",
	     "1 while the process runs, 0 once it exited or was killed; command is its first word.");
	for (int i = 0; i < v->nprocs; i++) {
		const struct lv_proc *p = &v->procs[i];

		fputs("memtrace_process_running{host=\"", out);
		esc(out, p->host);
		fprintf(out, "\",rank=\"");
		if (p->rank >= 0)
			fprintf(out, "%d", p->rank);
		fprintf(out, "\",pid=\"%u\",command=\"", p->pid);
		esc(out, p->command ? p->command : "");
		fprintf(out, "\",state=\"%s\"} %d\n",
			lv_state_name(p->state),
			p->state == LV_RUNNING);
	}
	if (v->has_ranges) {
		/* labelled by the process only: a step's name would make a new
		   series every step */
		head(out, "memtrace_step", "gauge",
		     "The step the process is in now (its number; 0 between steps), from its ranges.");
		for (int i = 0; i < v->nprocs; i++) {
			fputs("memtrace_step", out);
			proc_labels(out, &v->procs[i], -1);
			fprintf(out, " %" PRIu32 "\n", v->procs[i].step);
		}
		head(out, "memtrace_step_peak_bytes", "gauge",
		     "Peak reserved of the process's last complete step (over its devices), as the report's steps.");
		for (int i = 0; i < v->nprocs; i++) {
			if (!v->procs[i].has_last_step)
				continue;
			fputs("memtrace_step_peak_bytes", out);
			proc_labels(out, &v->procs[i], -1);
			fprintf(out, " %" PRIu64 "\n", v->procs[i].last_step_peak);
		}
	}
	head(out, "memtrace_site_live_bytes", "gauge",
	     "Live bytes of the top sites (the name every view shows; site_id is the report's site), at most K.");
	for (int i = 0; i < v->nsites && i < top_k; i++) {
		const struct lv_site *s = &v->sites[i];

		fprintf(out, "memtrace_site_live_bytes{rank_in_top=\"%d\",device=\"", i + 1);
		if (s->dev >= 0)
			fprintf(out, "%d", s->dev);
		else
			fputs("host", out);
		fprintf(out, "\",site_id=\"%u\",site=\"", s->id);
		esc(out, s->name);
		fprintf(out, "\"} %" PRIu64 "\n", s->live);
	}
	torch_metrics(out, v, top_k);
	if (v->host.has_mem) {
		head(out, "memtrace_host_memory_available_bytes", "gauge",
		     "MemAvailable of /proc/meminfo on the launcher's machine.");
		fprintf(out, "memtrace_host_memory_available_bytes %" PRIu64 "\n",
			v->host.mem_available);
	}
	if (v->host.has_shm) {
		head(out, "memtrace_host_shm_size_bytes", "gauge", "Capacity of /dev/shm (statvfs).");
		fprintf(out, "memtrace_host_shm_size_bytes %" PRIu64 "\n", v->host.shm_size);
		head(out, "memtrace_host_shm_free_bytes", "gauge", "Free bytes of /dev/shm (statvfs).");
		fprintf(out, "memtrace_host_shm_free_bytes %" PRIu64 "\n", v->host.shm_free);
	}
	head(out, "memtrace_run_shm_bytes", "gauge",
	     "Bytes of the /dev/shm segments the traced processes made that hold memory now.");
	fprintf(out, "memtrace_run_shm_bytes %" PRIu64 "\n", v->host.shm_now);
	head(out, "memtrace_run_shm_segments", "gauge",
	     "/dev/shm segments made by the traced processes and not unlinked.");
	fprintf(out, "memtrace_run_shm_segments %" PRIu64 "\n", v->host.shm_segments);
	head(out, "memtrace_records_total", "counter", "Trace records read and analyzed.");
	fprintf(out, "memtrace_records_total %" PRIu64 "\n", v->records);
	head(out, "memtrace_processes", "gauge", "Traced processes seen, and of them running.");
	fprintf(out, "memtrace_processes{state=\"all\"} %d\n", v->nprocs);
	fprintf(out, "memtrace_processes{state=\"running\"} %d\n", v->nrunning);
}
