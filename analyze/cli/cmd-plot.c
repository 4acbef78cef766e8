/*
 * cmd-plot.c - memtrace plot [-o DIR] [--format png|svg] FILE...: runs the
 * analysis with the address map's sink, then draws per device a timeline,
 * an address map and the top sites (views/plot.c) with gnuplot and the
 * scripts in scripts/, each also usable by hand.
 *
 * The scripts are found beside the executable: ../scripts (the build tree,
 * build/memtrace) or ../share/memtrace (installed, PREFIX/bin/memtrace).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "views/plot.h"

static const char usage_text[] =
	"usage: memtrace plot [-o DIR] [--format png|svg] [--sysroot DIR] [--debug-dir DIR] FILE...\n"
	"\n"
	"Draws, per device, the memory timeline (reserved, allocated and device used,\n"
	"with the peak and failures marked), the address-space map (each allocation\n"
	"a box from its allocation to its free over its addresses) and the top sites\n"
	"at the peak, with gnuplot. The data is written beside each picture as TSV,\n"
	"and each script also runs by hand:\n"
	"  gnuplot -c scripts/timeline.gp DIR/timeline-dev0.tsv out.png\n"
	"\n"
	"options:\n"
	"  -o, --output DIR  where to write (default: FILE.plots beside the first trace)\n"
	"  --format FMT      png (default) or svg\n"
	"  --sysroot DIR, --debug-dir DIR   as for 'memtrace report'\n"
	"\n"
	"Options take their value as --opt=V or --opt V (-oDIR or -o DIR), anywhere\n"
	"before '--'.\n"
	"\n"
	"When stderr is a terminal and the work takes more than a second, one line\n"
	"there shows its progress (\"memtrace: loading 42%\"), cleared at the end.\n"
	"\n"
	"exit status: 0 success, 1 invalid trace, gnuplot missing or failing,\n"
	"2 usage error or missing file\n";

enum { OPT_FORMAT = 256 };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

/* --- running gnuplot ----------------------------------------------------- */

int cli_find_gnuplot(char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, len, "%.*s/gnuplot", (int)n, path);
		if (n && access(buf, X_OK) == 0)
			return 0;
		path += n + (c ? 1 : 0);
	}
	return -1;
}

int cli_find_scripts(char *buf, size_t len)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	static const char *const rel[] = { "../scripts", "../share/memtrace" };

	if (n <= 0)
		return -1;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		char probe[PATH_MAX + 128];

		snprintf(buf, len, "%s/%s", exe, rel[i]);
		snprintf(probe, sizeof(probe), "%s/timeline.gp", buf);
		if (access(probe, R_OK) == 0)
			return 0;
	}
	return -1;
}

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

int cmd_plot(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline p;
	struct plot_map *m = NULL;
	struct an_sink sink;
	struct plot_out po;
	char **files;
	const char *outdir = NULL, *fmt = "png";
	char dir[PATH_MAX], gp[PATH_MAX], scripts[PATH_MAX + 32], err[1024];
	int nfiles, status = 1, c;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = cli_getopt("plot", argc, argv, ":ho:", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'o':
			outdir = optarg;
			break;
		case OPT_FORMAT:
			fmt = optarg;
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
	if (strcmp(fmt, "png") && strcmp(fmt, "svg"))
		return cli_usage_error("plot", "unknown format '%s' (png or svg)", fmt);
	if (!nfiles)
		return cli_usage_error("plot", "no trace FILE given");
	if (cli_find_gnuplot(gp, sizeof(gp))) {
		cli_error("gnuplot not found in PATH: install it (e.g. 'apt-get install gnuplot-nox') "
			  "to draw plots");
		return 1;
	}
	if (cli_find_scripts(scripts, sizeof(scripts))) {
		cli_error("cannot find the gnuplot scripts (timeline.gp) in ../scripts or "
			  "../share/memtrace beside the memtrace executable");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", outdir ? outdir : files[0]);
	if (!outdir)
		strncat(dir, ".plots", sizeof(dir) - strlen(dir) - 1);
	if (!(m = plot_map_new(PLOT_MAP_MAX))) {
		cli_error("out of memory");
		return 1;
	}
	sink = plot_map_sink(m);
	o.no_db = 1;
	o.out_dir = dir;
	o.sink = &sink;
	if (pipeline_run(&p, files, nfiles, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	status = 1;
	po.dir = dir;
	po.fmt = fmt;
	po.gnuplot = gp;
	po.scripts = scripts;
	for (int g = 0; g < p.r.ngdevs; g++) {
		if (plot_device(&p.r, m, p.r.gdevs[g], &po, err, sizeof(err))) {
			cli_error("%s", err);
			goto out;
		}
	}
	printf("wrote plots for %d device%s to %s/\n", p.r.ngdevs, p.r.ngdevs == 1 ? "" : "s", dir);
	status = 0;
out:
	pipeline_free(&p);
	plot_map_free(m);
	return status;
}
