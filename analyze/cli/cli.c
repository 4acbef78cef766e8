/*
 * cli.c - message helpers shared by the subcommands (kept out of memtrace.c
 * so the unit tests, which link every analyzer object but main's, can call
 * the cmd_* functions too).
 *
 * Messages are lowercase, without a final period, and quote their subject:
 *   memtrace: cannot open 'trace.bin': No such file or directory
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/progress.h"
#include "model/symbols.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fflush(stdout);
	fputs("memtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fflush(stdout);
	fputs("memtrace: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fflush(stdout);
	fputs("memtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'memtrace %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* The long option as typed, without its "=VALUE". */
static const char *long_name(const char *arg, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
	return buf;
}

/* How many long options start with name (after its "--"). */
static int prefix_matches(const struct option *longopts, const char *name)
{
	size_t n = strlen(name + 2);
	int k = 0;

	for (; longopts && longopts->name; longopts++)
		k += !strncmp(longopts->name, name + 2, n);
	return k;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
	       const struct option *longopts)
{
	char name[128];
	const char *arg;
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* after a long option getopt has moved past it; a short one is named by optopt */
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (c == ':') {
		if (!strncmp(arg, "--", 2))
			long_name(arg, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "-%c", optopt);
		cli_usage_error(cmd, "option '%s' needs a value", name);
	} else if (optopt > 0 && optopt < 256 &&
		   (optopt == ':' || optopt == ';' || !strchr(optstring, optopt))) {
		cli_usage_error(cmd, "unknown option '-%c'", optopt);
	} else if (optopt) {
		cli_usage_error(cmd, "option '%s' takes no value",
				long_name(arg, name, sizeof(name)));
	} else if (prefix_matches(longopts, long_name(arg, name, sizeof(name))) > 1) {
		cli_usage_error(cmd, "ambiguous option '%s'", name);
	} else {
		cli_usage_error(cmd, "unknown option '%s'", name);
	}
	return '?';
}

void cli_sym_option(int c, const char *arg, struct sym_opts *o)
{
	if (c == OPT_SYSROOT)
		o->sysroot = arg;
	else if (c == OPT_DEBUG_DIR)
		o->debug_dir = arg;
}
