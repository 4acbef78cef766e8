/*
 * cmd-report.c - memtrace report [--db PATH | --no-db] [--json]
 * [--sysroot DIR] [--debug-dir DIR] FILE...: loads the traces of a run
 * into SQLite and prints what happened to GPU memory (docs/analysis.md
 * defines every number; docs/report-json.md the JSON form; docs/schema.md
 * the database).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"

static const char usage_text[] =
	"usage: memtrace report [OPTIONS] FILE...\n"
	"\n"
	"Loads one or more traces (the processes of one run, the ranks of several\n"
	"nodes) into an SQLite database and reports on the GPU memory they used:\n"
	"the peak per device and who held it, what was held but unused (cached),\n"
	"leak candidates, fragmentation and failed allocations.\n"
	"\n"
	"options:\n"
	"  --db PATH         the database (default: FILE.db beside the first trace;\n"
	"                    reused when it holds exactly these traces, unchanged)\n"
	"  --no-db           analyze without writing a database\n"
	"  --json            the same report as JSON (see docs/report-json.md)\n"
	"  --sysroot DIR     look for the recorded binaries under DIR first\n"
	"  --debug-dir DIR   look for debug files by build id under DIR/.build-id\n"
	"\n"
	"exit status: 0 success, 1 invalid trace or runtime error, 2 usage error or\n"
	"missing file\n";

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

int cmd_report(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline p;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	int nfiles = 0, json = 0, only_files = 0, status;
	char err[1024];

	if (!files) {
		cli_error("out of memory");
		return 1;
	}
	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_files || a[0] != '-' || !a[1]) {
			files[nfiles++] = argv[i];
		} else if (cli_is_help(a)) {
			fputs(usage_text, stdout);
			free(files);
			return 0;
		} else if (!strcmp(a, "--")) {
			only_files = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--no-db")) {
			o.no_db = 1;
		} else if (!strcmp(a, "--db") || !strcmp(a, "--sysroot") || !strcmp(a, "--debug-dir")) {
			if (i + 1 >= argc) {
				free(files);
				return cli_usage_error("report", "%s needs an argument", a);
			}
			if (!strcmp(a, "--db"))
				o.db_path = argv[++i];
			else if (!strcmp(a, "--sysroot"))
				o.sym.sysroot = argv[++i];
			else
				o.sym.debug_dir = argv[++i];
		} else {
			free(files);
			return cli_usage_error("report", "unknown option '%s'", a);
		}
	}
	if (!nfiles) {
		free(files);
		return cli_usage_error("report", "no trace FILE given");
	}
	if (pipeline_run(&p, files, nfiles, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		pipeline_free(&p);
		free(files);
		return status;
	}
	status = (json ? report_json(&p.r, stdout) : report_text(&p.r, stdout)) ? 1 : 0;
	pipeline_free(&p);
	free(files);
	return status;
}
