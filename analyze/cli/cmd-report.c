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
	"leak candidates, fragmentation and failed allocations. A run of more than\n"
	"8 processes gets a table of its ranks by host and device instead of a\n"
	"section each, with the highest peak and the failed or killed ranks\n"
	"flagged; full sections only for those and the 3 highest peaks.\n"
	"\n"
	"The database is what makes a first report slower (docs/schema.md): --no-db\n"
	"when only the report is wanted.\n"
	"\n"
	"options:\n"
	"  --db PATH         the database (default: FILE.db beside the first trace;\n"
	"                    reused when it holds exactly these traces, unchanged)\n"
	"  --no-db           analyze without writing a database\n"
	"  --json            the same report as JSON (see docs/report-json.md)\n"
	"  --sysroot DIR     look for the recorded binaries under DIR first\n"
	"  --debug-dir DIR   look for debug files by build id under DIR/.build-id\n"
	"\n"
	"Options take their value as --opt=V or --opt V, anywhere before '--'.\n"
	"\n"
	"When stderr is a terminal and the work takes more than a second, one line\n"
	"there shows its progress (\"memtrace: loading 42%\"), cleared at the end.\n"
	"\n"
	"exit status: 0 success, 1 invalid trace or runtime error, 2 usage error or\n"
	"missing file\n";

enum { OPT_JSON = 256, OPT_NO_DB, OPT_DB };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-db", no_argument, NULL, OPT_NO_DB },
	{ "db", required_argument, NULL, OPT_DB },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

int cmd_report(int argc, char **argv)
{
	struct pipeline_opts o;
	struct pipeline p;
	char **files;
	int nfiles, json = 0, status, c;
	char err[1024];

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = cli_getopt("report", argc, argv, ":h", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_NO_DB:
			o.no_db = 1;
			break;
		case OPT_DB:
			o.db_path = optarg;
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
		return cli_usage_error("report", "no trace FILE given");
	if (pipeline_run(&p, files, nfiles, &o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		pipeline_free(&p);
		return status;
	}
	status = (json ? report_json(&p.r, stdout) : report_text(&p.r, stdout)) ? 1 : 0;
	pipeline_free(&p);
	return status;
}
