/*
 * cmd-view.c - memtrace view [-o FILE.html] [--sysroot DIR] [--debug-dir
 * DIR] FILE...: runs the analysis with the address map's sink (as plot
 * does) and writes one self-contained HTML page of the run (views/html.c,
 * docs/view.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "model/ranges.h"
#include "views/html.h"

static const char usage_text[] =
	"usage: memtrace view [-o FILE.html] [--sysroot DIR] [--debug-dir DIR] FILE...\n"
	"\n"
	"Writes one HTML page of the run that any browser opens from disk (no network,\n"
	"no server; its scripts and data are inside it): the memory timeline of each\n"
	"device with the peak and failures marked, the sites that held the peak with\n"
	"their stacks, an icicle of live memory at the peak and at exit, the leak\n"
	"candidates, the failures and who held the memory then, the address map, the\n"
	"processes and /dev/shm. A PyTorch run opens in PyTorch's terms (allocated,\n"
	"requested, cached, reserved; tensors by Python line; each out-of-memory\n"
	"error's verdict), the CUDA level beside it. Its numbers are the report's\n"
	"(memtrace report).\n"
	"\n"
	"options:\n"
	"  -o FILE           the page (default: FILE.html beside the first trace)\n"
	"  --sysroot DIR     look for the recorded binaries under DIR first\n"
	"  --debug-dir DIR   look for debug files by build id under DIR/.build-id\n"
	"\n"
	"exit status: 0 success, 1 invalid trace or runtime error, 2 usage error or\n"
	"missing file\n";

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

int cmd_view(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline p;
	struct plot_map *m = NULL;
	struct an_sink sink;
	char **files;
	const char *out = NULL;
	char path[PATH_MAX], err[1024];
	int nfiles, status = 1, c;
	FILE *f;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = cli_getopt("view", argc, argv, ":ho:", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'o':
			out = optarg;
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
	if (!nfiles)
		return cli_usage_error("view", "no trace FILE given");
	snprintf(path, sizeof(path), "%s%s", out ? out : files[0], out ? "" : ".html");
	if (!(m = plot_map_new(HTML_MAP_MAX))) {
		cli_error("out of memory");
		return 1;
	}
	sink = plot_map_sink(m);
	o.no_db = 1;
	o.sink = &sink;
	ranges_keep_log(1);     /* the ranges drawn on the timelines */
	if (pipeline_run(&p, files, nfiles, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	status = 1;
	if (!(f = fopen(path, "w"))) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (html_write(&p.r, m, f, err, sizeof(err))) {
		cli_error("cannot write '%s': %s", path, err);
		fclose(f);
		goto out;
	}
	if (fclose(f)) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	printf("wrote %s\n", path);
	status = 0;
out:
	pipeline_free(&p);
	plot_map_free(m);
	return status;
}
