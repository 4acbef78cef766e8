/*
 * export-at.c - the moment an export shows (`--at`, docs/export.md),
 * resolved on the model and nothing else:
 *
 *   peak     each device at its own peak: the CUDA level's peak of reserved
 *            (an_dev.peak), a framework's device its peak of allocated
 *            (fw_dev.peak_alloc);
 *   exit     the end of the run (every record);
 *   oom[:N]  the Nth framework OOM (fw->ooms, from 1), or, when the run has
 *            no framework records, the Nth failed allocation
 *            (analysis.failures): every device as it was then;
 *   TIME     every device after the last record at or before TIME (+12.5ms,
 *            40us, 3s, or ns with no unit, since the run's start).
 *
 * For oom and TIME the CUDA-level devices are replayed to the moment
 * (analysis_at) and the framework's state is the one after its last event
 * then (fw_seq_at).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "views/export.h"

int export_at_parse(const char *s, struct export_at *at, char *err, size_t errlen)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, fdiv = 1, mul = 1;
	int digits = 0;

	memset(at, 0, sizeof(*at));
	if (!strcmp(s, "peak")) {
		at->when = EXPORT_PEAK;
		return 0;
	}
	if (!strcmp(s, "exit")) {
		at->when = EXPORT_EXIT;
		return 0;
	}
	if (!strncmp(s, "oom", 3) && (!s[3] || s[3] == ':')) {
		char *end;
		unsigned long long n = 1;

		if (s[3]) {
			errno = 0;
			n = strtoull(s + 4, &end, 10);
			if (s[4] < '0' || s[4] > '9' || *end || errno || !n || n > UINT32_MAX)
				goto bad;
		}
		at->when = EXPORT_OOM;
		at->n = (uint32_t)n;
		return 0;
	}
	if (*p == '+')
		p++;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			goto bad;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			if (fdiv < 1000000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				fdiv *= 10;
			}
	}
	if (!digits)
		goto bad;
	if (!*p || !strcmp(p, "ns"))
		mul = 1;
	else if (!strcmp(p, "us"))
		mul = 1000;
	else if (!strcmp(p, "ms"))
		mul = 1000000;
	else if (!strcmp(p, "s"))
		mul = 1000000000;
	else
		goto bad;
	if (whole > UINT64_MAX / mul)
		goto bad;
	at->when = EXPORT_TIME;
	at->t = whole * mul + frac * mul / fdiv;
	return 0;
bad:
	snprintf(err, errlen, "--at takes peak, exit, oom, oom:N or a time (+12.5ms, 40us, 3s, "
		 "or ns since the run's start), not '%s'", s);
	return -1;
}

static void label_time(char *buf, size_t len, uint64_t t)
{
	snprintf(buf, len, "+%" PRIu64 ".%06" PRIu64 " ms", t / 1000000, t % 1000000);
}

int export_moment(struct analysis *a, const struct report *r, const struct export_at *at,
		  struct export_moment *m, char *err, size_t errlen)
{
	const struct fw_model *fw = a->fw;

	(void)r;
	memset(m, 0, sizeof(*m));
	m->at = *at;
	m->fw_oom = m->failure = -1;
	m->fw_seq = fw ? fw->events : 0;
	switch (at->when) {
	case EXPORT_PEAK:
		snprintf(m->label, sizeof(m->label), "peak");
		return 0;
	case EXPORT_EXIT:
		snprintf(m->label, sizeof(m->label), "exit");
		m->t = a->duration;
		return 0;
	case EXPORT_OOM:
		snprintf(m->label, sizeof(m->label), "oom:%" PRIu32, at->n);
		if (fw) {
			if (at->n > fw->nooms) {
				snprintf(err, errlen, "--at %s: the run has %" PRIu32 " framework OOM%s "
					 "(with framework records, oom:N counts PyTorch's OOMs)",
					 m->label, fw->nooms, fw->nooms == 1 ? "" : "s");
				return -1;
			}
			m->fw_oom = (int)at->n - 1;
			m->t = fw->ooms[m->fw_oom].st.t;
			m->fw_seq = fw->ooms[m->fw_oom].st.seq;
		} else {
			if (at->n > a->nfailures) {
				snprintf(err, errlen, "--at %s: the run has %" PRIu32 " failed "
					 "allocation%s%s", m->label, a->nfailures,
					 a->nfailures == 1 ? "" : "s",
					 a->failures_total > a->nfailures ? " kept in detail" : "");
				return -1;
			}
			m->failure = (int)at->n - 1;
			m->t = a->failures[m->failure].time;
		}
		break;
	case EXPORT_TIME:
		label_time(m->label, sizeof(m->label), at->t);
		if (at->t > a->duration) {
			char d[64];

			label_time(d, sizeof(d), a->duration);
			snprintf(err, errlen, "--at %s is past the run's end (%s)", m->label, d);
			return -1;
		}
		m->t = at->t;
		if (fw)
			m->fw_seq = fw_seq_at(fw, m->t);
		break;
	}
	m->cuda = calloc((size_t)a->ndevs + 1, sizeof(*m->cuda));
	if (!m->cuda || analysis_at(a, 0, m->t, m->cuda)) {
		export_moment_free(a, m);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void export_moment_free(const struct analysis *a, struct export_moment *m)
{
	if (m->cuda)
		for (int i = 0; i < a->ndevs; i++)
			free(m->cuda[i].sites);
	free(m->cuda);
	m->cuda = NULL;
}

uint64_t export_dev_t(const struct report *r, const struct export_moment *m, int di)
{
	const struct an_dev *d = &r->a->devs[di];

	if (d->proc >= 0)
		d = &r->a->devs[d->gdev];
	switch (m->at.when) {
	case EXPORT_PEAK:
		return d->peak.reserved ? d->peak.time : 0;
	case EXPORT_EXIT:
		return UINT64_MAX;
	default:
		return m->t;
	}
}

void export_fw_at(const struct report *r, const struct export_moment *m, int fdi, uint64_t *seq,
		  uint64_t *t)
{
	const struct fw_model *fw = r->a->fw;
	const struct fw_dev *d = &fw->devs[fdi];

	if (d->proc >= 0)
		d = &fw->devs[d->run];
	switch (m->at.when) {
	case EXPORT_PEAK:
		*seq = d->peak_alloc.st.seq;
		*t = d->peak_alloc.st.t;
		break;
	case EXPORT_EXIT:
		*seq = fw->events;
		*t = UINT64_MAX;
		break;
	default:
		*seq = m->fw_seq;
		*t = m->t;
		break;
	}
}

int export_fw_of_gdev(const struct report *r, int di)
{
	const struct analysis *a = r->a;
	const struct an_dev *g = &a->devs[di];

	for (int i = 0; a->fw && i < a->fw->ndevs; i++) {
		const struct fw_dev *d = &a->fw->devs[i];

		/* the allocs are counted on the processes' devices */
		if (d->proc >= 0 && d->allocs && a->fw->devs[d->run].dev == g->dev &&
		    a->fw->devs[d->run].host == g->host)
			return d->run;
	}
	return -1;
}
