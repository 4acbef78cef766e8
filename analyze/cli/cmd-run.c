/*
 * cmd-run.c - memtrace run [-o FILE] [--depth N] [--no-follow]
 * [--no-summary] [--no-torch] [--torch-snapshot] [--check RULES]
 * [--junit FILE] [--json] [--require-trace] [--preload LIB] [--] CMD...:
 * runs CMD with libmemtrace.so preloaded, then each --preload LIB (and
 * memtrace's Python bootstrap first on PYTHONPATH, for PyTorch's
 * allocator history: docs/torch.md), waits
 * for it, sums up the run from its traces (the analysis of `memtrace
 * report`, without a database) or lists them, and exits with CMD's status
 * (when CMD succeeded: 3 for --require-trace without a trace, else the
 * status of `memtrace check` for --check).
 *
 * The command talks to the library only through the MEMTRACE_* variables of
 * docs/environment.md. It picks a random MEMTRACE_RUN_ID, which the library
 * writes into every trace header: after the run, the files named like the
 * output (STEM.bin, STEM.*.bin) whose header holds that id are this run's,
 * whatever else lies in the directory.
 *
 * Before starting CMD it checks what it can: the library exists, the output
 * directory is writable, and the output path is either free or a stale
 * memtrace trace (removed, since the library never overwrites a file). It
 * refuses with one line and exit 2 rather than run a command whose trace
 * would be lost.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/pipeline.h"
#include "live/watch.h"
#include "model/check.h"
#include "trace/trace-read.h"
#include "views/format.h"

#define LIB_NAME "libmemtrace.so"
#define DEFAULT_OUTPUT "trace.bin"
#define MAX_DEPTH_OPT 256

static const char usage_text[] =
	"usage: memtrace run [-o FILE] [--depth N] [--no-follow] [--no-summary] [--] CMD [ARGS...]\n"
	"\n"
	"Runs CMD with libmemtrace.so preloaded and records its CUDA memory calls.\n"
	"\n"
	"  -o, --output FILE  trace of the first process (default: trace.bin here);\n"
	"                     other processes write STEM.PID.bin beside it\n"
	"  --depth N          native frames per backtrace, 0 to 256 (default 64,\n"
	"                     0 records no stacks)\n"
	"  --no-follow        trace only the first process, not its descendants\n"
	"  --no-summary       list the traces written instead of the summary\n"
	"  --no-torch         do not record PyTorch's allocator history (tensors)\n"
	"  --torch-snapshot   also keep PyTorch's memory snapshot of each process\n"
	"                     that used it, as STEM.PID.torch.pickle\n"
	"  --check RULES      then hold the traces to RULES, a rules file or one\n"
	"                     rule such as 'peak <= 8GiB' (repeat for more; see\n"
	"                     'memtrace check --help')\n"
	"  --junit FILE       with --check: also write its results as JUnit XML\n"
	"  --json             with --check: its results as JSON on stdout\n"
	"  --require-trace    fail (exit 3) when nothing was traced\n"
	"  --preload LIB      also preload LIB, another LD_PRELOAD tool (repeat for\n"
	"                     more); LD_PRELOAD is libmemtrace.so, then each LIB in\n"
	"                     the order given, then LD_PRELOAD as it was\n"
	"  --top              watch the run with 'memtrace top' on this terminal; CMD's\n"
	"                     output goes to --top-output FILE (default STEM.out)\n"
	"  --metrics-port [ADDR:]PORT  serve the run's figures on /metrics for\n"
	"                     Prometheus (127.0.0.1 unless ADDR; PORT 0: any)\n"
	"  --metrics-textfile DIR  write DIR/memtrace.prom for node_exporter\n"
	"  --metrics-interval S  seconds between frames of --top and the metrics (1)\n"
	"  --metrics-top-sites K  sites in the metrics (default 10)\n"
	"  --metrics-linger S  once the run is over, keep serving its last figures\n"
	"                     on /metrics for S seconds, from a process of its own\n"
	"                     (default 0: the endpoint ends with the run)\n"
	"\n"
	"Options end at CMD: what follows is CMD's, options included. They take\n"
	"their value as --opt=V or --opt V (-oFILE or -o FILE).\n"
	"\n"
	"A stale trace at FILE is replaced; any other file there is left alone and\n"
	"the run refused. When CMD has exited, a summary on stderr gives for each\n"
	"device the peak reserved, what was live at exit and the failed\n"
	"allocations (as 'memtrace report' counts them), then the traces written\n"
	"and the command that reports on them:\n"
	"  memtrace: device 0: peak 112 MiB, live at exit 20.0 MiB, 0 failed allocations\n"
	"  memtrace: wrote trace.bin (1 process); next: memtrace report trace.bin\n"
	"\n"
	"exit status: CMD's status, 128+N when signal N killed it, 127 when CMD\n"
	"cannot be found, 126 when it cannot be run; 2 usage error (before CMD runs);\n"
	"when CMD exited 0: 3 with --require-trace when nothing was traced, and\n"
	"with --check the check's status (0 passed, 1 a rule failed, 2 bad rules)\n";

struct options {
	const char *output;
	const char *depth;          /* NULL: the environment's or the default */
	int no_follow;
	int no_summary;
	int no_torch;
	int torch_snapshot;
	int require_trace;
	char **checks;              /* --check RULES, argc entries at most */
	int nchecks;
	char **preloads;            /* --preload LIB, absolute when a path */
	int npreloads;
	const char *junit;          /* --junit FILE, for the check */
	int top;                    /* --top: the live view on this terminal */
	const char *top_output;     /* --top-output FILE: CMD's output then */
	const char *metrics_port;   /* --metrics-port [ADDR:]PORT */
	const char *metrics_textfile;
	int metrics_interval_ms, metrics_top_sites;
	int metrics_linger_ms;      /* --metrics-linger, ms (0: none) */
	int json;                   /* --json, for the check */
	char **cmd;
};

/* Where the traces go, worked out from -o. */
struct outpath {
	char abs[PATH_MAX];         /* absolute output path */
	char dir[PATH_MAX];         /* absolute directory */
	char shown_dir[PATH_MAX];   /* the directory as the user wrote it, with '/', or "" */
	const char *base;           /* file name of the output, in abs */
	char stem[NAME_MAX + 1];    /* base without ".bin" */
};

static volatile sig_atomic_t child_pid;
static time_t run_started;          /* when CMD was started */

enum { OPT_DEPTH = 256, OPT_NO_FOLLOW, OPT_NO_SUMMARY, OPT_NO_TORCH, OPT_TORCH_SNAPSHOT,
       OPT_CHECK, OPT_REQUIRE_TRACE, OPT_JUNIT, OPT_JSON, OPT_PRELOAD, OPT_TOP, OPT_TOP_OUTPUT,
       OPT_METRICS_PORT, OPT_METRICS_TEXTFILE, OPT_METRICS_INTERVAL, OPT_METRICS_TOP_SITES,
       OPT_METRICS_LINGER };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
	{ "no-summary", no_argument, NULL, OPT_NO_SUMMARY },
	{ "no-torch", no_argument, NULL, OPT_NO_TORCH },
	{ "torch-snapshot", no_argument, NULL, OPT_TORCH_SNAPSHOT },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "require-trace", no_argument, NULL, OPT_REQUIRE_TRACE },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "preload", required_argument, NULL, OPT_PRELOAD },
	{ "top", no_argument, NULL, OPT_TOP },
	{ "top-output", required_argument, NULL, OPT_TOP_OUTPUT },
	{ "metrics-port", required_argument, NULL, OPT_METRICS_PORT },
	{ "metrics-textfile", required_argument, NULL, OPT_METRICS_TEXTFILE },
	{ "metrics-interval", required_argument, NULL, OPT_METRICS_INTERVAL },
	{ "metrics-top-sites", required_argument, NULL, OPT_METRICS_TOP_SITES },
	{ "metrics-linger", required_argument, NULL, OPT_METRICS_LINGER },
	{ NULL, 0, NULL, 0 },
};

/* --top and --metrics-*: 0, or -1 after the usage error line. */
static int live_option(int c, const char *arg, struct options *o)
{
	char addr[64], err[256], *end;
	struct stat st;
	int port;

	switch (c) {
	case OPT_TOP:
		o->top = 1;
		return 0;
	case OPT_TOP_OUTPUT:
		if (!*arg)
			return cli_usage_error("run", "empty --top-output file name"), -1;
		o->top_output = arg;
		return 0;
	case OPT_METRICS_PORT:
		if (watch_parse_addr(arg, addr, sizeof(addr), &port, err, sizeof(err)))
			return cli_usage_error("run", "--metrics-port: %s", err), -1;
		o->metrics_port = arg;
		return 0;
	case OPT_METRICS_TEXTFILE:
		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			return cli_usage_error("run", "--metrics-textfile: '%s' is not a folder", arg), -1;
		o->metrics_textfile = arg;
		return 0;
	case OPT_METRICS_INTERVAL:
		if ((o->metrics_interval_ms = cli_interval_ms(arg)) < 0)
			return cli_usage_error("run", "bad --metrics-interval '%s' (seconds, 0.05 to 3600)",
					       arg), -1;
		return 0;
	case OPT_METRICS_LINGER: {
		double v = strtod(arg, &end);

		if (!*arg || *end || !(v >= 0 && v <= 86400))
			return cli_usage_error("run", "bad --metrics-linger '%s' (seconds, 0 to 86400)",
					       arg), -1;
		o->metrics_linger_ms = (int)(v * 1000 + 0.5);
		return 0;
	}
	default:
		o->metrics_top_sites = (int)strtol(arg, &end, 10);
		if (!*arg || *end || o->metrics_top_sites < 0 || o->metrics_top_sites > 1000)
			return cli_usage_error("run", "bad --metrics-top-sites '%s' (0 to 1000)", arg), -1;
		return 0;
	}
}

/*
 * The watcher of --top and --metrics-*: a child process of the launcher
 * that runs memtrace top's loop (live/watch.h) on the run's traces, so the
 * program never waits for it and the launcher only forks it and, once the
 * program is over, closes its stop pipe and waits for its last frame.
 * Returns its pid (0: none wanted), or -1 after saying why.
 */
static pid_t start_watcher(const struct options *o, const struct outpath *op, uint64_t run_id,
			   int *stop_fd)
{
	int stop[2], ready[2];
	struct watch_opts w = { 0 };
	char line[32], err[512];
	ssize_t n;
	pid_t pid;

	*stop_fd = -1;
	if (!o->top && !o->metrics_port && !o->metrics_textfile)
		return 0;
	if (pipe2(stop, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) {
		cli_error("cannot start the watcher: %s", strerror(errno));
		return -1;
	}
	w.trace = op->abs;
	w.run_id = run_id;
	w.screen = o->top;
	w.max_sites = 20;
	w.interval_ms = o->metrics_interval_ms ? o->metrics_interval_ms : 1000;
	w.metrics_addr = o->metrics_port;
	w.textfile_dir = o->metrics_textfile;
	w.top_sites = o->metrics_top_sites ? o->metrics_top_sites : 10;
	w.linger_ms = o->metrics_linger_ms;
	w.stop_fd = stop[0];
	w.ready_fd = ready[1];
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error("cannot start the watcher: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* the terminal's ^C is for the program; the run's end stops us */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		/*
		 * The view shares the program's process group (so ^C and ^Z
		 * reach the program as they would without memtrace). When that
		 * group is not the terminal's foreground one (a plain
		 * `timeout`, which makes its own group; `&`; `bg`), the
		 * kernel stops the whole group, the program with it, on the
		 * view's first change of the terminal's modes (SIGTTOU) or read
		 * (SIGTTIN). Ignored here: the modes change, reads fail, nobody
		 * stops. And a view that starts in the background reads no
		 * keys and draws text frames instead (stdin /dev/null).
		 */
		signal(SIGTTOU, SIG_IGN);
		signal(SIGTTIN, SIG_IGN);
		if (o->top && isatty(0) && tcgetpgrp(0) != getpgrp()) {
			int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

			if (nul >= 0 && dup2(nul, 0) == 0)
				close(nul);
		}
		close(stop[1]);
		close(ready[0]);
		if (watch_run(&w, err, sizeof(err))) {
			cli_error("%s", err);
			_exit(1);
		}
		_exit(0);
	}
	close(stop[0]);
	close(ready[1]);
	/* listening before the program starts, or failed */
	do
		n = read(ready[0], line, sizeof(line) - 1);
	while (n < 0 && errno == EINTR);
	close(ready[0]);
	if (n <= 0) {
		close(stop[1]);
		waitpid(pid, NULL, 0);
		return -1;
	}
	line[n] = 0;
	if (o->metrics_port) {
		char addr[64];
		int port;

		watch_parse_addr(o->metrics_port, addr, sizeof(addr), &port, err, sizeof(err));
		cli_error("serving metrics on http://%s:%d/metrics", addr, atoi(line));
	}
	*stop_fd = stop[1];
	return pid;
}

/* CMD's output file with --top: --top-output, or STEM.out beside the trace. */
static int top_output(const struct options *o, const struct outpath *op)
{
	char path[PATH_MAX + NAME_MAX + 8];
	int fd;

	if (o->top_output)
		snprintf(path, sizeof(path), "%s", o->top_output);
	else
		snprintf(path, sizeof(path), "%s%s.out", op->shown_dir, op->stem);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		cli_error("cannot write '%s': %s", path, strerror(errno));
	else
		cli_error("the output of '%s' goes to %s", o->cmd[0], path);
	return fd;
}

/*
 * 0, 1 for --help, or -EXIT_USAGE after the usage error line. The '+'
 * stops at CMD: what follows it are CMD's own options.
 */
static int parse_options(int argc, char **argv, struct options *o)
{
	char *end;
	long d;
	int c;

	memset(o, 0, sizeof(*o));
	o->output = DEFAULT_OUTPUT;
	o->preloads = calloc((size_t)argc + 1, sizeof(char *));
	if (!o->preloads || !(o->checks = calloc((size_t)argc + 1, sizeof(char *)))) {
		cli_error("out of memory");
		return -1;
	}
	optind = 0;
	while ((c = cli_getopt("run", argc, argv, "+:ho:", long_options)) != -1) {
		switch (c) {
		case 'h':
			return 1;
		case 'o':
			if (!*optarg)
				return -cli_usage_error("run", "empty output file name");
			o->output = optarg;
			break;
		case OPT_DEPTH:
			errno = 0;
			d = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || d < 0 || d > MAX_DEPTH_OPT)
				return -cli_usage_error("run", "bad --depth '%s': expected a number from 0 to %d",
							optarg, MAX_DEPTH_OPT);
			o->depth = optarg;
			break;
		case OPT_NO_FOLLOW:
			o->no_follow = 1;
			break;
		case OPT_NO_SUMMARY:
			o->no_summary = 1;
			break;
		case OPT_NO_TORCH:
			o->no_torch = 1;
			break;
		case OPT_TORCH_SNAPSHOT:
			o->torch_snapshot = 1;
			break;
		case OPT_CHECK: {
			/* bad rules are a usage error before CMD runs */
			struct chk_rules rs = { NULL, 0, NULL, 0 };
			char err[1024];
			struct stat st;
			int bad = stat(optarg, &st) == 0 ?
				check_rules_load(&rs, optarg, err, sizeof(err)) :
				check_rule_add(&rs, optarg, err, sizeof(err));

			check_rules_free(&rs);
			if (bad)
				return -cli_usage_error("run", "--check: %s", err);
			o->checks[o->nchecks++] = optarg;
			break;
		}
		case OPT_REQUIRE_TRACE:
			o->require_trace = 1;
			break;
		case OPT_JUNIT:
			if (!*optarg)
				return -cli_usage_error("run", "empty --junit file name");
			o->junit = optarg;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_PRELOAD: {
			/* a path made absolute (children may chdir); a bare name is
			   the loader's to find */
			char *lib = strchr(optarg, '/') ? realpath(optarg, NULL) : strdup(optarg);

			if (!lib)
				return -cli_usage_error("run", "cannot preload '%s': %s", optarg, strerror(errno));
			if (!*lib || strpbrk(lib, ": \t\n"))
				return -cli_usage_error("run", "cannot preload '%s': LD_PRELOAD cannot hold "
							"an empty name or one with ':' or blanks", optarg);
			o->preloads[o->npreloads++] = lib;
			break;
		}
		case OPT_TOP: case OPT_TOP_OUTPUT: case OPT_METRICS_PORT: case OPT_METRICS_TEXTFILE:
		case OPT_METRICS_INTERVAL: case OPT_METRICS_TOP_SITES: case OPT_METRICS_LINGER:
			if (live_option(c, optarg, o))
				return -EXIT_USAGE;
			break;
		default:
			return -EXIT_USAGE;
		}
	}
	if ((o->junit || o->json) && !o->nchecks)
		return -cli_usage_error("run", "--junit and --json are the check's: they need --check RULES");
	if (optind >= argc)
		return -cli_usage_error("run", "no command given");
	o->cmd = argv + optind;
	return 0;
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The library beside this executable (the build tree), else the installed
 * layout PREFIX/bin/memtrace + PREFIX/lib/memtrace/libmemtrace.so.
 * Returns 0 with the canonical path in lib, or -1 after saying why.
 */
static int find_library(char *lib, size_t len)
{
	char exe[PATH_MAX], a[PATH_MAX + 64], b[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		cli_error("cannot find the memtrace executable: %s", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(a, sizeof(a), "%s/%s", exe, LIB_NAME);
	snprintf(b, sizeof(b), "%s/../lib/memtrace/%s", exe, LIB_NAME);
	if (!is_file(a) && !is_file(b)) {
		cli_error("cannot find %s: looked for '%s' and '%s'", LIB_NAME, a, b);
		return -1;
	}
	if (!realpath(is_file(a) ? a : b, exe)) {
		cli_error("cannot find %s: %s", LIB_NAME, strerror(errno));
		return -1;
	}
	/* LD_PRELOAD splits on both. */
	if (strpbrk(exe, ": \t\n")) {
		cli_error("cannot preload '%s': LD_PRELOAD cannot hold a path with ':' or blanks", exe);
		return -1;
	}
	snprintf(lib, len, "%s", exe);
	return 0;
}

/*
 * memtrace's Python bootstrap (sitecustomize.py) beside the library:
 * LIBDIR/python installed, LIBDIR/../python in the build tree. Fills dir
 * and returns 0, or -1 (the run then goes on without it).
 */
static int find_python_dir(const char *lib, char *dir, size_t len)
{
	static const char *const rel[] = { "python", "../python" };
	char base[PATH_MAX], try_[PATH_MAX + 32], real[PATH_MAX];
	char *slash;

	snprintf(base, sizeof(base), "%s", lib);
	slash = strrchr(base, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(try_, sizeof(try_), "%s/%s/sitecustomize.py", base, rel[i]);
		if (!is_file(try_) || !realpath(try_, real))
			continue;
		slash = strrchr(real, '/');
		*slash = '\0';
		/* PYTHONPATH splits on ':' */
		if (strchr(real, ':'))
			return -1;
		snprintf(dir, len, "%s", real);
		return 0;
	}
	return -1;
}

/*
 * The Python side's part of the contract (docs/environment.md): the
 * bootstrap first on PYTHONPATH, MEMTRACE_TORCH=1 and MEMTRACE_CLI (this
 * command, for the pytest plugin), unless --no-torch or
 * MEMTRACE_TORCH=0 already. PYTHONPATH stays set for the command's own
 * children (spawn workers, torchrun ranks).
 */
static void set_python_env(const struct options *o, const char *lib)
{
	const char *env = getenv("MEMTRACE_TORCH"), *old = getenv("PYTHONPATH");
	char dir[PATH_MAX], *path;
	size_t len;

	if (o->no_torch || (env && !strcmp(env, "0"))) {
		setenv("MEMTRACE_TORCH", "0", 1);
		return;
	}
	if (find_python_dir(lib, dir, sizeof(dir)) < 0)
		return;
	len = strlen(dir) + (old ? strlen(old) : 0) + 2;
	path = malloc(len);
	if (!path)
		return;
	if (old && *old)
		snprintf(path, len, "%s:%s", dir, old);
	else
		snprintf(path, len, "%s", dir);
	setenv("PYTHONPATH", path, 1);
	free(path);
	setenv("MEMTRACE_TORCH", "1", 1);
	/* the pytest plugin reads the trace so far with this very command */
	if (realpath("/proc/self/exe", dir))
		setenv("MEMTRACE_CLI", dir, 1);
	if (o->torch_snapshot)
		setenv("MEMTRACE_TORCH_SNAPSHOT", "1", 1);
}

/*
 * NVTX (docs/units.md): NVTX v3 loads the library NVTX_INJECTION64_PATH
 * names at a program's first NVTX call, so it names libmemtrace.so, which
 * is preloaded already: dlopen() finds that instance. A user's own
 * injection library (Nsight's, a tool of theirs) set before goes on in
 * MEMTRACE_NVTX_CHAIN: memtrace loads it and passes every call on. A
 * nested `memtrace run` keeps the chain its parent set.
 */
static void set_nvtx_env(const char *lib)
{
	const char *old = getenv("NVTX_INJECTION64_PATH");

	if (old && *old) {
		char *a = realpath(old, NULL), *b = realpath(lib, NULL);
		int same = a && b ? !strcmp(a, b) : !strcmp(old, lib);

		free(a);
		free(b);
		if (!same)
			setenv("MEMTRACE_NVTX_CHAIN", old, 1);
	} else {
		unsetenv("MEMTRACE_NVTX_CHAIN");
	}
	setenv("NVTX_INJECTION64_PATH", lib, 1);
}

static int make_outpath(const char *output, struct outpath *op)
{
	char cwd[PATH_MAX];
	char *slash;
	size_t n;

	if (output[0] == '/') {
		n = (size_t)snprintf(op->abs, sizeof(op->abs), "%s", output);
	} else {
		if (!getcwd(cwd, sizeof(cwd))) {
			cli_error("cannot find the current directory: %s", strerror(errno));
			return -1;
		}
		n = (size_t)snprintf(op->abs, sizeof(op->abs), "%s/%s", cwd, output);
	}
	if (n >= sizeof(op->abs)) {
		cli_error("output path too long: '%s'", output);
		return -1;
	}
	slash = strrchr(op->abs, '/');
	op->base = slash + 1;
	if (!*op->base || !strcmp(op->base, ".") || !strcmp(op->base, "..")) {
		cli_error("cannot write '%s': not a file name", output);
		return -1;
	}
	n = (size_t)(slash - op->abs);
	memcpy(op->dir, op->abs, n ? n : 1);
	op->dir[n ? n : 1] = '\0';

	slash = strrchr(output, '/');
	n = slash ? (size_t)(slash - output) + 1 : 0;
	memcpy(op->shown_dir, output, n);
	op->shown_dir[n] = '\0';

	snprintf(op->stem, sizeof(op->stem), "%s", op->base);
	n = strlen(op->stem);
	if (n > 4 && !strcmp(op->stem + n - 4, ".bin"))
		op->stem[n - 4] = '\0';
	return 0;
}

/* 1 when path is a regular file that starts with the trace magic. */
static int is_stale_trace(const char *path)
{
	char magic[sizeof(MT_MAGIC) - 1];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;
	struct stat st;

	if (fd < 0)
		return 0;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, magic, sizeof(magic)) : -1;
	close(fd);
	return n == (ssize_t)sizeof(magic) && !memcmp(magic, MT_MAGIC, sizeof(magic));
}

/* The directory is writable and the output name free. 0, or -1 after saying why. */
static int prepare_output(const char *output, const struct outpath *op)
{
	struct stat st;

	if (stat(op->dir, &st) < 0) {
		cli_error("cannot write to '%s': %s", op->dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("cannot write to '%s': %s", op->dir, strerror(ENOTDIR));
		return -1;
	}
	if (access(op->dir, W_OK | X_OK) < 0) {
		cli_error("cannot write to '%s': %s", op->dir, strerror(errno));
		return -1;
	}
	if (lstat(op->abs, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		cli_error("cannot write '%s': %s", output, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		cli_error("cannot write '%s': %s", output, strerror(EISDIR));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !is_stale_trace(op->abs)) {
		cli_error("'%s' exists and is not a memtrace trace; not overwriting it", output);
		return -1;
	}
	if (unlink(op->abs) < 0) {
		cli_error("cannot remove the old trace '%s': %s", output, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Random, non-zero (0 means "no run"), and below 2^63 so that the library
 * parses it the same with strtoll or strtoull.
 */
static uint64_t new_run_id(void)
{
	uint64_t id = 0;

	while ((id &= INT64_MAX) == 0) {
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
			     ((uint64_t)getpid() << 40);
		}
	}
	return id;
}

/* A shell's status for a command it could not run. */
static int exec_status(int e)
{
	return e == ENOENT || e == ENOTDIR ? 127 : 126;
}

/* In the child: the MEMTRACE_* contract and LD_PRELOAD, then exec. */
/*
 * In the child: the MEMTRACE_* contract and LD_PRELOAD, then exec. When exec
 * fails, its errno goes up the close-on-exec pipe fd so the parent can tell
 * "CMD not found" from CMD exiting 127.
 */
static void exec_child(const struct options *o, const struct outpath *op, const char *lib,
		       uint64_t run_id, int fd)
{
	char num[32], *preload;
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2, at;
	int e;

	for (int i = 0; i < o->npreloads; i++)
		len += strlen(o->preloads[i]) + 1;

	snprintf(num, sizeof(num), "%ld", (long)getpid());
	setenv("MEMTRACE_ROOT_PID", num, 1);
	setenv("MEMTRACE_OUTPUT", op->abs, 1);
	if (o->depth)
		setenv("MEMTRACE_DEPTH", o->depth, 1);
	else
		setenv("MEMTRACE_DEPTH", "64", 0);
	if (o->no_follow)
		setenv("MEMTRACE_FOLLOW", "0", 1);
	else
		setenv("MEMTRACE_FOLLOW", "1", 0);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)run_id);
	setenv("MEMTRACE_RUN_ID", num, 1);

	preload = malloc(len);
	if (preload) {
		at = (size_t)snprintf(preload, len, "%s", lib);
		for (int i = 0; i < o->npreloads; i++)
			at += (size_t)snprintf(preload + at, len - at, ":%s", o->preloads[i]);
		if (old && *old)
			snprintf(preload + at, len - at, ":%s", old);
		setenv("LD_PRELOAD", preload, 1);
	}
	set_python_env(o, lib);
	set_nvtx_env(lib);

	execvp(o->cmd[0], o->cmd);
	e = errno;
	if (write(fd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		cli_error("cannot run '%s': %s", o->cmd[0], strerror(e));
	_exit(exec_status(e));
}

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/*
 * Runs the command; returns its wait status, or -1 after saying why. *exec_err
 * is the errno of a failed exec, else 0.
 */
static int run_child(const struct options *o, const struct outpath *op, const char *lib,
		     uint64_t run_id, int *exec_err)
{
	struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
	int status, fds[2], stop_fd, out_fd = -1;
	pid_t pid, r, watcher;
	ssize_t n;

	*exec_err = 0;
	if (o->top && (out_fd = top_output(o, op)) < 0)
		return -1;
	if ((watcher = start_watcher(o, op, run_id, &stop_fd)) < 0) {
		if (out_fd >= 0)
			close(out_fd);
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		cli_error("cannot run '%s': %s", o->cmd[0], strerror(errno));
		return -1;
	}

	/* Like system(3): the terminal's ^C and ^\ are for the command. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(NULL);

	pid = fork();
	if (pid < 0) {
		cli_error("cannot run '%s': %s", o->cmd[0], strerror(errno));
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		if (out_fd >= 0 && (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0))
			_exit(126);
		exec_child(o, op, lib, run_id, fds[1]);
	}
	close(fds[1]);

	/* A kill of memtrace itself goes to the command, so the run ends. */
	child_pid = pid;
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = forward_signal;
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);

	do
		n = read(fds[0], exec_err, sizeof(*exec_err));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n != (ssize_t)sizeof(*exec_err))
		*exec_err = 0;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);

	child_pid = 0;
	if (watcher > 0) {
		/* its last frame: everything written, then it ends */
		close(stop_fd);
		while (waitpid(watcher, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (out_fd >= 0)
		close(out_fd);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (r < 0) {
		cli_error("cannot wait for '%s': %s", o->cmd[0], strerror(errno));
		return -1;
	}
	return status;
}

struct written {
	char name[NAME_MAX + 1];
	uint32_t pid;
	uint64_t events;
	int is_output;
};

static int cmp_written(const void *pa, const void *pb)
{
	const struct written *a = pa, *b = pb;

	if (a->is_output != b->is_output)
		return b->is_output - a->is_output;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* STEM.bin (the output itself) or STEM.*.bin. */
static int is_trace_name(const struct outpath *op, const char *name)
{
	size_t n = strlen(name), s = strlen(op->stem);

	if (!strcmp(name, op->base))
		return 1;
	return n > s + 5 && !strncmp(name, op->stem, s) && name[s] == '.' &&
	       !strcmp(name + n - 4, ".bin");
}

/* The note the recorder leaves in a trace cut under it (preload/writer.c). */
#define CUT_NOTE "trace cut by another process"

/*
 * 1 when t was cut by another process while the recorder wrote it (a log
 * rotation's copytruncate, `: > trace.bin`): the recorder then wrote its
 * header back (nothing else is left), or a note after what is left.
 */
static int was_cut(struct trace *t, const struct stat *st, int *nothing_left)
{
	uint32_t n;
	const void *const *notes = trace_long_records(t, MT_REC_NOTE, &n);

	*nothing_left = (uint64_t)st->st_size < trace_header(t)->header_size;
	if (*nothing_left)
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		struct trace_bytes b = trace_note_text(notes[i]);

		if (b.len >= sizeof(CUT_NOTE) - 1 && !memcmp(b.p, CUT_NOTE, sizeof(CUT_NOTE) - 1))
			return 1;
	}
	return 0;
}

/* Opens DIR/NAME if it is one of this run's traces and records it in w. */
static int check_trace(const struct outpath *op, const char *name, uint64_t run_id,
		       struct written *w)
{
	char path[PATH_MAX + NAME_MAX + 2], err[512];
	struct mt_file_header hdr;
	struct trace *t;
	struct stat st;
	int fd, cut, nothing_left;
	ssize_t n;

	/* the directory as the user wrote it, so messages name the file that way */
	snprintf(path, sizeof(path), "%s%s", op->shown_dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, &hdr, sizeof(hdr)) : -1;
	close(fd);
	if (n >= 0 && n < (ssize_t)sizeof(hdr) && st.st_mtime >= run_started) {
		/* emptied after the recorder's last store: nothing said it */
		cli_warn("'%s' was cut to %lld bytes while the program ran or after (log rotation "
			 "with copytruncate, or ': >'?): its records are lost", path, (long long)n);
		return 0;
	}
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr.magic, MT_MAGIC, sizeof(hdr.magic)) ||
	    hdr.run_id != run_id)
		return 0;

	t = trace_open(path, err, sizeof(err));
	if (!t) {
		cli_warn("%s", err);
		return 0;
	}
	/* a cut trace: one line that says what happened, instead of the
	   reader's about what is missing */
	cut = was_cut(t, &st, &nothing_left);
	if (cut)
		cli_warn("'%s' was cut by another process while pid %u ran (log rotation with "
			 "copytruncate, or ': >'?): %s; tracing stopped there, the program went on",
			 path, (unsigned)hdr.pid, nothing_left ? "its records are lost" :
			 "the records after the cut are lost");
	for (unsigned i = 0; trace_warning(t, i, err, sizeof(err)) == 0; i++)
		if (!cut || (!strstr(err, "truncated") && !strstr(err, "holds no records")))
			cli_warn("%s", err);
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->pid = trace_header(t)->pid;
	w->events = trace_stats(t)->events;
	w->is_output = !strcmp(name, op->base);
	trace_close(t);
	return 1;
}

/* A trace's path as the user wrote the output's directory. */
static void shown_path(const struct outpath *op, const struct written *w, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", op->shown_dir, w->name);
}

/* " PATH", in single quotes when a shell would split or expand it. */
static void shell_word(FILE *f, const char *path)
{
	if (*path && !path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				     "0123456789_./+-=:,@%")]) {
		fprintf(f, " %s", path);
		return;
	}
	fputs(" '", f);
	for (; *path; path++) {
		if (*path == '\'')
			fputs("'\\''", f);
		else
			fputc(*path, f);
	}
	fputc('\'', f);
}

static void ignore_warning(const char *msg)
{
	(void)msg;      /* check_trace has said it already */
}

/*
 * The figures a person looks at first, from the analysis `memtrace report`
 * runs (without a database): per device the peak reserved, what was live
 * at exit and the failed allocations, then the traces and the command that
 * reports on them. 0, or -1 after one warning saying why not.
 */
static int summarize(const struct outpath *op, const struct written *list, size_t n)
{
	struct pipeline_opts po;
	struct pipeline p;
	char **files = calloc(n, sizeof(char *));
	char err[1024], a[32], b[32], dn[256], *next = NULL;
	size_t nproc = 0, len = 0;
	FILE *cmd = open_memstream(&next, &len);
	int status, rc = -1;

	memset(&po, 0, sizeof(po));
	po.no_db = 1;
	po.devices_only = 1;        /* resolving symbols would cost more than the run */
	if (!files || !cmd)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + NAME_MAX + 2];
		size_t j = 0;

		shown_path(op, &list[i], path, sizeof(path));
		if (!(files[i] = strdup(path)))
			goto nomem;
		shell_word(cmd, path);
		while (j < i && list[j].pid != list[i].pid)
			j++;
		nproc += j == i;        /* a pid not seen before (exec keeps it) */
	}
	if (fclose(cmd) != 0) {
		cmd = NULL;
		goto nomem;
	}
	cmd = NULL;
	if (pipeline_run(&p, files, (int)n, &po, ignore_warning, &status, err, sizeof(err))) {
		cli_warn("no summary of the run: %s", err);
		pipeline_free(&p);
		goto out;
	}
	for (int g = 0; g < p.r.ngdevs; g++) {
		int di = p.r.gdevs[g], nprocs = 0;
		const struct an_dev *d = &p.a->devs[di];
		uint64_t failed = 0;

		for (int i = 0; i < p.a->ndevs; i++)
			nprocs += p.a->devs[i].gdev == di;
		for (uint32_t i = 0; i < p.a->nfailures; i++) {
			const struct an_failure *f = &p.a->failures[i];
			int pd = f->dev >= 0 && f->dev < AN_MAX_DEV ? p.a->procs[f->proc].pdev[f->dev] : -1;

			failed += pd >= 0 && p.a->devs[pd].gdev == di;
		}
		cli_error("%s: peak %s, %s at exit %s, %s%" PRIu64 " failed allocation%s",
			  rep_dev_name(&p.r, d, dn, sizeof(dn)),
			  rep_size(a, sizeof(a), d->peak.reserved), nprocs > 1 ? "left" : "live",
			  rep_size(b, sizeof(b), d->left_at_exit),
			  p.a->failures_total > p.a->nfailures ? "at least " : "", failed,
			  failed == 1 ? "" : "s");
	}
	pipeline_free(&p);
	if (n == 1)
		cli_error("wrote %s%s (%zu process); next: memtrace report%s", op->shown_dir,
			  list[0].name, nproc, next);
	else
		cli_error("wrote %zu traces (%zu process%s); next: memtrace report%s", n, nproc,
			  nproc == 1 ? "" : "es", next);
	rc = 0;
	goto out;
nomem:
	cli_warn("no summary of the run: out of memory");
out:
	if (cmd)
		fclose(cmd);
	free(next);
	for (size_t i = 0; files && i < n; i++)
		free(files[i]);
	free(files);
	return rc;
}

/*
 * Says what the run wrote on stderr: the summary, or with --no-summary (or
 * when the summary cannot be made) one line per trace.
 */
static size_t report_written(const struct options *o, const struct outpath *op, uint64_t run_id,
			     char ***paths)
{
	struct written *list = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(op->dir);

	if (!d) {
		cli_error("cannot read '%s': %s", op->dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		if (!is_trace_name(op, de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown)
				break;
			list = grown;
		}
		n += check_trace(op, de->d_name, run_id, &list[n]);
	}
	closedir(d);

	if (n == 0)
		cli_error("no CUDA memory calls were traced; no trace written");
	else
		qsort(list, n, sizeof(*list), cmp_written);
	if (n && (o->no_summary || summarize(op, list, n) < 0))
		for (size_t i = 0; i < n; i++)
			cli_error("wrote %s%s (pid %u, %llu event%s)", op->shown_dir, list[i].name,
				  list[i].pid, (unsigned long long)list[i].events,
				  list[i].events == 1 ? "" : "s");
	/* the traces' paths, for --check */
	if (paths && n && (*paths = calloc(n, sizeof(char *))))
		for (size_t i = 0; i < n; i++) {
			char path[PATH_MAX + NAME_MAX + 2];

			shown_path(op, &list[i], path, sizeof(path));
			if (!((*paths)[i] = strdup(path)))
				n = i;
		}
	free(list);
	return n;
}

/*
 * --check: `memtrace check` with each RULES (a file: --rules, else one
 * rule) on the n traces; its exit status.
 */
static int run_check(const struct options *o, char **paths, size_t n)
{
	char **argv = calloc(2 * (size_t)o->nchecks + n + 6, sizeof(char *));
	int argc = 0, rc;
	struct stat st;

	if (!argv) {
		cli_error("out of memory");
		return 1;
	}
	argv[argc++] = "check";
	for (int i = 0; i < o->nchecks; i++) {
		argv[argc++] = stat(o->checks[i], &st) == 0 ? "--rules" : "--rule";
		argv[argc++] = o->checks[i];
	}
	if (o->junit) {
		argv[argc++] = "--junit";
		argv[argc++] = (char *)o->junit;
	}
	if (o->json)
		argv[argc++] = "--json";
	argv[argc++] = "--";
	for (size_t i = 0; i < n; i++)
		argv[argc++] = paths[i];
	fflush(stderr);
	rc = cmd_check(argc, argv);
	free(argv);
	return rc;
}

static void free_options(struct options *o)
{
	for (int i = 0; o->preloads && i < o->npreloads; i++)
		free(o->preloads[i]);
	free(o->preloads);
	free(o->checks);
}

int cmd_run(int argc, char **argv)
{
	struct options o;
	struct outpath op;
	char lib[PATH_MAX];
	uint64_t run_id;
	int r, status, exec_err;
	char **paths = NULL;
	size_t n;

	r = parse_options(argc, argv, &o);
	if (r) {
		free_options(&o);
		if (r > 0)
			fputs(usage_text, stdout);
		return r > 0 ? 0 : -r;
	}
	if (find_library(lib, sizeof(lib)) < 0 || make_outpath(o.output, &op) < 0 ||
	    prepare_output(o.output, &op) < 0) {
		free_options(&o);
		return EXIT_USAGE;
	}

	run_id = new_run_id();
	run_started = time(NULL);
	status = run_child(&o, &op, lib, run_id, &exec_err);
	if (status < 0) {
		free_options(&o);
		return 1;
	}
	if (exec_err) {
		cli_error("cannot run '%s': %s", o.cmd[0], strerror(exec_err));
		free_options(&o);
		return exec_status(exec_err);
	}
	n = report_written(&o, &op, run_id, &paths);
	if (WIFSIGNALED(status))
		status = 128 + WTERMSIG(status);
	else
		status = WEXITSTATUS(status);
	/* the program's failure first; then nothing traced; then the check */
	if (status == 0 && !n && o.require_trace) {
		cli_error("--require-trace: the program made no CUDA memory call");
		status = 3;
	} else if (status == 0 && o.nchecks && !n) {
		cli_error("--check: nothing was traced to check");
		status = 2;
	} else if (status == 0 && o.nchecks) {
		status = run_check(&o, paths, n);
	}
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free_options(&o);
	return status;
}
