/*
 * cli.c - message helpers shared by the subcommands (kept out of memtrace.c
 * so the unit tests, which link every analyzer object but main's, can call
 * the cmd_* functions too).
 *
 * Messages are lowercase, without a final period, and quote their subject:
 *   memtrace: cannot open 'trace.bin': No such file or directory
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

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
