/*
 * cmd-export.c - memtrace export --format perfetto|collapsed|torch-snapshot
 * [-o FILE] [--at WHEN] FILE...: runs the analysis (no database), resolves
 * the moment (views/export-at.c) and writes the run model in another
 * tool's format (views/export.h, docs/export.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "model/ranges.h"
#include "views/export.h"
#include "views/export-parquet.h"
#include "views/plot.h"

static const char usage_text[] =
	"usage: memtrace export --format FMT [-o FILE] [--at peak|exit|oom[:N]|TIME]\n"
	"                       [--sysroot DIR] [--debug-dir DIR] FILE...\n"
	"\n"
	"Writes the run in the format of another tool (docs/export.md):\n"
	"  perfetto        Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing:\n"
	"                  reserved, allocated, cached and device used per process and\n"
	"                  device, PyTorch's tensors allocated, requested, reserved and\n"
	"                  cached, failures, OOM retries and PyTorch's OOMs with their\n"
	"                  verdicts, up to the moment (default: the whole run)\n"
	"  collapsed       folded stacks 'device;frame;...;frame bytes' for flamegraph.pl,\n"
	"                  speedscope or Grafana: what each device held at the moment\n"
	"                  (default: its peak), by site; PyTorch's tensor sites on its\n"
	"                  devices\n"
	"  torch-snapshot  a pickle in the layout of torch.cuda.memory._snapshot(), for\n"
	"                  PyTorch's memory_viz (https://pytorch.org/memory_viz): the\n"
	"                  segments and blocks at the moment and the trace up to it\n"
	"                  (default: the end of the run)\n"
	"  parquet         Hive-partitioned Parquet tables under -o DIR, for DuckDB,\n"
	"                  Spark, Trino (docs/warehouse.md)\n"
	"\n"
	"options:\n"
	"  --format FMT      perfetto, collapsed, torch-snapshot or parquet (required)\n"
	"  -o, --output FILE where to write (default: standard output)\n"
	"  --at WHEN         the moment shown: peak (each device's own), exit, oom or\n"
	"                    oom:N (the Nth of PyTorch's OOMs, or of the failed\n"
	"                    allocations in a run without them), or a time since the\n"
	"                    run's start: +12.5ms, 40us, 3s, 1500000 (ns)\n"
	"  --sysroot DIR, --debug-dir DIR   as for 'memtrace report'\n"
	"\n"
	"Options take their value as --opt=V or --opt V (-oFILE or -o FILE), anywhere\n"
	"before '--'.\n"
	"\n"
	"exit status: 0 success, 1 invalid trace or failed write, 2 usage error or\n"
	"missing file\n";

enum { OPT_FORMAT = 256, OPT_AT };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "at", required_argument, NULL, OPT_AT },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

enum fmt { FMT_NONE, FMT_PERFETTO, FMT_COLLAPSED, FMT_TORCH, FMT_PARQUET };

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

static int run_export(char **files, int nfiles, struct pipeline_opts *o, enum fmt fmt,
		      const struct export_at *at, const char *out)
{
	struct export_moment mo;
	struct pipeline p;
	struct plot_map *m = NULL;
	struct an_sink sink;
	FILE *f = stdout;
	char err[1024];
	int status = 1, rc;

	if (fmt == FMT_PARQUET) {       /* a directory of tables (docs/warehouse.md) */
		if (export_parquet(files, nfiles, o, out, warn, &status, err, sizeof(err)))
			cli_error("%s", err);
		return status;
	}
	o->no_db = 1;
	ranges_keep_log(fmt == FMT_PERFETTO);   /* its slices and marks */
	if (fmt == FMT_TORCH) {
		if (!(m = plot_map_new(SIZE_MAX))) {
			cli_error("out of memory");
			return 1;
		}
		sink = plot_map_sink(m);
		o->sink = &sink;
	}
	if (pipeline_run(&p, files, nfiles, o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		plot_map_free(m);
		return status;
	}
	status = 1;
	if (export_moment(p.a, &p.r, at, &mo, err, sizeof(err))) {
		cli_error("%s", err);
		goto done;
	}
	if (out && strcmp(out, "-") && !(f = fopen(out, "wb"))) {
		cli_error("cannot write %s", out);
		export_moment_free(p.a, &mo);
		goto done;
	}
	if (fmt == FMT_PERFETTO)
		rc = export_perfetto(&p.r, &mo, f, err, sizeof(err));
	else if (fmt == FMT_COLLAPSED)
		rc = export_collapsed(&p.r, &mo, f, err, sizeof(err));
	else
		rc = export_torch(&p.r, &mo, m, f, err, sizeof(err));
	export_moment_free(p.a, &mo);
	if ((f != stdout ? fclose(f) : fflush(f)) && !rc) {
		snprintf(err, sizeof(err), "cannot write %s", f != stdout ? out : "the output");
		rc = -1;
	}
	if (rc)
		cli_error("%s", err);
	else
		status = 0;
	if (!rc && fmt == FMT_PERFETTO && export_ranges_cut(p.a->ranges, err, sizeof(err)))
		cli_warn("%s", err);
done:
	pipeline_free(&p);
	plot_map_free(m);
	return status;
}

int cmd_export(int argc, char **argv)
{
	struct pipeline_opts o;
	char **files;
	const char *out = NULL, *fmtname = NULL, *atname = NULL;
	struct export_at at;
	char err[512];
	enum fmt fmt = FMT_NONE;
	int nfiles, c, status;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = cli_getopt("export", argc, argv, ":ho:", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'o':
			out = optarg;
			break;
		case OPT_FORMAT:
			fmtname = optarg;
			break;
		case OPT_AT:
			atname = optarg;
			break;
		case OPT_SYSROOT:
		case OPT_DEBUG_DIR:
			cli_sym_option(c, optarg, &o.sym);
			break;
		default:
			return EXIT_USAGE;
		}
	}
	files = argv + optind;         /* getopt moved the operands last */
	nfiles = argc - optind;
	status = EXIT_USAGE;
	if (!fmtname)
		cli_usage_error("export", "no --format given (perfetto, collapsed, torch-snapshot or parquet)");
	else if (!strcmp(fmtname, "perfetto"))
		fmt = FMT_PERFETTO;
	else if (!strcmp(fmtname, "collapsed"))
		fmt = FMT_COLLAPSED;
	else if (!strcmp(fmtname, "torch-snapshot"))
		fmt = FMT_TORCH;
	else if (!strcmp(fmtname, "parquet") && out && strcmp(out, "-"))
		fmt = FMT_PARQUET;
	else if (!strcmp(fmtname, "parquet"))
		cli_usage_error("export", "parquet needs -o DIR (docs/warehouse.md)");
	else
		cli_usage_error("export", "unknown format '%s' (perfetto, collapsed, torch-snapshot or "
				"parquet)", fmtname);
	if (fmt == FMT_PARQUET && atname) {
		cli_usage_error("export", "parquet holds the whole run: --at does not apply");
		fmt = FMT_NONE;
	}
	/* the default: each device's peak for the flame graph, the whole run
	   for the timeline and for memory_viz (its trace, to the end) */
	if (fmt != FMT_NONE && !atname)
		atname = fmt == FMT_COLLAPSED ? "peak" : "exit";
	if (fmt != FMT_NONE && export_at_parse(atname, &at, err, sizeof(err))) {
		cli_usage_error("export", "%s", err);
		fmt = FMT_NONE;
	}
	if (fmt != FMT_NONE && !nfiles) {
		cli_usage_error("export", "no trace FILE given");
		fmt = FMT_NONE;
	}
	if (fmt != FMT_NONE)
		status = run_export(files, nfiles, &o, fmt, &at, out);
	return status;
}
