/*
 * cmd-check.c - memtrace check [RULE...] [-r RULE] [--rules FILE]
 * [-s leak:GLOB] [--baseline FILE|FILE.json] [--json] [--junit FILE] FILE...: holds
 * the run's figures to rules (model/check.h) and exits 1 when one is
 * broken, so that a CI step fails with a line that says what to fix.
 * docs/check.md is the user's documentation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "model/check.h"

#define DEFAULT_RULES ".memtrace.ini"

static const char usage_text[] =
	"usage: memtrace check [OPTIONS] [RULE...] FILE...\n"
	"\n"
	"Holds the GPU memory of a run (its traces, FILE...) to rules, and fails\n"
	"when one is broken: one line per broken rule with the figure, the device\n"
	"or process and the top site (function at file:line).\n"
	"\n"
	"A rule is 'name op value' (quote it for the shell), for example:\n"
	"  peak <= 8GiB            peak reserved over all devices at once\n"
	"  peak[dev0] <= 8GiB      on device 0; [pid:N] or [rank:N] for a process\n"
	"  allocated_peak <= 6GiB  allocated at each device's peak\n"
	"  live_at_exit <= 0       left live at exit, less the suppressions and a\n"
	"                          caching allocator's cache (as the leak candidates)\n"
	"  failures == 0           failed allocations\n"
	"  oom_retries == 0        out-of-memory retries (fail, free, retry)\n"
	"  untraced <= 1GiB        device memory nobody's call explains, at the peak\n"
	"  shm_left == 0           bytes left in /dev/shm\n"
	"  peak <= baseline + 5%   against the same figure of --baseline\n"
	"PyTorch's, from its allocator's records (a run without them fails these):\n"
	"  tensor_peak_allocated <= 6GiB  PyTorch's peak allocated, per device\n"
	"  requested_peak <= 6GiB  its peak of requested bytes, per device\n"
	"  tensor_live_at_exit <= 0  tensor leak candidates' bytes left at exit\n"
	"  ooms == 0               out-of-memory errors; oom_fragmentation,\n"
	"                          oom_other_stream, oom_device_full, oom_outside:\n"
	"                          those with that verdict\n"
	"  drain_share <= 2%       the drains' share of the run\n"
	"The program's own units (NVTX ranges, markers, pytest tests; a scope that\n"
	"matches nothing fails):\n"
	"  peak[range:forward] <= 20GiB  the highest of the range's instances\n"
	"                          ([phase:NAME] the same; NAME may be a glob)\n"
	"  peak[step:3] <= 8GiB    a step; [step:3-200] the highest of those steps\n"
	"  leaked[test:*] <= 0     held more at a test's end than at its start, one\n"
	"                          result per pytest test whose nodeid matches\n"
	"  growth_per_step <= 0    reserved at a step's end, per step (signed);\n"
	"                          first_step_excess: the first step's peak over\n"
	"                          the others' median; both take [step:A-B]\n"
	"\n"
	"options:\n"
	"  -r, --rule RULE         a rule (as positional RULE)\n"
	"  --rules FILE            rules and suppressions from an INI file; without\n"
	"                          any rule, ./" DEFAULT_RULES " is read when present\n"
	"  -s, --suppress leak:GLOB  memory kept on purpose: the stacks with a frame\n"
	"                          whose function, file or module matches GLOB are\n"
	"                          left out of live_at_exit\n"
	"  --baseline FILE         the baseline run's trace (repeat for each process),\n"
	"                          or the JSON of its 'memtrace report --json'\n"
	"  --json                  the results as JSON (see docs/check.md)\n"
	"  --junit FILE            also write the results as JUnit XML to FILE\n"
	"  --sysroot DIR           look for the recorded binaries under DIR first\n"
	"  --debug-dir DIR         look for debug files by build id under DIR/.build-id\n"
	"\n"
	"A trace that lost records (cut, torn, none) or holds a slab twice fails\n"
	"the check whatever the rules say: a gate never passes on lost data.\n"
	"\n"
	"exit status: 0 every rule passed, 1 a rule failed or a trace is damaged,\n"
	"2 usage error, bad rules or a trace that cannot be read\n";

enum { OPT_RULES = 256, OPT_BASELINE, OPT_JSON, OPT_JUNIT };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "rule", required_argument, NULL, 'r' },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "suppress", required_argument, NULL, 's' },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	CLI_SYM_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static void warn(const char *msg)
{
	cli_warn("%s", msg);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* 1 when path starts (after blanks) with '{': a report's JSON, not a
   trace. */
static int is_json(const char *path)
{
	FILE *f = fopen(path, "r");
	int c = EOF;

	if (!f)
		return 0;
	do
		c = getc(f);
	while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
	fclose(f);
	return c == '{';
}

static int analyze(struct pipeline *p, char **files, int n, const struct pipeline_opts *o)
{
	char err[1024];
	int status;

	if (pipeline_run(p, files, n, o, warn, &status, err, sizeof(err))) {
		cli_error("%s", err);
		return -1;
	}
	return 0;
}

int cmd_check(int argc, char **argv)
{
	struct chk_rules rs = { NULL, 0, NULL, 0 };
	struct chk_outcome out = { NULL, 0, 0, NULL, 0 };
	struct pipeline_opts o;
	struct pipeline p, bp;
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	char **base = calloc((size_t)argc + 1, sizeof(char *));
	const char *junit = NULL;
	int nfiles = 0, nbase = 0, json = 0, rules_files = 0, status = EXIT_USAGE, c;
	int have_p = 0, have_bp = 0;
	struct chk_jbase *jbase = NULL;
	char err[1024];

	memset(&o, 0, sizeof(o));
	memset(&p, 0, sizeof(p));
	memset(&bp, 0, sizeof(bp));
	o.no_db = 1;
	if (!files || !base) {
		cli_error("out of memory");
		status = 1;
		goto out;
	}
	optind = 0;
	while ((c = cli_getopt("check", argc, argv, ":hr:s:", long_options)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto out;
		case 'r':
			if (check_rule_add(&rs, optarg, err, sizeof(err)))
				goto bad;
			break;
		case OPT_RULES:
			rules_files++;
			if (check_rules_load(&rs, optarg, err, sizeof(err)))
				goto bad;
			break;
		case 's':
			if (check_supp_add(&rs, optarg, err, sizeof(err)))
				goto bad;
			break;
		case OPT_BASELINE:
			base[nbase++] = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_JUNIT:
			junit = optarg;
			break;
		case OPT_SYSROOT:
		case OPT_DEBUG_DIR:
			cli_sym_option(c, optarg, &o.sym);
			break;
		default:
			goto out;
		}
	}
	for (; optind < argc; optind++) {
		const char *a = argv[optind];

		if (check_is_rule(a) && !exists(a)) {
			if (check_rule_add(&rs, a, err, sizeof(err)))
				goto bad;
		} else {
			files[nfiles++] = argv[optind];
		}
	}
	if (!rs.n && !rules_files && exists(DEFAULT_RULES) &&
	    check_rules_load(&rs, DEFAULT_RULES, err, sizeof(err)))
		goto bad;
	if (!rs.n) {
		status = cli_usage_error("check", "no rule given (RULE, -r, --rules or ./"
					 DEFAULT_RULES ")");
		goto out;
	}
	if (!nfiles) {
		status = cli_usage_error("check", "no trace FILE given");
		goto out;
	}
	if (check_has_relative(&rs) && !nbase) {
		status = cli_usage_error("check", "a rule against the baseline needs --baseline FILE");
		goto out;
	}
	if (analyze(&p, files, nfiles, &o))
		goto out;
	have_p = 1;
	for (int i = 0; i < nbase; i++) {
		if (!is_json(base[i]))
			continue;
		if (nbase > 1) {
			status = cli_usage_error("check", "--baseline '%s' is a report's JSON: give "
						 "it alone, not with traces", base[i]);
			goto out;
		}
		if (check_jbase_load(base[i], &jbase, err, sizeof(err)))
			goto bad;
	}
	if (nbase && !jbase) {
		if (analyze(&bp, base, nbase, &o))
			goto out;
		have_bp = 1;
	}
	if (check_eval_with(&rs, &p.r, have_bp ? &bp.r : NULL, jbase, &out, err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	if (junit) {
		FILE *f = fopen(junit, "w");

		if (!f || check_junit(&rs, &out, &p.r, f) || fclose(f)) {
			cli_error("cannot write '%s'", junit);
			goto out;
		}
	}
	if (json ? check_json(&rs, &out, &p.r, stdout) : check_text(&rs, &out, &p.r, stdout))
		goto out;
	fflush(stdout);
	status = out.failed ? 1 : 0;
	goto out;
bad:
	cli_error("%s", err);
out:
	check_outcome_free(&out);
	check_rules_free(&rs);
	check_jbase_free(jbase);
	if (have_p)
		pipeline_free(&p);
	if (have_bp)
		pipeline_free(&bp);
	free(files);
	free(base);
	return status;
}
