/*
 * memtrace.c - main() of the memtrace command: dispatches to the
 * subcommands through one table, and prints the top-level usage.
 *
 * Exit status, for every subcommand: 0 success, 1 runtime error (a bad or
 * corrupt trace, a failed write), 2 usage error or missing file. `memtrace
 * run` exits with the traced command's status instead (128+N when signal N
 * killed it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "run", cmd_run, "run a command and record its CUDA memory calls" },
	{ "dump", cmd_dump, "print every record of a trace, one per line" },
	{ "report", cmd_report, "load traces into SQLite and report on their GPU memory" },
	{ "diff", cmd_diff, "compare two runs: what changed on each device, and where" },
	{ "plot", cmd_plot, "draw the memory timeline, address map and top sites" },
	{ "view", cmd_view, "write the run as one interactive HTML page" },
	{ "export", cmd_export, "write the run for Perfetto, flame graphs or PyTorch's memory_viz" },
	{ "check", cmd_check, "hold the run's GPU memory to rules, for CI (exit 1 when one fails)" },
	{ "top", cmd_top, "watch a running job's GPU and host memory, by device, process and site" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace [--help] [--version] COMMAND [ARGS...]\n"
		"\n"
		"Records the GPU memory a CUDA program allocates and frees, and analyzes it.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n"
		"'memtrace help COMMAND' or 'memtrace COMMAND --help' describes one command.\n"
		"\n"
		"exit status: 0 success, 1 runtime error (e.g. a bad trace), 2 usage error\n"
		"or missing file; 'memtrace run' exits with the command's status\n"
		"(128+N when signal N killed it)\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* memtrace help [COMMAND]: the command's own --help. */
static int help(int argc, char **argv)
{
	const struct command *c;
	char help_arg[] = "--help";
	char *args[3] = { NULL, help_arg, NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (argc > 2)
		return cli_usage_error(NULL, "help: too many arguments");
	c = find_command(argv[1]);
	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
	args[0] = argv[1];
	return c->fn(2, args);
}

int main(int argc, char **argv)
{
	const struct command *c;
	const char *arg;
	int status;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	arg = argv[1];
	if (cli_is_help(arg))
		status = help(1, argv + 1);
	else if (!strcmp(arg, "--version"))
		status = printf("memtrace %s\n", MEMTRACE_VERSION) < 0;
	else if (!strcmp(arg, "help"))
		status = help(argc - 1, argv + 1);
	else if (arg[0] == '-')
		return cli_usage_error(NULL, "unknown option '%s'", arg);
	else if ((c = find_command(arg)))
		status = c->fn(argc - 1, argv + 1);
	else
		return cli_usage_error(NULL, "unknown command '%s'", arg);

	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write the output: %s", strerror(errno ? errno : EIO));
		return 1;
	}
	return status;
}
