/*
 * cmd.h - the subcommands of the memtrace command and the few helpers they
 * share for messages and common options.
 *
 * Each subcommand lives in its own cmd-NAME.c and is called with argv[0] =
 * NAME. It prints its usage on stdout and returns 0 for -h/--help, and
 * returns the command's exit status: 0 success, 1 runtime error (a bad
 * trace, a failed write), 2 usage error or missing file; `run` returns the
 * traced command's status instead.
 */
#ifndef MEMTRACE_CMD_H
#define MEMTRACE_CMD_H

#include <getopt.h>

#define EXIT_USAGE 2

struct sym_opts;

/*
 * --sysroot DIR and --debug-dir DIR, which every command that resolves
 * symbols takes: their codes (above any command's own), their entries
 * for an option table, and cli_sym_option(), which stores the value of
 * either in o.
 */
enum { OPT_SYSROOT = 1000, OPT_DEBUG_DIR };
#define CLI_SYM_OPTIONS \
	{ "sysroot", required_argument, NULL, OPT_SYSROOT }, \
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR }
void cli_sym_option(int c, const char *arg, struct sym_opts *o);

int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* cmd-top.c: seconds ("0.5") as milliseconds, 0.05 s to 1 h; -1 if not. */
int cli_interval_ms(const char *s);

/* "memtrace: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "memtrace: warning: " + message + newline on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * "memtrace: " + message + " (try 'memtrace CMD --help')" on stderr, for
 * usage errors; cmd NULL points to 'memtrace --help'. Returns EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when arg is -h or --help. */
int cli_is_help(const char *arg);
/*
 * getopt_long for the subcommands, so that every option takes the forms
 * users type: --opt=V, --opt V, -oV, -o V, and -- ends the options. The
 * optstring starts with ':' ("+:" to stop at the first non-option, as run
 * does). Set optind = 0 before the first call. Returns the option, -1 after
 * the last one, or '?' after printing the usage error line for cmd (an
 * unknown, ambiguous or incomplete option): the caller returns EXIT_USAGE.
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *optstring,
	       const struct option *longopts);
/* cmd-plot.c: gnuplot in PATH, and the folder of the gnuplot scripts beside
   the executable (../scripts or ../share/memtrace); 0 found, -1 not. */
int cli_find_gnuplot(char *buf, size_t len);
int cli_find_scripts(char *buf, size_t len);

#endif
