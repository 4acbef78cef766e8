/*
 * check.c - the rules of `memtrace check` and their evaluation over the
 * run model (check.h).
 *
 * A rule is "name[scope] op value". Its figure comes from the model as
 * `memtrace report` shows it: the peak reserved of a device (gdev), a
 * process (over all its devices) or the run; the allocated bytes and the
 * untraced bytes at a device's peak; what each process left live at its
 * exit; the failed allocations; the out-of-memory retries; the /dev/shm
 * bytes still present at the end. The rules that are per device (allocated
 * peak, untraced) give one result per device when no scope is written.
 * The program's units (a range, a step, a span of steps, pytest tests) and
 * the steps' figures are check-units.c's, from the ranges model; here they
 * are parsed and refused where a figure has no such scope (unit_rule).
 *
 * Suppressions take the bytes of the matching stacks (struct an_site, what
 * each process's stack left live at exit) out of live_at_exit; a stack is
 * hidden by the first suppression that matches one of its frames.
 *
 * The rules file is INI, read with libinih: section [rules] holds one rule
 * a line, [suppressions] lines "leak:GLOB". inih cuts a line at its first
 * '=' or ':', so a rule comes back as name and value; the line is put back
 * together with the character it was cut at: ':' when the cut fell inside
 * a scope's brackets ("peak[pid:42] ..."), '=' otherwise.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <ini.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/check.h"
#include "model/framework.h"
#include "model/ranges.h"
#include "trace/trace-read.h"

static const char *const metric_names[CHK_NMETRICS] = {
	"peak", "allocated_peak", "live_at_exit", "failures", "oom_retries", "untraced",
	"shm_left", "growth_per_step", "first_step_excess", "leaked", "tensor_peak_allocated",
	"requested_peak", "tensor_live_at_exit", "ooms",
	"oom_fragmentation", "oom_other_stream", "oom_device_full", "oom_outside",
	"drain_share", "parameters_peak", "gradients_peak", "optimizer_state_peak",
	"activations_peak", "temporaries_peak",
};
/* other names of the same figures */
static const char *const metric_alt[CHK_NMETRICS] = {
	[CHK_OOM_FRAGMENTATION] = "fragmentation",
};
static const char *const metric_words[CHK_NMETRICS] = {
	"peak reserved", "allocated at the peak", "live at exit", "failed allocations",
	"out-of-memory retries", "untraced at the peak", "left in /dev/shm",
	"growth of reserved per step", "first step's peak over the others' median",
	"leaked (held more at its end than at its start)",
	"PyTorch's peak allocated", "PyTorch's peak requested", "tensors left at exit",
	"PyTorch out-of-memory errors", "out-of-memory errors from fragmentation",
	"out-of-memory errors from cache held by another stream",
	"out-of-memory errors with the device full of tensors",
	"out-of-memory errors from memory outside PyTorch", "drains",
	"parameters at the peak of allocated", "gradients at the peak of allocated",
	"optimizer state at the peak of allocated", "activations at the peak of allocated",
	"temporaries at the peak of allocated",
};
/* the verdict of each CHK_OOM_* rule (0: any) */
static int metric_verdict(enum chk_metric m)
{
	switch (m) {
	case CHK_OOM_FRAGMENTATION: return FW_FRAGMENTATION;
	case CHK_OOM_OTHER_STREAM: return FW_OTHER_STREAM;
	case CHK_OOM_FULL: return FW_FULL;
	case CHK_OOM_OUTSIDE: return FW_OUTSIDE;
	default: return 0;
	}
}
static const char *const op_names[] = { "<=", "<", ">=", ">", "==", "!=" };

const char *check_op_name(enum chk_op op)
{
	return op_names[op];
}

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* --- expressions: "name[scope] op value", for check and diff --fail-if --- */

static const struct { const char *s; double m; } units[] = {
	{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
	{ "TB", 1e12 }, { "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 },
	{ "T", 1099511627776.0 }, { "B", 1.0 },
};

#define TWO_64 18446744073709551616.0

/* v (finite, >= 0) as bytes, rounded down, at most UINT64_MAX. */
static uint64_t to_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= TWO_64)
		return UINT64_MAX;
	return (uint64_t)v;
}

/*
 * A number, digits only in decimal (1, 1.5, 2e9: never nan, inf, hex or a
 * sign), then an optional unit or (when pct) '%'; *out in bytes or a
 * count, *is_pct 1 for a percent. Refuses a value of 2^64 or more.
 */
static int parse_value(const char **pp, int pct, double *out, uint64_t *exact, int *is_pct,
		       const char *what, char *err, size_t errlen)
{
	const char *p = *pp, *s = p;
	char num[64];
	double v, m = 1.0;
	int integer;

	*is_pct = 0;
	if (!isdigit((unsigned char)*p)) {
		const char *q = p;

		while (isalnum((unsigned char)*q) || *q == '_' || *q == '.')
			q++;
		if (*p == '-' && isdigit((unsigned char)p[1]))
			seterr(err, errlen, "a negative value: expected %s", what);
		else if (q > p)
			seterr(err, errlen, "'%.*s' is not a number: expected %s", (int)(q - p), p,
			       what);
		else
			seterr(err, errlen, "expected %s", what);
		return -1;
	}
	while (isdigit((unsigned char)*p))
		p++;
	integer = *p != '.';
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) ||
	    ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2]))))
		for (integer = 0, p += 2; isdigit((unsigned char)*p); p++)
			;
	if ((size_t)(p - s) >= sizeof(num))
		goto range;
	memcpy(num, s, (size_t)(p - s));
	num[p - s] = 0;
	v = strtod(num, NULL);
	p = skip_ws(p);
	if (*p == '%' && pct) {
		*is_pct = 1;
		p++;
	} else {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].s);

			if (!strncmp(p, units[i].s, n) && !isalnum((unsigned char)p[n])) {
				m = units[i].m;
				p += n;
				break;
			}
		}
	}
	v *= m;
	/* an integer times a unit (an integer too) exactly, not as a double
	   (18446744073709551000 is below 2^64; its double is not) */
	if (integer && !*is_pct) {
		unsigned long long u;

		errno = 0;
		u = strtoull(num, NULL, 10);
		if (errno || (uint64_t)m > UINT64_MAX / (u ? u : 1))
			goto range;
		*exact = (uint64_t)u * (uint64_t)m;
	} else if (!isfinite(v) || (!*is_pct && v >= TWO_64)) {
		goto range;
	} else {
		*exact = to_u64(floor(v + 0.5));
	}
	*out = v;
	*pp = p;
	return 0;
range:
	seterr(err, errlen, "'%.*s' is out of range (below 16 EiB, 2^64 bytes)", (int)(p - s), s);
	return -1;
}

static int parse_op(const char **pp, enum chk_op *op)
{
	static const char *const two[] = { "<=", ">=", "==", "!=" };
	static const enum chk_op two_op[] = { CHK_LE, CHK_GE, CHK_EQ, CHK_NE };
	const char *p = *pp;

	for (int i = 0; i < 4; i++)
		if (!strncmp(p, two[i], 2)) {
			*op = two_op[i];
			*pp = p + 2;
			return 0;
		}
	if (*p == '<' || *p == '>') {
		*op = *p == '<' ? CHK_LT : CHK_GT;
		*pp = p + 1;
		return 0;
	}
	return -1;
}

/* The edit distance of a and b (ASCII case ignored), at most 64 bytes each;
   more: a large number. */
static int edit_distance(const char *a, size_t na, const char *b)
{
	size_t nb = strlen(b);
	int row[65];

	if (na > 64 || nb > 64)
		return 1000;
	for (size_t j = 0; j <= nb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int up = row[j], best = diag + (tolower((unsigned char)a[i - 1]) !=
							tolower((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[nb];
}

/* "unknown figure 'pek'; did you mean 'peak'?" or the list of them. */
static void unknown_figure(const char *w, size_t n, const struct chk_syntax *sx, char *err,
			   size_t errlen)
{
	int best = -1, bd = 1000;
	size_t used;

	for (int i = 0; i < sx->nnames; i++)
		for (int k = 0; k < 2; k++) {
			const char *name = k ? (sx->alt ? sx->alt[i] : NULL) : sx->names[i];
			int d = name ? edit_distance(w, n, name) : 1000;

			if (d < bd) {
				bd = d;
				best = i;
			}
		}
	if (n && best >= 0 && bd <= 2 && 2 * bd < (int)strlen(sx->names[best])) {
		seterr(err, errlen, "unknown figure '%.*s'; did you mean '%s'?", (int)n, w,
		       sx->names[best]);
		return;
	}
	if (n)
		seterr(err, errlen, "unknown figure '%.*s' (expected ", (int)n, w);
	else
		seterr(err, errlen, "expected a figure (");
	for (int i = 0; i < sx->nnames && (used = strlen(err)) < errlen; i++)
		snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", sx->names[i]);
	if ((used = strlen(err)) < errlen)
		snprintf(err + used, errlen - used, ")");
}

/* A unit scope's name after "range:" or "test:": up to the ']' that
   closes the scope, brackets inside kept ("test_a.py::test_b[1]"). */
static int scope_name(const char **pp, struct chk_expr *e, char *err, size_t errlen)
{
	const char *p = skip_ws(*pp), *s = p, *end;
	int depth = 1;

	for (; *p; p++)
		if (*p == '[')
			depth++;
		else if (*p == ']' && !--depth)
			break;
	if (!*p) {
		seterr(err, errlen, "the scope has no closing ']'");
		return -1;
	}
	for (end = p; end > s && isspace((unsigned char)end[-1]);)
		end--;
	if (end == s) {
		seterr(err, errlen, "an empty name in the scope");
		return -1;
	}
	e->scope_name = s;
	e->scope_len = (size_t)(end - s);
	*pp = p + 1;
	return 0;
}

/* A step number of [step:N] or [step:A-B]. */
static int step_no(const char **pp, uint32_t *n)
{
	const char *p = skip_ws(*pp);
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || v > UINT32_MAX)
		return -1;
	*n = (uint32_t)v;
	*pp = skip_ws(end);
	return 0;
}

/* A scope after its '[': "dev0", "dev:0", "pid:42", "rank:1"; the
   program's units: "range:NAME" (or "phase:NAME"), "step:N", "step:A-B",
   "test:GLOB"; then ']'. */
static int parse_scope(const char **pp, struct chk_expr *e, char *err, size_t errlen)
{
	static const char *const kw[] = { "dev", "pid", "rank", "range:", "phase:", "step:",
					  "test:" };
	static const enum chk_scope ks[] = { CHK_DEV, CHK_PID, CHK_RANK, CHK_RANGE, CHK_RANGE,
					     CHK_STEP, CHK_TEST };
	const char *p = skip_ws(*pp);
	char *end;
	int k;

	for (k = 0; k < 7; k++)
		if (!strncmp(p, kw[k], strlen(kw[k])))
			break;
	if (k == 7)
		goto bad;
	p = skip_ws(p + strlen(kw[k]));
	e->scope = ks[k];
	if (e->scope == CHK_RANGE || e->scope == CHK_TEST) {
		if (scope_name(&p, e, err, errlen))
			return -1;
		*pp = p;
		return 0;
	}
	if (e->scope == CHK_STEP) {
		if (step_no(&p, &e->step_from))
			goto bad_step;
		e->step_to = e->step_from;
		if (*p == '-' && (p++, step_no(&p, &e->step_to)))
			goto bad_step;
		if (*p != ']')
			goto bad_step;
		if (e->step_to < e->step_from) {
			seterr(err, errlen, "the steps %" PRIu32 "-%" PRIu32 " run backwards",
			       e->step_from, e->step_to);
			return -1;
		}
		*pp = p + 1;
		return 0;
	}
	if (*p == ':')
		p = skip_ws(p + 1);
	if (!isdigit((unsigned char)*p))
		goto bad;
	errno = 0;
	e->scope_n = strtol(p, &end, 10);
	if (errno || e->scope_n < 0 || e->scope_n > INT32_MAX) {
		seterr(err, errlen, "the %s in the scope is out of range", kw[k]);
		return -1;
	}
	p = skip_ws(end);
	if (*p != ']')
		goto bad;
	*pp = p + 1;
	return 0;
bad_step:
	seterr(err, errlen, "expected a step number or two, [step:N] or [step:A-B] (below 2^32)");
	return -1;
bad:
	seterr(err, errlen, "expected a scope [devN], [pid:N], [rank:N], [range:NAME], [step:N], "
	       "[step:A-B] or [test:GLOB] after the figure");
	return -1;
}

int check_expr_parse(const char *text, const struct chk_syntax *sx, struct chk_expr *e,
		     char *err, size_t errlen)
{
	const char *p = skip_ws(text), *w = p;
	const char *what = sx->baseline ?
		"a size (8GiB, 512MiB, 0), a count, or baseline [+|- N[%|unit]]" :
		"a size (48MiB, 0), a count or a percent (5%)";
	size_t n;
	int m, is_pct;

	memset(e, 0, sizeof(*e));
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	n = (size_t)(p - w);
	for (m = 0; m < sx->nnames; m++)
		if ((strlen(sx->names[m]) == n && !strncmp(w, sx->names[m], n)) ||
		    (sx->alt && sx->alt[m] && strlen(sx->alt[m]) == n && !strncmp(w, sx->alt[m], n)))
			break;
	if (m == sx->nnames) {
		unknown_figure(w, n, sx, err, errlen);
		return -1;
	}
	e->fig = m;
	e->scope = CHK_ALL;
	p = skip_ws(p);
	if (*p == '[') {
		if (!sx->scopes) {
			seterr(err, errlen, "no scope ([...]) is taken here");
			return -1;
		}
		p++;
		if (parse_scope(&p, e, err, errlen))
			return -1;
		p = skip_ws(p);
	}
	if (parse_op(&p, &e->op) || !(sx->ops & (1u << e->op))) {
		seterr(err, errlen, "expected %s after %.*s", sx->ops == (1u << CHK_GT) ? ">" :
		       "<=, <, >=, >, == or !=", (int)n, w);
		return -1;
	}
	p = skip_ws(p);
	e->value_text = p;
	if (sx->baseline && !strncmp(p, "baseline", 8) && !isalnum((unsigned char)p[8]) &&
	    p[8] != '_') {
		e->relative = 1;
		p = skip_ws(p + 8);
		if (*p == '+' || *p == '-') {
			e->neg = *p == '-';
			p = skip_ws(p + 1);
			if (parse_value(&p, 1, &e->value, &e->bytes, &e->pct,
					"N[%|unit] after baseline +|-",
					err, errlen))
				return -1;
		}
	} else {
		if (parse_value(&p, sx->pct, &e->value, &e->bytes, &is_pct, what, err, errlen))
			return -1;
		e->pct = is_pct;
		if (!is_pct && *p == '%') {
			seterr(err, errlen, "a percent is of the baseline: baseline + N%%");
			return -1;
		}
	}
	p = skip_ws(p);
	if (*p) {
		seterr(err, errlen, "unexpected '%s' after the value", p);
		return -1;
	}
	return 0;
}

/* a plain "N%" is parsed, and then taken only for drain_share */
static const struct chk_syntax check_syntax = {
	metric_names, metric_alt, CHK_NMETRICS, 1,
	(1u << CHK_LE) | (1u << CHK_LT) | (1u << CHK_GE) | (1u << CHK_GT) | (1u << CHK_EQ) |
	(1u << CHK_NE), 1, 1,
};

/*
 * Looks like a rule, right or wrong: it has a comparison (<, >, ==, !=, or
 * '=' beside a blank, which the parser then refuses with what is wrong).
 */
int check_is_rule(const char *text)
{
	const char *eq;

	if (strpbrk(text, "<>") || strstr(text, "==") || strstr(text, "!="))
		return 1;
	for (eq = strchr(text, '='); eq; eq = strchr(eq + 1, '='))
		if ((eq > text && isspace((unsigned char)eq[-1])) || isspace((unsigned char)eq[1]))
			return 1;
	return 0;
}

/*
 * The figures of the program's units (docs/check.md): a range, step or
 * test scope takes peak, tensor_peak_allocated and leaked, a span of steps
 * (or none) growth_per_step and first_step_excess; leaked needs a unit
 * scope. The steps' figures are signed: no baseline.
 */
static int unit_rule(const struct chk_rule *r, const struct chk_expr *e, const char *text,
		     char *err, size_t errlen)
{
	int steps = r->metric == CHK_GROWTH_PER_STEP || r->metric == CHK_FIRST_STEP_EXCESS;

	if (steps && e->relative) {
		seterr(err, errlen, "bad rule '%s': %s is signed: no baseline", text,
		       metric_names[r->metric]);
		return -1;
	}
	if (steps && r->scope != CHK_ALL && (r->scope != CHK_STEP ||
					     r->step_from == r->step_to)) {
		seterr(err, errlen, "bad rule '%s': %s is of the run's steps or of a span of "
		       "them ([step:A-B])", text, metric_names[r->metric]);
		return -1;
	}
	if (r->metric == CHK_LEAKED && r->scope < CHK_RANGE) {
		seterr(err, errlen, "bad rule '%s': leaked is of a range, a step or a test: "
		       "[range:NAME], [step:N], [test:GLOB]", text);
		return -1;
	}
	if (r->scope >= CHK_RANGE && !steps && r->metric != CHK_PEAK &&
	    r->metric != CHK_TENSOR_PEAK_ALLOCATED && r->metric != CHK_LEAKED) {
		seterr(err, errlen, "bad rule '%s': a range, step or test has peak, "
		       "tensor_peak_allocated and leaked (and steps growth_per_step, "
		       "first_step_excess), not %s", text, metric_names[r->metric]);
		return -1;
	}
	return 0;
}

int check_rule_add(struct chk_rules *rs, const char *text, char *err, size_t errlen)
{
	struct chk_rule r, *grown;
	struct chk_expr e;
	char scope[48] = "", msg[512];
	size_t vlen;

	memset(&r, 0, sizeof(r));
	if (check_expr_parse(text, &check_syntax, &e, msg, sizeof(msg))) {
		seterr(err, errlen, "bad rule '%s': %s", text, msg);
		return -1;
	}
	r.metric = (enum chk_metric)e.fig;
	r.scope = e.scope;
	r.scope_n = e.scope_n;
	r.step_from = e.step_from;
	r.step_to = e.step_to;
	r.op = e.op;
	r.relative = e.relative;
	if (r.metric == CHK_DRAIN_SHARE && (e.relative || !e.pct)) {
		seterr(err, errlen, "bad rule '%s': drain_share is a share of the run: a percent "
		       "(drain_share <= 2%%)", text);
		return -1;
	}
	if (r.metric != CHK_DRAIN_SHARE && !e.relative && e.pct) {
		seterr(err, errlen, "bad rule '%s': a percent is of the baseline: baseline + N%%",
		       text);
		return -1;
	}
	if (unit_rule(&r, &e, text, err, errlen))
		return -1;
	if (r.metric == CHK_DRAIN_SHARE) {
		r.share = e.value / 100.0;
	} else if (e.relative) {
		if (e.pct) {
			r.pct = e.neg ? -e.value : e.value;
		} else {
			r.add = e.bytes;
			r.sub = e.neg;
		}
	} else {
		r.limit = e.bytes;
	}
	if (r.scope == CHK_STEP && r.step_from == r.step_to)
		snprintf(scope, sizeof(scope), "[step:%" PRIu32 "]", r.step_from);
	else if (r.scope == CHK_STEP)
		snprintf(scope, sizeof(scope), "[step:%" PRIu32 "-%" PRIu32 "]", r.step_from,
			 r.step_to);
	else if (r.scope != CHK_ALL && r.scope < CHK_RANGE)
		snprintf(scope, sizeof(scope), r.scope == CHK_DEV ? "[dev%ld]" : r.scope == CHK_PID ?
			 "[pid:%ld]" : "[rank:%ld]", r.scope_n);
	/* the value as written, after the operator */
	for (vlen = strlen(e.value_text); vlen && isspace((unsigned char)e.value_text[vlen - 1]);)
		vlen--;
	if (e.scope_name && !(r.scope_name = strndup(e.scope_name, e.scope_len)))
		goto nomem;
	if (asprintf(&r.text, "%s%s%s%s%s %s %.*s", metric_names[r.metric], scope,
		     r.scope_name ? r.scope == CHK_TEST ? "[test:" : "[range:" : "",
		     r.scope_name ? r.scope_name : "", r.scope_name ? "]" : "", op_names[r.op],
		     (int)vlen, e.value_text) < 0) {
		r.text = NULL;
		goto nomem;
	}
	if (!(grown = realloc(rs->r, ((size_t)rs->n + 1) * sizeof(*rs->r))))
		goto nomem;
	rs->r = grown;
	rs->r[rs->n++] = r;
	return 0;
nomem:
	free(r.text);
	free(r.scope_name);
	seterr(err, errlen, "out of memory");
	return -1;
}

int check_supp_add(struct chk_rules *rs, const char *text, char *err, size_t errlen)
{
	struct chk_supp s, *grown;
	const char *g;

	memset(&s, 0, sizeof(s));
	text = skip_ws(text);
	if (strncmp(text, "leak", 4) || (*skip_ws(text + 4) != ':' && *skip_ws(text + 4) != '=')) {
		seterr(err, errlen, "bad suppression '%s': expected leak:GLOB", text);
		return -1;
	}
	g = skip_ws(skip_ws(text + 4) + 1);
	if (!*g) {
		seterr(err, errlen, "bad suppression '%s': empty pattern", text);
		return -1;
	}
	if (asprintf(&s.text, "leak:%s", g) < 0) {
		s.text = NULL;
		goto nomem;
	}
	s.glob = s.text + 5;
	if (!(grown = realloc(rs->s, ((size_t)rs->ns + 1) * sizeof(*rs->s)))) {
		free(s.text);
		goto nomem;
	}
	rs->s = grown;
	rs->s[rs->ns++] = s;
	return 0;
nomem:
	seterr(err, errlen, "out of memory");
	return -1;
}

/*
 * The rules file. libinih reads each line into a buffer of its own, of
 * INI_MAX_LINE (200) bytes as built, and splits a longer line into two: a
 * long comment's tail became a rule. Debian's libinih (55) has those
 * settings as variables: they are taken, weakly, so that a libinih
 * without them still links; with them the buffer is the heap's and grows
 * to the longest line. The file is read here first and handed to inih
 * line by line (ini_parse_stream), so that a NUL byte is refused, and a
 * line that a libinih without those settings cannot hold whole is refused
 * with its real number, never split.
 */
extern bool ini_use_stack __attribute__((weak));
extern bool ini_allow_realloc __attribute__((weak));
extern int ini_max_line __attribute__((weak));
extern int ini_initial_alloc __attribute__((weak));

#define RULES_MAX_SIZE (16u << 20)

struct ini_src {
	const char *buf;
	size_t len, pos;
	int line;                   /* the line being read, from 1 */
	int bol;                    /* the next read starts a line */
	int grows;                  /* inih's buffer grows to any line */
	char bad[160];              /* not "": why the file is refused at line */
};

/* fgets() on the file in memory, as inih wants it (a long line in pieces
   when inih's buffer grows). */
static char *ini_read(char *str, int num, void *stream)
{
	struct ini_src *s = stream;
	const char *p = s->buf + s->pos, *nl;
	size_t ll, n;

	if (s->bad[0] || s->pos >= s->len || num < 2)
		return NULL;
	nl = memchr(p, '\n', s->len - s->pos);
	ll = nl ? (size_t)(nl - p) + 1 : s->len - s->pos;
	if (s->bol) {
		s->line++;
		if (memchr(p, 0, ll)) {
			snprintf(s->bad, sizeof(s->bad), "a NUL byte in the line (a rules file is "
				 "text)");
			return NULL;
		}
		/* inih needs 3 bytes more than the line: '\r', '\n' and the NUL */
		if (!s->grows && ll + 2 > (size_t)num) {
			snprintf(s->bad, sizeof(s->bad), "the line is %zu bytes long: this libinih "
				 "reads lines of %d bytes at most", ll - (nl != NULL), num - 3);
			return NULL;
		}
	}
	n = ll < (size_t)num - 1 ? ll : (size_t)num - 1;
	memcpy(str, p, n);
	str[n] = 0;
	s->pos += n;
	s->bol = n == ll;
	return str;
}

struct ini_ctx {
	struct chk_rules *rs;
	const struct ini_src *src;
	char msg[1024];             /* the first error, and its line */
	int line;
};

static int ini_line(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;
	char *line = NULL;
	int inside = strchr(name, '[') && !strchr(name, ']');

	if (c->line)
		return 0;
	if (asprintf(&line, "%s%c%s", name, inside ? ':' : '=', value ? value : "") < 0) {
		line = NULL;
		snprintf(c->msg, sizeof(c->msg), "out of memory");
	} else if (!strcmp(section, "rules") || !strcmp(section, "check")) {
		if (!check_rule_add(c->rs, line, c->msg, sizeof(c->msg)))
			goto ok;
	} else if (!strcmp(section, "suppressions")) {
		if (!check_supp_add(c->rs, line, c->msg, sizeof(c->msg)))
			goto ok;
	} else {
		snprintf(c->msg, sizeof(c->msg), "unknown section [%s] (expected [rules] or "
			 "[suppressions])", section);
	}
	free(line);
	c->line = c->src->line;
	return 0;
ok:
	free(line);
	return 1;
}

/* The file, whole, into *buf (NUL-terminated); 0 or -1 with err set. */
static int read_rules(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *b = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		seterr(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;

		if (n + 4096 + 1 > cap) {
			char *g;

			cap = cap ? 2 * cap : 8192;
			if (!(g = realloc(b, cap))) {
				seterr(err, errlen, "out of memory");
				goto fail;
			}
			b = g;
		}
		got = fread(b + n, 1, cap - n - 1, f);
		n += got;
		if (n > RULES_MAX_SIZE) {
			seterr(err, errlen, "'%s' is over %u MiB: not a rules file", path,
			       RULES_MAX_SIZE >> 20);
			goto fail;
		}
		if (!got)
			break;
	}
	if (ferror(f)) {
		seterr(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
fail:
	fclose(f);
	free(b);
	return -1;
}

int check_rules_load(struct chk_rules *rs, const char *path, char *err, size_t errlen)
{
	struct ini_src src;
	struct ini_ctx c;
	char *buf;
	size_t len, longest = 0;
	int r, knobs = &ini_use_stack && &ini_allow_realloc && &ini_max_line && &ini_initial_alloc;
	bool use_stack = 0, allow_realloc = 0;
	int max_line = 0, initial = 0;

	if (read_rules(path, &buf, &len, err, errlen))
		return -1;
	for (size_t i = 0, at = 0; i <= len; i++)
		if (i == len || buf[i] == '\n') {
			if (i - at > longest)
				longest = i - at;
			at = i + 1;
		}
	memset(&src, 0, sizeof(src));
	src.buf = buf;
	src.len = len;
	src.bol = 1;
	memset(&c, 0, sizeof(c));
	c.rs = rs;
	c.src = &src;
	if (knobs && longest + 16 < INT32_MAX) {
		use_stack = ini_use_stack;
		allow_realloc = ini_allow_realloc;
		max_line = ini_max_line;
		initial = ini_initial_alloc;
		ini_use_stack = 0;
		ini_allow_realloc = 1;
		ini_initial_alloc = 256;
		ini_max_line = (int)longest + 16 > 256 ? (int)longest + 16 : 256;
		src.grows = 1;
	}
	r = ini_parse_stream(ini_read, &src, ini_line, &c);
	if (src.grows) {
		ini_use_stack = use_stack;
		ini_allow_realloc = allow_realloc;
		ini_max_line = max_line;
		ini_initial_alloc = initial;
	}
	free(buf);
	if (r == -2) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	/* the first of: a bad rule, a line inih could not parse, a line refused */
	if (c.line && (r <= 0 || c.line <= r) && (!src.bad[0] || c.line <= src.line)) {
		seterr(err, errlen, "%s:%d: %s", path, c.line, c.msg);
		return -1;
	}
	if (r > 0 && (!src.bad[0] || r <= src.line)) {
		seterr(err, errlen, "%s:%d: not a rule, a suppression or a [section]", path, r);
		return -1;
	}
	if (src.bad[0]) {
		seterr(err, errlen, "%s:%d: %s", path, src.line, src.bad);
		return -1;
	}
	return 0;
}

void check_rules_free(struct chk_rules *rs)
{
	for (int i = 0; i < rs->n; i++) {
		free(rs->r[i].text);
		free(rs->r[i].scope_name);
	}
	for (int i = 0; i < rs->ns; i++)
		free(rs->s[i].text);
	free(rs->r);
	free(rs->s);
	memset(rs, 0, sizeof(*rs));
}

int check_has_relative(const struct chk_rules *rs)
{
	for (int i = 0; i < rs->n; i++)
		if (rs->r[i].relative)
			return 1;
	return 0;
}

/* --- evaluation --------------------------------------------------------- */

struct eval {
	struct chk_rules *rs;
	const struct report *r;
	const struct analysis *a;
	int *supp_of;               /* per a->sites index: suppression, -1 none */
	struct chk_outcome *out;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int glob_hit(const char *glob, const char *s)
{
	return s && *s && (!fnmatch(glob, s, 0) || !fnmatch(glob, base_name(s), 0));
}

static int supp_match(const struct chk_rules *rs, const struct sym_stack *st)
{
	for (int k = 0; st && k < rs->ns; k++)
		for (int i = 0; i < st->nframes; i++) {
			const struct sym_frame *fr = &st->frames[i];

			if (glob_hit(rs->s[k].glob, fr->function) || glob_hit(rs->s[k].glob, fr->file) ||
			    glob_hit(rs->s[k].glob, fr->module))
				return k;
		}
	return -1;
}

/* The gdev of device n (the first host's), -1 none. */
static int gdev_of(const struct report *r, long n)
{
	for (int g = 0; g < r->ngdevs; g++)
		if (r->a->devs[r->gdevs[g]].dev == n)
			return r->gdevs[g];
	return -1;
}

/* The process of a pid or rank, -1 none. */
static int proc_of(const struct analysis *a, enum chk_scope sc, long n)
{
	for (int i = 0; i < a->nprocs; i++) {
		const struct sproc *p = stream_proc(a->s, i);

		if (sc == CHK_PID && rep_pid(a, i) == (uint32_t)n)
			return i;
		if (sc == CHK_RANK && p->process && p->process->rank == n)
			return i;
	}
	return -1;
}

/* Does op hold for a figure that compares c (-1, 0, 1) with its limit? */
static int holds(int c, enum chk_op op)
{
	switch (op) {
	case CHK_LE: return c <= 0;
	case CHK_LT: return c < 0;
	case CHK_GE: return c >= 0;
	case CHK_GT: return c > 0;
	case CHK_EQ: return c == 0;
	case CHK_NE: return c != 0;
	}
	return 0;
}

static int cmp(uint64_t v, enum chk_op op, uint64_t lim)
{
	return holds((v > lim) - (v < lim), op);
}

static int cmp_share(double v, enum chk_op op, double lim)
{
	return holds((v > lim) - (v < lim), op);
}

struct chk_result *check_result_add(struct chk_outcome *o, const struct chk_rule *rule, int dev,
				    int proc)
{
	struct chk_result *grown = realloc(o->v, ((size_t)o->n + 1) * sizeof(*o->v)), *x;

	if (!grown)
		return NULL;
	o->v = grown;
	x = &o->v[o->n++];
	memset(x, 0, sizeof(*x));
	x->rule = rule;
	x->dev = dev;
	x->proc = proc;
	x->what = metric_words[rule->metric];
	return x;
}

static struct chk_result *add_result(struct eval *e, const struct chk_rule *rule, int dev,
				     int proc)
{
	return check_result_add(e->out, rule, dev, proc);
}

/* The top site at a device's peak. */
static void top_at_peak(const struct report *r, int di, struct chk_result *x)
{
	const struct rep_list *l = di >= 0 ? &r->dev_sites[di] : NULL;

	if (l && l->n) {
		x->st = l->v[0].st;
		x->site = l->v[0].site;
		x->site_bytes = l->v[0].bytes;
	}
}

/* A call path that is no site (a failed call, an shm_open): named with
   the frames the report's own section gives it. */
static void top_stack(struct chk_result *x, const struct sym_stack *st, int nframes,
		      uint64_t bytes)
{
	x->st = st;
	x->site = NULL;
	x->nframes = nframes;
	x->site_bytes = bytes;
}

/*
 * live_at_exit of the devices matching (dev -1: any; proc -1: any): what
 * the report's leak candidates left, so less what a caching allocator
 * held at exit (the report's "held by a caching allocator at exit", its
 * cache: the sites of report.c's cache_exit) and less the suppressed
 * stacks; the largest stack left is the top site.
 */
static void live_at_exit(struct eval *e, int dev, int proc, uint64_t left, struct chk_result *x)
{
	const struct analysis *a = e->a;
	uint64_t hid = 0, cache = 0, best = 0;

	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];

		if (s->host || s->dev < 0 || !s->live || (dev >= 0 && s->dev != dev) ||
		    (proc >= 0 && s->proc != proc))
			continue;
		if (s->caching) {
			cache += s->live;
		} else if (e->supp_of[i] >= 0) {
			hid += s->live;
		} else if (s->live > best) {
			best = s->live;
			x->st = sym_stack(e->r->sy, a->s, s->proc, s->stack);
			x->site = site_of(&e->r->sites, i);
			x->site_bytes = s->live;
		}
	}
	x->suppressed = hid;
	x->cached = cache;
	left = left > cache ? left - cache : 0;
	x->value = left > hid ? left - hid : 0;
}

/* --- the framework's figures (model/framework.h) ----------------------- */

/* Why a run has no framework figure: no framework record at all. */
void check_no_framework(const struct report *r, struct chk_result *x)
{
	size_t n;

	n = (size_t)snprintf(x->missing, sizeof(x->missing), "the run has no PyTorch tensor "
			     "records (docs/torch.md)");
	for (int i = 0; i < r->a->nprocs && n < sizeof(x->missing); i++)
		if (r->fw_off[i].p) {
			snprintf(x->missing + n, sizeof(x->missing) - n, ": pid %" PRIu32 ": %.*s",
				 rep_pid(r->a, i), (int)(r->fw_off[i].len > 200 ? 200 :
							 r->fw_off[i].len), r->fw_off[i].p);
			break;
		}
}

static void top_tensor(const struct fw_model *m, const struct fw_held *h, uint32_t nh,
		       struct chk_result *x)
{
	if (nh) {
		x->fws = &m->sites[h[0].site];
		x->site_bytes = h[0].bytes;
	}
}

/* tensor_live_at_exit: the tensor leak candidates' bytes left at exit
   (m->leaks, largest first) on device dev (-1: any); the largest of
   those of process proc (-1: any) is the top site. */
static uint64_t tensor_leaks(const struct fw_model *m, int dev, int proc, struct chk_result *x)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->nleaks; i++) {
		const struct fw_site *s = &m->sites[m->leaks[i]];

		if (!s->exit_bytes || (dev >= 0 && s->dev != dev))
			continue;
		n += s->exit_bytes;
		if (x->nleaks < CHK_LEAKS && (proc < 0 || s->proc == proc)) {
			if (!x->fws) {
				x->fws = s;
				x->site_bytes = s->exit_bytes;
			}
			x->leaks[x->nleaks].s = s;
			x->leaks[x->nleaks].bytes = s->exit_bytes;
			x->leaks[x->nleaks++].count = s->exit_count;
		}
	}
	return n;
}

/* parameters_peak ... temporaries_peak: the bytes of the category at the
   peak of allocated (summed over the process's devices) of process pi,
   else of the process with the highest one. */
static void category_figure(const struct analysis *a, const struct chk_rule *rule, long dev,
			    int pi, struct chk_result *x)
{
	const struct rg_model *rm = a->ranges;
	int best = -1;

	if (dev >= 0) {
		snprintf(x->missing, sizeof(x->missing), "the categories are per process, over its "
			 "devices: [pid:N], [rank:N] or no scope");
		return;
	}
	for (int i = 0; rm && rm->peaks && i < rm->nprocs; i++)
		if (rm->peaks[i].has_fw && rm->peaks[i].fw_split.has && (pi < 0 || i == pi) &&
		    (best < 0 || rm->peaks[i].fw > rm->peaks[best].fw))
			best = i;
	if (best < 0)
		snprintf(x->missing, sizeof(x->missing), "no peak of PyTorch's allocated inside the "
			 "program's ranges (the categories need memtrace's PyTorch hooks: docs/units.md)");
	else if (!rm->cats.notes)
		snprintf(x->missing, sizeof(x->missing), "the run has no categories note "
			 "(docs/units.md)");
	else
		x->value = rm->peaks[best].fw_split.bytes[rule->metric - CHK_PARAMETERS_PEAK];
}

/* The framework's figures of rule on the run, the process pi (-1: none),
   appended to e->out as figures() does. */
static int fw_figures(struct eval *e, const struct chk_rule *rule, int pi)
{
	const struct report *r = e->r;
	const struct analysis *a = r->a;
	const struct fw_model *m = a->fw;
	long dev = rule->scope == CHK_DEV ? rule->scope_n : -1;
	struct chk_result *x;
	int n = 0, rundevs = 0, onedev = -1;

	if (!m) {
		if (!(x = add_result(e, rule, (int)dev, pi)))
			return -1;
		check_no_framework(r, x);
		return 0;
	}
	for (int i = 0; i < m->ndevs; i++)
		if (m->devs[i].proc < 0) {
			rundevs++;
			onedev = m->devs[i].dev;
		}
	switch (rule->metric) {
	case CHK_TENSOR_PEAK_ALLOCATED:
	case CHK_REQUESTED_PEAK:
		/* one result per device: the run's, or the process's */
		for (int i = 0; i < m->ndevs; i++) {
			const struct fw_dev *d = &m->devs[i];
			const struct fw_moment *mo = rule->metric == CHK_REQUESTED_PEAK ?
						     &d->peak_req : &d->peak_alloc;

			if ((pi >= 0 ? d->proc != pi : d->proc >= 0) || (dev >= 0 && d->dev != dev))
				continue;
			if (!(x = add_result(e, rule, d->dev, pi)))
				return -1;
			n++;
			x->value = rule->metric == CHK_REQUESTED_PEAK ? mo->st.requested :
				   mo->st.allocated;
			top_tensor(m, mo->held, mo->nheld, x);
		}
		break;
	case CHK_TENSOR_LIVE_AT_EXIT:
		if (pi >= 0) {
			/* the process's devices, each at the process's end: its
			   blocks never freed */
			for (int i = 0; i < m->ndevs; i++)
				n += m->devs[i].proc == pi && (dev < 0 || m->devs[i].dev == dev);
			if (!n)
				break;
			if (!(x = add_result(e, rule, (int)dev, pi)))
				return -1;
			for (int i = 0; i < m->ndevs; i++) {
				const struct fw_dev *d = &m->devs[i];

				if (d->proc != pi || (dev >= 0 && d->dev != dev))
					continue;
				x->value += d->end.allocated;
				if (!x->fws)
					tensor_leaks(m, d->dev, pi, x);
			}
			for (int i = 0; i < m->ndevs && !x->fws && x->value; i++)
				if (m->devs[i].proc == pi && (dev < 0 || m->devs[i].dev == dev))
					tensor_leaks(m, m->devs[i].dev, -1, x);
			break;
		}
		for (int i = 0; i < m->ndevs; i++)
			n += m->devs[i].proc < 0 && (dev < 0 || m->devs[i].dev == dev);
		if (!n)
			break;
		if (!(x = add_result(e, rule, dev >= 0 ? (int)dev : rundevs == 1 ? onedev : -1, -1)))
			return -1;
		x->value = tensor_leaks(m, (int)dev, -1, x);
		break;
	case CHK_OOMS:
	case CHK_OOM_FRAGMENTATION:
	case CHK_OOM_OTHER_STREAM:
	case CHK_OOM_FULL:
	case CHK_OOM_OUTSIDE: {
		int v = metric_verdict(rule->metric);

		for (int i = 0; i < m->ndevs; i++)
			n += (pi >= 0 ? m->devs[i].proc == pi : m->devs[i].proc < 0) &&
			     (dev < 0 || m->devs[i].dev == dev);
		if (!n)
			break;
		if (!(x = add_result(e, rule, dev >= 0 ? (int)dev : rundevs == 1 ? onedev : -1, pi)))
			return -1;
		for (uint32_t i = 0; i < m->nooms; i++) {
			const struct fw_oom *o = &m->ooms[i];

			if ((v && (int)o->verdict != v) || (dev >= 0 && o->dev != dev) ||
			    (pi >= 0 && o->proc != pi))
				continue;
			if (!x->value++) {
				x->oom = o;
				top_tensor(m, o->top, (uint32_t)o->ntop, x);
			}
		}
		break;
	}
	case CHK_DRAIN_SHARE:
		n = 1;
		if (!(x = add_result(e, rule, -1, -1)))
			return -1;
		if (rule->scope != CHK_ALL) {
			snprintf(x->missing, sizeof(x->missing), "the drains are counted for the whole "
				 "run: drain_share takes no scope");
			break;
		}
		x->is_share = 1;
		x->share = a->duration ? (double)m->drain_ns / (double)a->duration : 0.0;
		x->share_limit = rule->share;
		/* the count and the time, for the text */
		x->value = m->drains;
		x->site_bytes = m->drain_ns;
		break;
	case CHK_PARAMETERS_PEAK:
	case CHK_GRADIENTS_PEAK:
	case CHK_OPTIMIZER_STATE_PEAK:
	case CHK_ACTIVATIONS_PEAK:
	case CHK_TEMPORARIES_PEAK:
		n = 1;
		if (!(x = add_result(e, rule, -1, pi)))
			return -1;
		category_figure(a, rule, dev, pi, x);
		break;
	default:
		return 0;
	}
	if (!n) {
		if (!(x = add_result(e, rule, (int)dev, pi)))
			return -1;
		if (pi >= 0)
			snprintf(x->missing, sizeof(x->missing), "pid %" PRIu32 " has no PyTorch tensor "
				 "records%s", rep_pid(a, pi), dev >= 0 ? " on that device" : "");
		else
			snprintf(x->missing, sizeof(x->missing), "PyTorch used no device %ld", dev);
	}
	return 0;
}

/* Failures (and their first stack) of a device or process. */
static uint64_t count_failures(const struct analysis *a, const struct report *r, int dev,
			       int proc, struct chk_result *x)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < a->nfailures; i++) {
		const struct an_failure *f = &a->failures[i];

		if ((dev >= 0 && f->dev != dev) || (proc >= 0 && f->proc != proc))
			continue;
		if (!n++)
			top_stack(x, sym_stack(r->sy, a->s, f->proc, f->stack), 2, f->requested);
	}
	return n;
}

/* The figure of rule on run r, one result per device where the rule is
   per device; the results are appended to e->out. */
static int figures(struct eval *e, const struct chk_rule *rule)
{
	const struct report *r = e->r;
	const struct analysis *a = r->a;
	int di = -1, pi = -1;
	struct chk_result *x;

	if (rule->scope >= CHK_RANGE || rule->metric == CHK_GROWTH_PER_STEP ||
	    rule->metric == CHK_FIRST_STEP_EXCESS)
		return check_unit_figures(r, rule, e->out);
	if (rule->metric >= CHK_FW_FIRST) {
		if ((rule->scope == CHK_PID || rule->scope == CHK_RANK) &&
		    (pi = proc_of(a, rule->scope, rule->scope_n)) < 0) {
			if (!(x = add_result(e, rule, -1, -1)))
				return -1;
			snprintf(x->missing, sizeof(x->missing), "no traced process has %s %ld",
				 rule->scope == CHK_PID ? "pid" : "rank", rule->scope_n);
			return 0;
		}
		return fw_figures(e, rule, pi);
	}
	if (rule->scope == CHK_DEV && (di = gdev_of(r, rule->scope_n)) < 0) {
		if (!(x = add_result(e, rule, (int)rule->scope_n, -1)))
			return -1;
		snprintf(x->missing, sizeof(x->missing), "the run used no device %ld",
			 rule->scope_n);
		return 0;
	}
	if ((rule->scope == CHK_PID || rule->scope == CHK_RANK) &&
	    (pi = proc_of(a, rule->scope, rule->scope_n)) < 0) {
		if (!(x = add_result(e, rule, -1, -1)))
			return -1;
		snprintf(x->missing, sizeof(x->missing), "no traced process has %s %ld",
			 rule->scope == CHK_PID ? "pid" : "rank", rule->scope_n);
		return 0;
	}
	switch (rule->metric) {
	case CHK_PEAK:
		if (di >= 0) {
			if (!(x = add_result(e, rule, a->devs[di].dev, -1)))
				return -1;
			x->value = a->devs[di].peak.reserved;
			top_at_peak(r, di, x);
		} else if (pi >= 0) {
			int best = -1;

			if (!(x = add_result(e, rule, -1, pi)))
				return -1;
			x->value = a->procs[pi].peak_all;
			for (int k = 0; k < AN_MAX_DEV; k++) {
				int pd = a->procs[pi].pdev[k];

				if (pd >= 0 && (best < 0 || a->devs[pd].peak.reserved >
						 a->devs[best].peak.reserved))
					best = pd;
			}
			top_at_peak(r, best, x);
		} else {
			int best = -1;

			if (!(x = add_result(e, rule, -1, -1)))
				return -1;
			x->value = a->gpeak_all;
			for (int g = 0; g < r->ngdevs; g++)
				if (best < 0 || a->devs[r->gdevs[g]].peak.reserved >
				    a->devs[best].peak.reserved)
					best = r->gdevs[g];
			if (r->ngdevs == 1)
				x->dev = a->devs[best].dev;
			top_at_peak(r, best, x);
		}
		return 0;
	case CHK_ALLOCATED_PEAK:
	case CHK_UNTRACED:
		for (int k = 0; k < (pi >= 0 ? AN_MAX_DEV : r->ngdevs); k++) {
			int d = pi >= 0 ? a->procs[pi].pdev[k] : r->gdevs[k];
			const struct an_peak *pk;

			if (d < 0 || (di >= 0 && d != di))
				continue;
			pk = &a->devs[d].peak;
			if (!(x = add_result(e, rule, a->devs[d].dev, pi)))
				return -1;
			if (rule->metric == CHK_ALLOCATED_PEAK) {
				x->value = pk->allocated;
				top_at_peak(r, d, x);
			} else if (!pk->has_sample) {
				snprintf(x->missing, sizeof(x->missing),
					 "no memory sample of the device near its peak");
			} else {
				x->value = pk->untraced > 0 ? (uint64_t)pk->untraced : 0;
			}
		}
		return 0;
	case CHK_LIVE_AT_EXIT: {
		uint64_t left = 0;

		if (!(x = add_result(e, rule, di >= 0 ? a->devs[di].dev : -1, pi)))
			return -1;
		if (di >= 0) {
			left = a->devs[di].left_at_exit;
		} else if (pi >= 0) {
			for (int k = 0; k < AN_MAX_DEV; k++)
				if (a->procs[pi].pdev[k] >= 0)
					left += a->devs[a->procs[pi].pdev[k]].left_at_exit;
		} else {
			for (int g = 0; g < r->ngdevs; g++)
				left += a->devs[r->gdevs[g]].left_at_exit;
			if (r->ngdevs == 1)
				x->dev = a->devs[r->gdevs[0]].dev;
		}
		live_at_exit(e, di >= 0 ? a->devs[di].dev : -1, pi, left, x);
		return 0;
	}
	case CHK_FAILURES:
		if (!(x = add_result(e, rule, di >= 0 ? a->devs[di].dev : -1, pi)))
			return -1;
		x->value = count_failures(a, r, di >= 0 ? a->devs[di].dev : -1, pi, x);
		if (di < 0 && pi < 0) {
			x->value = a->failures_total;
			if (r->ngdevs == 1)
				x->dev = a->devs[r->gdevs[0]].dev;
		}
		return 0;
	case CHK_OOM_RETRIES:
		if (!(x = add_result(e, rule, di >= 0 ? a->devs[di].dev : -1, pi)))
			return -1;
		for (uint32_t i = 0; i < a->noomsigs; i++) {
			const struct an_oomsig *s = &a->oomsigs[i];

			if ((di >= 0 && s->dev != a->devs[di].dev) || (pi >= 0 && s->proc != pi))
				continue;
			if (!x->value++) {
				/* the failure the retry followed */
				for (uint32_t k = 0; k < a->nfailures; k++)
					if (a->failures[k].time == s->time &&
					    a->failures[k].proc == s->proc) {
						top_stack(x, sym_stack(r->sy, a->s, s->proc,
								       a->failures[k].stack), 2,
							  s->requested);
						break;
					}
				if (x->dev < 0)
					x->dev = s->dev;
				if (x->proc < 0 && a->nprocs > 1)
					x->proc = s->proc;
			}
		}
		return 0;
	case CHK_SHM_LEFT:
		if (!(x = add_result(e, rule, -1, pi)))
			return -1;
		if (di >= 0) {
			snprintf(x->missing, sizeof(x->missing), "/dev/shm belongs to no device");
			return 0;
		}
		if (pi >= 0 && r->shm.per_proc && pi < r->shm.nprocs)
			x->value = r->shm.per_proc[pi].present_bytes;
		else if (pi < 0)
			x->value = r->shm.all.present_bytes;
		for (uint32_t i = 0; i < r->shm.nsegs; i++) {
			const struct shm_seg *s = &r->shm.segs[i];

			if (!s->unlinked && !s->attached && (pi < 0 || s->proc == pi)) {
				top_stack(x, sym_stack(r->sy, a->s, s->proc, s->stack), 3, s->size);
				break;
			}
		}
		return 0;
	default:
		break;
	}
	return 0;
}

/* The baseline's figure for the same rule and place: the first result. */
static int baseline_of(struct eval *be, const struct chk_rule *rule, const struct chk_result *x,
		       uint64_t *v)
{
	int from = be->out->n;

	if (figures(be, rule))
		return -1;
	for (int i = from; i < be->out->n; i++) {
		const struct chk_result *b = &be->out->v[i];

		/* a test's: the baseline's test of the same nodeid */
		if (!b->missing[0] && (b->dev == x->dev || b->dev < 0 || x->dev < 0) &&
		    (rule->scope != CHK_TEST || !strcmp(b->in->name, x->in->name))) {
			*v = b->value;
			return 1;
		}
	}
	return 0;
}

static int *suppressed_sites(struct chk_rules *rs, const struct report *r, int count)
{
	const struct analysis *a = r->a;
	int *of = calloc(a->nsites ? a->nsites : 1, sizeof(int));

	if (!of)
		return NULL;
	for (uint32_t i = 0; i < a->nsites; i++) {
		const struct an_site *s = &a->sites[i];

		of[i] = -1;
		if (!rs->ns || s->host || s->dev < 0 || !s->live)
			continue;
		of[i] = supp_match(rs, sym_stack(r->sy, a->s, s->proc, s->stack));
		if (of[i] >= 0 && count) {
			rs->s[of[i]].bytes += s->live;
			rs->s[of[i]].count += s->count;
		}
	}
	return of;
}

/*
 * A failed result for each warning about a trace of r (and of base), whose
 * figures then lack the records the damage took: records cut off at the
 * end, torn, or none at all. Pseudo-rules, owned by out.
 */
static int damage_results(struct eval *e, const struct report *r, const struct report *base,
			  struct chk_outcome *out)
{
	const struct report *runs[2] = { r, base };
	char msg[512];
	int n = 0, k = 0;

	for (int side = 0; side < 2; side++)
		for (int i = 0; runs[side] && i < runs[side]->a->nprocs; i++)
			for (unsigned w = 0; !trace_warning(stream_proc(runs[side]->a->s, i)->t, w,
							    msg, sizeof(msg)); w++)
				n++;
	if (!n)
		return 0;
	if (!(out->damage = calloc((size_t)n, sizeof(*out->damage))))
		return -1;
	for (int side = 0; side < 2; side++)
		for (int i = 0; runs[side] && i < runs[side]->a->nprocs; i++)
			for (unsigned w = 0; k < n && !trace_warning(stream_proc(runs[side]->a->s,
									 i)->t, w, msg,
								     sizeof(msg)); w++) {
				struct chk_rule *rule = &out->damage[k];
				struct chk_result *x;

				rule->metric = CHK_PEAK;
				if (!(rule->text = strdup(side ? "baseline trace intact" :
							  "trace intact")))
					return -1;
				out->ndamage = ++k;
				if (!(x = add_result(e, rule, -1, side ? -1 : i)))
					return -1;
				x->what = "records";
				snprintf(x->missing, sizeof(x->missing), "%s", msg);
			}
	return 0;
}

int check_eval(struct chk_rules *rs, const struct report *r, const struct report *base,
	       struct chk_outcome *out, char *err, size_t errlen)
{
	return check_eval_with(rs, r, base, NULL, out, err, errlen);
}

int check_eval_with(struct chk_rules *rs, const struct report *r, const struct report *base,
		    const struct chk_jbase *jbase, struct chk_outcome *out, char *err,
		    size_t errlen)
{
	struct chk_outcome bout = { NULL, 0, 0, NULL, 0 };
	struct eval e = { rs, r, r->a, NULL, out }, be = { rs, base, base ? base->a : NULL, NULL,
							     &bout };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < rs->ns; i++)
		rs->s[i].bytes = rs->s[i].count = 0;
	if (!(e.supp_of = suppressed_sites(rs, r, 1)) ||
	    (base && !(be.supp_of = suppressed_sites(rs, base, 0))))
		goto nomem;
	for (int i = 0; i < rs->n; i++) {
		const struct chk_rule *rule = &rs->r[i];
		int from = out->n;

		if (rule->relative && !base && !jbase) {
			seterr(err, errlen, "rule '%s' needs a baseline (--baseline FILE)", rule->text);
			goto out;
		}
		if (figures(&e, rule))
			goto nomem;
		for (int k = from; k < out->n; k++) {
			struct chk_result *x = &out->v[k];

			if (x->missing[0]) {
				x->pass = 0;
			} else if (x->is_share) {
				x->pass = cmp_share(x->share, rule->op, x->share_limit);
			} else if (x->is_signed) {
				/* a limit past INT64_MAX is above every figure */
				x->limit = rule->limit;
				x->pass = holds(rule->limit > INT64_MAX ? -1 :
						(x->svalue > (int64_t)rule->limit) -
						(x->svalue < (int64_t)rule->limit), rule->op);
			} else if (rule->relative) {
				uint64_t b = 0;
				double lim;
				int got = jbase ? check_jbase_figure(jbase, rule, x->dev, &b) :
					  baseline_of(&be, rule, x, &b);

				if (got < 0)
					goto nomem;
				x = &out->v[k];
				if (!got) {
					snprintf(x->missing, sizeof(x->missing),
						 "the baseline has no such figure");
					x->pass = 0;
					continue;
				}
				x->baseline = b;
				x->has_baseline = 1;
				if (rule->pct != 0) {
					/* saturates: 0 at most, UINT64_MAX at least */
					lim = (double)b + (double)b * rule->pct / 100.0;
					x->limit = to_u64(floor(lim));
				} else if (rule->sub) {
					x->limit = b > rule->add ? b - rule->add : 0;
				} else {
					x->limit = b > UINT64_MAX - rule->add ? UINT64_MAX :
						   b + rule->add;
				}
				x->pass = cmp(x->value, rule->op, x->limit);
			} else {
				x->limit = rule->limit;
				x->pass = cmp(x->value, rule->op, x->limit);
			}
		}
	}
	if (damage_results(&e, r, base, out))
		goto nomem;
	for (int i = 0; i < out->n; i++)
		out->failed += !out->v[i].pass;
	rc = 0;
	goto out;
nomem:
	seterr(err, errlen, "out of memory");
out:
	free(e.supp_of);
	free(be.supp_of);
	check_outcome_free(&bout);
	return rc;
}

void check_outcome_free(struct chk_outcome *o)
{
	for (int i = 0; i < o->ndamage; i++)
		free(o->damage[i].text);
	free(o->damage);
	free(o->v);
	memset(o, 0, sizeof(*o));
}
