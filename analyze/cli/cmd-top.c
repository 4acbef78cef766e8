/*
 * cmd-top.c - memtrace top [--once [--json | --bytes]] [--sites N] [--interval S]
 * [--metrics-port [ADDR:]PORT] [--metrics-textfile DIR] [--metrics-top-sites K]
 * (TRACE | --dir DIR): watches a job's GPU and host memory while it runs,
 * from its traces as they grow (analyze/live/).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "live/watch.h"
#include "memtrace/trace-format.h"
#include "trace/trace-read.h"

static const char usage_text[] =
	"usage: memtrace top [OPTIONS] (TRACE | --dir DIR)\n"
	"\n"
	"Watches a running job's GPU memory by device, process and site, with each\n"
	"process's host memory, from its traces as they grow. TRACE is the trace of\n"
	"the first process (trace.bin): its workers' traces beside it (trace.PID.bin)\n"
	"are followed as they appear. The traced program pays nothing for it.\n"
	"\n"
	"  --dir DIR                  follow every trace in DIR\n"
	"  --once                     print one frame of what is written now, and exit\n"
	"  --json                     with --once: the frame as JSON (docs/top.md)\n"
	"  --bytes                    text frames: sizes in bytes\n"
	"  --sites N                  text frames: at most N sites (default 20, -1 all)\n"
	"  --interval S               seconds between frames (default 1)\n"
	"  --metrics-port [ADDR:]PORT serve /metrics for Prometheus (127.0.0.1 unless\n"
	"                             ADDR is given)\n"
	"  --metrics-textfile DIR     write DIR/memtrace.prom for node_exporter's\n"
	"                             textfile collector every interval\n"
	"  --metrics-top-sites K      sites in the metrics (default 10)\n"
	"  --metrics-linger S         once the job is over, serve its last figures on\n"
	"                             /metrics for S more seconds (default 30, 0: none)\n"
	"  --sysroot DIR, --debug-dir DIR  where to find the binaries' symbols\n"
	"\n"
	"Keys: s sort sites by bytes, count or growth; p next process; d next device;\n"
	"m mark (growth since now); space pause; q quit. Series: docs/metrics.md.\n";

enum { OPT_DIR = 1, OPT_ONCE, OPT_JSON, OPT_BYTES, OPT_SITES, OPT_INTERVAL, OPT_PORT, OPT_TEXTFILE,
       OPT_TOPK, OPT_LINGER };

/* Seconds as milliseconds, 0.05 to 3600; -1 when s is not one. */
int cli_interval_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || !(v >= 0.05 && v <= 3600))
		return -1;
	return (int)(v * 1000 + 0.5);
}

/*
 * --once on TRACE: the trace must be there now, and be one, as `memtrace
 * report` wants it: checked by the reader's own trace_open() (every slab
 * and record), so a trace report refuses is refused here with the same
 * line, and the damage a trace survived is warned as report warns it; 0,
 * or the exit status after one error line: 2 when it cannot be opened, 1
 * when it is not a valid trace. (Without --once, a trace not there yet is
 * waited for: the job may be starting.)
 */
static int once_trace_ok(const char *path)
{
	char magic[sizeof(((struct mt_file_header *)0)->magic)], err[1024];
	struct trace *t;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		cli_error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		cli_error("cannot read '%s': not a file", path);
		return EXIT_USAGE;
	}
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n > 0 && memcmp(magic, MT_MAGIC, (size_t)n)) {
		cli_error("'%s': not a memtrace trace (bad magic)", path);
		return 1;
	}
	if (!(t = trace_open(path, err, sizeof(err)))) {
		cli_error("%s", err);
		return 1;
	}
	for (unsigned i = 0; trace_warning(t, i, err, sizeof(err)) == 0; i++)
		cli_warn("%s", err);
	trace_close(t);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ "sites", required_argument, NULL, OPT_SITES },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "metrics-port", required_argument, NULL, OPT_PORT },
		{ "metrics-textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "metrics-top-sites", required_argument, NULL, OPT_TOPK },
		{ "metrics-linger", required_argument, NULL, OPT_LINGER },
		{ "help", no_argument, NULL, 'h' },
		CLI_SYM_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	struct watch_opts o = { 0 };
	char err[512], *end;
	struct stat st;
	int c;

	o.max_sites = 20;
	o.interval_ms = 1000;
	o.top_sites = 10;
	o.linger_ms = 30000;
	o.stop_fd = o.ready_fd = -1;
	o.screen = 1;
	optind = 0;
	while ((c = cli_getopt("top", argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_DIR:
			o.dir = optarg;
			break;
		case OPT_ONCE:
			o.once = 1;
			break;
		case OPT_JSON:
			o.json = 1;
			break;
		case OPT_BYTES:
			o.bytes = 1;
			break;
		case OPT_SITES:
			o.max_sites = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || o.max_sites < -1)
				return cli_usage_error("top", "bad --sites '%s'", optarg);
			break;
		case OPT_INTERVAL:
			if ((o.interval_ms = cli_interval_ms(optarg)) < 0)
				return cli_usage_error("top", "bad --interval '%s' (seconds, 0.05 to 3600)",
						       optarg);
			break;
		case OPT_PORT: {
			char a[64];
			int port;

			if (watch_parse_addr(optarg, a, sizeof(a), &port, err, sizeof(err)))
				return cli_usage_error("top", "%s", err);
			o.metrics_addr = optarg;
			break;
		}
		case OPT_TEXTFILE:
			if (stat(optarg, &st) || !S_ISDIR(st.st_mode))
				return cli_usage_error("top", "--metrics-textfile: '%s' is not a folder",
						       optarg);
			o.textfile_dir = optarg;
			break;
		case OPT_TOPK:
			o.top_sites = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || o.top_sites < 0 || o.top_sites > 1000)
				return cli_usage_error("top", "bad --metrics-top-sites '%s' (0 to 1000)",
						       optarg);
			break;
		case OPT_LINGER: {
			double v = strtod(optarg, &end);

			if (!*optarg || *end || !(v >= 0 && v <= 86400))
				return cli_usage_error("top", "bad --metrics-linger '%s' (seconds, 0 to 86400)",
						       optarg);
			o.linger_ms = (int)(v * 1000 + 0.5);
			break;
		}
		case OPT_SYSROOT: case OPT_DEBUG_DIR:
			cli_sym_option(c, optarg, &o.sym);
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (o.json && !o.once)
		return cli_usage_error("top", "--json goes with --once");
	if (o.dir && optind < argc)
		return cli_usage_error("top", "give a TRACE or --dir DIR, not both");
	if (!o.dir && optind + 1 != argc)
		return cli_usage_error("top", optind < argc ? "one TRACE at most" :
				       "a TRACE or --dir DIR is needed");
	if (!o.dir)
		o.trace = argv[optind];
	if (!o.dir && o.once && (c = once_trace_ok(o.trace)))
		return c;
	if (watch_run(&o, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	return 0;
}
