/*
 * cmd-diff.c - memtrace diff [OPTIONS] BEFORE... -- AFTER... (or A B):
 * analyzes two runs and prints what changed, per device and per site
 * (model/diff.c compares; docs/diff.md documents the output and
 * --fail-if).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "model/check.h"
#include "model/diff.h"
#include "views/plot.h"

static const char usage_text[] =
	"usage: memtrace diff [OPTIONS] BEFORE... -- AFTER...\n"
	"       memtrace diff [OPTIONS] BEFORE AFTER\n"
	"\n"
	"Compares two runs, each given by its traces: per device, the peak reserved\n"
	"and allocated, cached, device used and untraced at the peak, left at exit,\n"
	"failed allocations and OOM retries before and after, with the change; then\n"
	"the sites whose bytes changed at the peak and at exit, largest change first.\n"
	"For a PyTorch run, the same in PyTorch's terms beside it: allocated,\n"
	"requested, reserved and cached peaks, tensors left at exit, OOMs, and the\n"
	"tensor sites matched by their Python frames. When a run has steps, its\n"
	"steps against the other's, step N against step N: their peaks, the\n"
	"growth per step, the steps of one run only.\n"
	"Sites are matched by their frames (function and file, the line as a\n"
	"tie-breaker: \"fuzzy\" when only function and file matched), so two builds\n"
	"of a program compare. Processes are matched by rank, else by command line\n"
	"and order; runs whose processes do not correspond are reported as such.\n"
	"\n"
	"options:\n"
	"  --json            the comparison as JSON (see docs/diff.md)\n"
	"  --fail-if EXPR    exit 1 when EXPR holds on a device of both runs:\n"
	"                    FIGURE > N, N a count, bytes (B, KiB, MiB, GiB) or a\n"
	"                    percent of the figure before; FIGURE one of peak,\n"
	"                    allocated_peak, cached, used, untraced, live_at_exit,\n"
	"                    failures, oom_retries; PyTorch's tensor_peak_allocated,\n"
	"                    requested_peak, framework_reserved_peak,\n"
	"                    framework_cached, tensor_live_at_exit, ooms; the\n"
	"                    steps' step_peak (on a step of both), growth_per_step\n"
	"                    (e.g. 'peak > 5%'); a figure the runs cannot compare\n"
	"                    (no steps) holds\n"
	"  --plot DIR        also draw the timelines of both runs as an overlay,\n"
	"                    per device both have: DIR/diff-devN.png (gnuplot),\n"
	"                    its data in DIR/diff-devN.tsv (time since each run's\n"
	"                    start; reserved and allocated before, then after)\n"
	"  --sysroot DIR     look for the recorded binaries under DIR first\n"
	"  --debug-dir DIR   look for debug files by build id under DIR/.build-id\n"
	"\n"
	"The runs are analyzed without a database.\n"
	"\n"
	"exit status: 0 compared (and --fail-if did not hold), 1 --fail-if held,\n"
	"2 usage error, missing file, invalid trace, or the plot cannot be drawn\n";

enum { OPT_JSON = 256, OPT_FAIL_IF, OPT_PLOT };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "fail-if", required_argument, NULL, OPT_FAIL_IF },
	{ "plot", required_argument, NULL, OPT_PLOT },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct cond { int fig; double limit; int pct; };

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

/*
 * "FIGURE > N[%|unit]", read by check's expression parser (model/check.h),
 * so that it takes and refuses what a rule of memtrace check does; 0, or
 * -1 with what is wrong in err.
 */
static int parse_cond(const char *s, struct cond *c, char *err, size_t errlen)
{
	const char *words[DF_NFIGS], *names[DF_NFIGS];
	const struct chk_syntax sx = { words, names, DF_NFIGS, 0, 1u << CHK_GT, 0, 1 };
	struct chk_expr e;

	for (int i = 0; i < DF_NFIGS; i++) {
		words[i] = diff_figure_word((enum diff_figure)i);
		names[i] = diff_figure_name((enum diff_figure)i);
	}
	if (check_expr_parse(s, &sx, &e, err, errlen))
		return -1;
	c->fig = e.fig;
	c->limit = e.value;
	c->pct = e.pct;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline pb, pa;
	struct diff d;
	struct cond cond = { 0, 0, 0 };
	const char *fail_if = NULL, *plot_dir = NULL;
	struct plot_out po;
	char gp[PATH_MAX], scripts[PATH_MAX + 32];
	char **before, **after;
	int sep = argc, nb = 0, na = 0, json = 0, status, c, holds = 0;
	char err[1024];

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	memset(&o, 0, sizeof(o));
	o.no_db = 1;
	optind = 0;
	while ((c = cli_getopt("diff", sep, argv, ":h", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_FAIL_IF:
			if (fail_if)
				return cli_usage_error("diff", "--fail-if given twice");
			fail_if = optarg;
			if (parse_cond(optarg, &cond, err, sizeof(err)))
				return cli_usage_error("diff", "--fail-if '%s': %s", optarg, err);
			break;
		case OPT_PLOT:
			plot_dir = optarg;
			break;
		case OPT_SYSROOT:
		case OPT_DEBUG_DIR:
			cli_sym_option(c, optarg, &o.sym);
			break;
		default:
			return EXIT_USAGE;
		}
	}
	before = argv + optind;
	nb = sep - optind;
	if (sep < argc) {
		after = argv + sep + 1;
		na = argc - sep - 1;
	} else if (nb == 2) {
		after = before + 1;
		nb = na = 1;
	} else {
		return cli_usage_error("diff", "give BEFORE and AFTER, or BEFORE... -- AFTER...");
	}
	if (!nb || !na)
		return cli_usage_error("diff", "no %s trace given", nb ? "AFTER" : "BEFORE");
	if (plot_dir) {
		if (cli_find_gnuplot(gp, sizeof(gp))) {
			cli_error("gnuplot not found in PATH: install it (e.g. 'apt-get install "
				  "gnuplot-nox') to draw plots");
			return EXIT_USAGE;
		}
		if (cli_find_scripts(scripts, sizeof(scripts))) {
			cli_error("cannot find the gnuplot scripts (timeline.gp) in ../scripts or "
				  "../share/memtrace beside the memtrace executable");
			return EXIT_USAGE;
		}
		if (mkdir(plot_dir, 0777) && errno != EEXIST) {
			cli_error("cannot create '%s': %s", plot_dir, strerror(errno));
			return EXIT_USAGE;
		}
		po.dir = plot_dir;
		po.fmt = "png";
		po.gnuplot = gp;
		po.scripts = scripts;
	}
	if (pipeline_run(&pb, before, nb, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		pipeline_free(&pb);
		return EXIT_USAGE;
	}
	if (pipeline_run(&pa, after, na, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		pipeline_free(&pa);
		pipeline_free(&pb);
		return EXIT_USAGE;
	}
	if (diff_build(&d, &pb.r, &pa.r, err, sizeof(err))) {
		cli_error("%s", err);
		status = EXIT_USAGE;
	} else {
		/* a figure the runs cannot compare holds: a gate never passes on
		   missing data */
		const char *why = fail_if ? diff_missing(&d, (enum diff_figure)cond.fig) : NULL;

		if (fail_if)
			holds = why || diff_exceeds(&d, (enum diff_figure)cond.fig, cond.limit, cond.pct);
		int nplots = 0;

		if (json ? diff_json(&d, stdout, fail_if, holds, why) : diff_text(&d, stdout)) {
			cli_error("cannot write the comparison");
			status = EXIT_USAGE;
		} else if (plot_dir && diff_plot(&d, &po, &nplots, err, sizeof(err))) {
			cli_error("%s", err);
			status = EXIT_USAGE;
		} else {
			if (plot_dir && !nplots)
				cli_warn("--plot: no device both runs have, nothing drawn");
			if (fail_if && !json && why)
				printf("\n--fail-if '%s': cannot be judged (%s): taken as holding\n",
				       fail_if, why);
			else if (fail_if && !json)
				printf("\n--fail-if '%s': %s\n", fail_if, holds ? "holds" : "does not hold");
			status = holds ? 1 : 0;
		}
		diff_free(&d);
	}
	pipeline_free(&pa);
	pipeline_free(&pb);
	return status;
}
