/*
 * check.h - `memtrace check`: rules over the figures of a run (peak,
 * allocated_peak, live_at_exit, failures, oom_retries, untraced, shm_left;
 * the steps': growth_per_step, first_step_excess (signed bytes); of a
 * range, a step or a test: leaked;
 * and PyTorch's: tensor_peak_allocated, requested_peak,
 * tensor_live_at_exit, ooms and their verdicts, drain_share), suppressions
 * of memory kept on purpose until exit, and their evaluation.
 *
 * Every figure is read from the run model (struct report and its analysis,
 * its framework layer, as docs/analysis.md defines them); nothing is
 * recomputed here, except that live_at_exit leaves out what suppressions
 * hide and, as the report's leak candidates do, what a caching allocator
 * held at exit (its cache). The program's own units (model/ranges.h) are
 * scopes too: [range:NAME], [step:N], [step:A-B], [test:GLOB]; their
 * figures are the ranges model's instances' (peak, tensor_peak_allocated,
 * leaked; of steps also growth_per_step and first_step_excess).
 * docs/check.md is the user's side: syntax, scopes, output, exit status.
 *
 * Functions return 0 / -1 (NULL) with a message in err; they never print.
 */
#ifndef MEMTRACE_CHECK_H
#define MEMTRACE_CHECK_H

#include <stdint.h>

#include "model/report.h"

struct rg_inst;

enum chk_metric {
	CHK_PEAK, CHK_ALLOCATED_PEAK, CHK_LIVE_AT_EXIT, CHK_FAILURES, CHK_OOM_RETRIES,
	CHK_UNTRACED, CHK_SHM_LEFT,
	/* the program's steps (model/ranges.h), signed bytes, the run's only */
	CHK_GROWTH_PER_STEP,        /* reserved at a step's end, per step */
	CHK_FIRST_STEP_EXCESS,      /* first step's peak - the others' median */
	CHK_LEAKED,                 /* of an instance: held more at its end than
	                               at its start (the report's tests' leaked) */
	/* the framework's (PyTorch's caching allocator, model/framework.h) */
	CHK_TENSOR_PEAK_ALLOCATED,  /* allocated_bytes at its peak, per device */
	CHK_REQUESTED_PEAK,         /* requested_bytes at its peak, per device */
	CHK_TENSOR_LIVE_AT_EXIT,    /* tensor leak candidates' bytes left at exit */
	CHK_OOMS,                   /* out-of-memory errors, any verdict */
	CHK_OOM_FRAGMENTATION,      /* ... whose verdict is each of enum fw_verdict */
	CHK_OOM_OTHER_STREAM,
	CHK_OOM_FULL,
	CHK_OOM_OUTSIDE,
	CHK_DRAIN_SHARE,            /* the drains' time over the run's duration */
	/* categories at the process's peak of allocated (model/categories.h),
	   in the order of enum cat */
	CHK_PARAMETERS_PEAK,
	CHK_GRADIENTS_PEAK,
	CHK_OPTIMIZER_STATE_PEAK,
	CHK_ACTIVATIONS_PEAK,
	CHK_TEMPORARIES_PEAK,
	CHK_NMETRICS
};
#define CHK_FW_FIRST CHK_TENSOR_PEAK_ALLOCATED
/* CHK_RANGE and after: the program's units (model/ranges.h) */
enum chk_scope { CHK_ALL, CHK_DEV, CHK_PID, CHK_RANK, CHK_RANGE, CHK_STEP, CHK_TEST };
enum chk_op { CHK_LE, CHK_LT, CHK_GE, CHK_GT, CHK_EQ, CHK_NE };

struct chk_rule {
	char *text;                 /* as written, normalized: "peak[dev0] <= 8GiB" */
	enum chk_metric metric;
	enum chk_scope scope;
	long scope_n;               /* device index, pid or rank */
	char *scope_name;           /* [range:NAME], [test:GLOB]: NAME, GLOB */
	uint32_t step_from, step_to;        /* [step:A-B] (A-A for [step:A]) */
	enum chk_op op;
	int relative;               /* limit = baseline's figure + add + pct */
	uint64_t limit;             /* absolute limit (bytes or a count) */
	uint64_t add;               /* relative: bytes (or count) added, or taken
	                               away when sub (the limit saturates at 0
	                               and UINT64_MAX) */
	int sub;
	double pct;                 /* relative: percent of the baseline added */
	double share;               /* drain_share: the limit, a fraction of the
	                               run (written as a percent) */
};

/*
 * The expression parser of check's rules and of diff's --fail-if (one, so
 * that both take and refuse the same things): "name[scope] op value". A
 * value is a number in decimal (never nan, inf, hex or a sign) with an
 * optional unit (B, KiB/K, MiB/M, GiB/G, TiB/T, KB, MB, GB, TB), below
 * 2^64 bytes; or, where allowed, "N%" or "baseline [+|- N[%|unit]]".
 */
struct chk_syntax {
	const char *const *names;   /* the figures */
	const char *const *alt;     /* other names of the same figures, or NULL */
	int nnames;
	int scopes;                 /* [devN], [dev:N], [pid:N], [rank:N] and the
	                               units' [range:NAME] ([phase:NAME]),
	                               [step:N], [step:A-B], [test:GLOB] taken */
	unsigned ops;               /* the operators taken: 1u << enum chk_op */
	int baseline;               /* "baseline [+|- N[%|unit]]" taken */
	int pct;                    /* a plain "N%" taken */
};
struct chk_expr {
	int fig;                    /* index in names */
	enum chk_scope scope;
	long scope_n;
	const char *scope_name;     /* [range:NAME], [test:GLOB]: in text */
	size_t scope_len;
	uint32_t step_from, step_to;
	enum chk_op op;
	int relative;               /* baseline ... */
	int neg;                    /* baseline - ... */
	int pct;                    /* value is a percent */
	double value;               /* bytes or a count, the unit applied (0 for
	                               a bare baseline) */
	uint64_t bytes;             /* the same, not a percent: rounded to an
	                               integer, exact for an integer */
	const char *value_text;     /* the value as written, in the text */
};
/* 0, or -1 with what is wrong in err ("unknown figure 'pek'; did you mean
   'peak'?"), without the expression itself. */
int check_expr_parse(const char *text, const struct chk_syntax *sx, struct chk_expr *e,
		     char *err, size_t errlen);

/* Memory kept on purpose: "leak:GLOB", matched on every frame's function,
   file (path or base name) and module (path or base name) with fnmatch. */
struct chk_supp {
	char *text;                 /* "leak:keep_loss" */
	char *glob;
	uint64_t bytes, count;      /* what it hid (filled by check_eval) */
};

struct chk_rules {
	struct chk_rule *r;
	int n;
	struct chk_supp *s;
	int ns;
};

#define CHK_LEAKS 3              /* tensor leak candidates a result names */

/* One figure a rule was checked against (one per device for the rules
   that are per device). */
struct chk_result {
	const struct chk_rule *rule;
	int pass;
	uint64_t value;             /* the figure */
	uint64_t limit;             /* the limit it was held to (relative: worked out) */
	uint64_t baseline;          /* relative: the baseline's figure */
	int has_baseline;
	int dev;                    /* device index, -1 none */
	int proc;                   /* process index, -1 none (the run) */
	uint64_t suppressed;        /* live_at_exit: bytes hidden by suppressions */
	uint64_t cached;            /* live_at_exit: bytes a caching allocator held
	                               at exit (its cache, not a leak: left out) */
	/* drain_share: the figure and its limit as fractions of the run */
	int is_share;
	double share, share_limit;
	/* the top site: where to look first; none when st, site and fws are
	   all NULL. site: a CUDA-level site (named by rep_site_name); else st,
	   a call path (rep_stack_name, nframes of it); fws: a tensor site
	   (fw_site_name) */
	const struct sym_stack *st;
	const struct site *site;
	int nframes;
	const struct fw_site *fws;
	const struct fw_oom *oom;   /* an OOM rule: the first of them */
	uint64_t site_bytes;
	/* tensor_live_at_exit: the tensor leak candidates left at exit, the
	   largest first (fws is leaks[0]) */
	struct { const struct fw_site *s; uint64_t bytes, count; } leaks[CHK_LEAKS];
	int nleaks;
	/* a signed figure (the steps'): svalue, held to the limit as a signed
	   number; value is unused */
	int is_signed;
	int64_t svalue;
	/* a unit scope's: the instance the figure is of (the test, or the one
	   with the highest figure), NULL none */
	const struct rg_inst *in;
	const char *what;           /* the figure in words: "peak reserved" */
	char missing[512];          /* not "": the figure does not exist (why) */
};

/*
 * The results: one per rule (or per device), then one failed result for
 * each damage a trace of the run or of the baseline survived (its
 * trace_warning(): records cut off, torn or missing), whose rule is
 * damage[k] ("trace intact") and missing the warning: a gate never
 * passes on lost data.
 */
struct chk_outcome {
	struct chk_result *v;
	int n, failed;
	struct chk_rule *damage;
	int ndamage;
};

/* A rule "name op value", e.g. "peak[rank:1] <= baseline + 5%". */
int check_rule_add(struct chk_rules *rs, const char *text, char *err, size_t errlen);
/* A suppression "leak:GLOB". */
int check_supp_add(struct chk_rules *rs, const char *text, char *err, size_t errlen);
/* The rules and suppressions of an INI file (docs/check.md). */
int check_rules_load(struct chk_rules *rs, const char *path, char *err, size_t errlen);
void check_rules_free(struct chk_rules *rs);
/* 1 when text looks like a rule, right or wrong (it has a comparison:
   <, >, ==, != or a '=' beside a blank): to be parsed as one, not taken
   for a file name. */
int check_is_rule(const char *text);
int check_has_relative(const struct chk_rules *rs);

/* Evaluates every rule on r; base (NULL: none) is the baseline run for the
   relative rules. Fills the suppressions' bytes. */
int check_eval(struct chk_rules *rs, const struct report *r, const struct report *base,
	       struct chk_outcome *out, char *err, size_t errlen);
/* The same with the baseline given as the JSON of `memtrace report --json`
   (check-base.c) when jbase is not NULL. */
struct chk_jbase;
int check_eval_with(struct chk_rules *rs, const struct report *r, const struct report *base,
		    const struct chk_jbase *jbase, struct chk_outcome *out, char *err,
		    size_t errlen);
void check_outcome_free(struct chk_outcome *o);

/* check-base.c: loads path, a report's JSON of a format_version this
   memtrace reads; the figure of rule for a result on device dev (-1: none)
   into v: 1, or 0 when the JSON does not hold it. */
int check_jbase_load(const char *path, struct chk_jbase **b, char *err, size_t errlen);
void check_jbase_free(struct chk_jbase *b);
int check_jbase_figure(const struct chk_jbase *b, const struct chk_rule *rule, int dev,
		       uint64_t *v);

const char *check_op_name(enum chk_op op);

/* check.c's, for check-units.c: a new result of rule (its words set) at
   the end of o, NULL when out of memory; why a run has no framework
   figure, into x->missing. */
struct chk_result *check_result_add(struct chk_outcome *o, const struct chk_rule *rule, int dev,
				    int proc);
void check_no_framework(const struct report *r, struct chk_result *x);
/* check-units.c: the figures of a rule with a unit scope ([range:],
   [step:], [test:]) or of the steps (growth_per_step, first_step_excess),
   appended to o; -1 when out of memory. */
int check_unit_figures(const struct report *r, const struct chk_rule *rule,
		       struct chk_outcome *o);
/* An instance of a result (x->in), for the views: its name with its
   domain ("io:load", "test_a.py::test_b"), the number of the step it
   was in (its own for a step; -1 none), whether it is a pytest test, one
   of the run's steps. */
const char *check_unit_name(char *buf, size_t len, const struct report *r,
			    const struct rg_inst *in);
int64_t check_unit_step(const struct report *r, const struct rg_inst *in);
int check_unit_is_test(const struct rg_inst *in);
int check_unit_is_step(const struct report *r, const struct rg_inst *in);
/* The run's pytest tests in their order: the next from *i (0 first), NULL
   after the last. */
const struct rg_inst *check_unit_next_test(const struct report *r, uint32_t *i);

/* views/check-*.c */
int check_text(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
	       FILE *f);
int check_json(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
	       FILE *f);
int check_junit(const struct chk_rules *rs, const struct chk_outcome *o, const struct report *r,
		FILE *f);
/* One result in words, without the rule (check-text.c): "live at exit
   20.0 MiB on device 0 ...; top site keep_loss at leak.c:40 (20.0 MiB)". */
void check_describe(FILE *f, const struct report *r, const struct chk_result *x);
/* The top site's name, as every view names it (rep_site_name,
   rep_stack_name, fw_site_name): "keep_loss (leak.c:40) < main (leak.c:83)",
   "py-steps.py:38 step < py-steps.py:46 main"; NULL when x has no site. */
const char *check_site(char *buf, size_t len, const struct report *r, const struct chk_result *x);

#endif
