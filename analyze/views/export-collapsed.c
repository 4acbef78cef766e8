/*
 * export-collapsed.c - folded stacks ("root;...;leaf bytes"), the input of
 * flamegraph.pl, speedscope and Grafana's flame graph panel
 * (docs/export.md): one line per site of the report's full lists (not only
 * the ten shown), the device first, then the site's frames from the
 * outermost to its main one, each as the site's name writes it
 * (rep_stack_name, fw_site_name), weighted by the bytes it held at the
 * moment of --at (views/export-at.c) or left at exit; on a device with
 * PyTorch's records, its tensor sites. The lines of a device sum to the
 * report's figure for it.
 *
 * A frame's text keeps what the format needs free: ';', controls, a
 * backslash and bytes that are not UTF-8 are written as \xNN.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/framework.h"
#include "views/export.h"
#include "views/format.h"
#include "views/utf8.h"

static void put_escaped(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k;

		if (c >= 0x80 && (k = utf8_len((const unsigned char *)s + i, n - i))) {
			fwrite(s + i, 1, k, f);
			i += k;
			continue;
		}
		if (c < 0x20 || c == 0x7f || c >= 0x80 || c == ';' || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
		i++;
	}
}

/* A CUDA-level site's line: its frames from the outermost to its main one,
   each as its name (rep_stack_name) writes that frame; the library frames
   inside the main one are folded, as in the name. */
static void line(FILE *f, const char *root, const struct rep_entry *e)
{
	char b[1024];
	const struct sym_frame *mf = rep_main_frame(e->st);

	if (!e->bytes)
		return;
	put_escaped(f, root, strlen(root));
	if (!mf)
		fputs(";(no stack recorded)", f);
	for (int i = mf ? e->st->nframes - 1 : -1; mf && i >= (int)(mf - e->st->frames); i--) {
		struct sym_stack sub = { e->st->frames + i, e->st->nframes - i, 0 };

		rep_stack_name(b, sizeof(b), &sub, 1, NULL);
		fputc(';', f);
		put_escaped(f, b, strlen(b));
	}
	fprintf(f, " %" PRIu64 "\n", e->bytes);
}

/* A tensor site's line: its Python frames from the outermost to its main
   one, each as its name (fw_site_name) writes that frame. */
static void fw_line(FILE *f, const struct report *r, const char *root, uint32_t site,
		    uint64_t bytes)
{
	const struct fw_site *s = &r->a->fw->sites[site];
	struct trace_fw_frame fr[64];
	uint32_t nf = 0;
	char b[1024];

	if (!bytes)
		return;
	if (s->stack)
		nf = trace_fw_stack_frames(stream_proc(r->a->s, s->proc)->t, s->stack, fr, 64);
	if (nf > 64)
		nf = 64;
	put_escaped(f, root, strlen(root));
	if (!nf)
		fputs(";(no stack recorded)", f);
	for (int i = (int)nf - 1; nf && i >= s->main_frame; i--) {
		struct fw_site one = *s;

		one.main_frame = i;
		one.name_frames = 1;
		fw_site_name(b, sizeof(b), r->a, &one, NULL);
		fputc(';', f);
		put_escaped(f, b, strlen(b));
	}
	fprintf(f, " %" PRIu64 "\n", bytes);
}

/* Left at exit on devices not shown as a framework's (fw[dev] < 0). */
static void exit_list(FILE *f, const struct rep_list *l, const signed char *fwdev)
{
	char root[64];

	for (int i = 0; i < l->total; i++) {
		const struct rep_entry *e = &l->v[i];

		if (e->dev >= 0 && e->dev < AN_MAX_DEV && fwdev[e->dev])
			continue;
		if (e->dev >= 0)
			snprintf(root, sizeof(root), "device %d", e->dev);
		else
			snprintf(root, sizeof(root), "pinned host");
		line(f, root, e);
	}
}

/* The tensor sites of framework device fdi at the moment. */
static int fw_lines(FILE *f, const struct report *r, const struct export_moment *m, int fdi,
		    const char *root)
{
	const struct fw_model *fw = r->a->fw;
	const struct fw_dev *d = &fw->devs[fdi];
	struct fw_state st;
	struct fw_held *h = NULL;
	uint32_t nh = 0;
	uint64_t seq, t;

	if (m->at.when == EXPORT_PEAK) {
		for (uint32_t i = 0; i < d->peak_alloc.nheld; i++)
			fw_line(f, r, root, d->peak_alloc.held[i].site, d->peak_alloc.held[i].bytes);
		return 0;
	}
	if (m->at.when == EXPORT_EXIT) {
		/* the report's tensor leak candidates: never freed */
		for (uint32_t i = 0; i < fw->nleaks; i++) {
			const struct fw_site *s = &fw->sites[fw->leaks[i]];

			if (s->dev == d->dev)
				fw_line(f, r, root, fw->leaks[i], s->exit_bytes);
		}
		return 0;
	}
	export_fw_at(r, m, fdi, &seq, &t);
	if (fw_state_at(fw, fdi, seq, t, &st, &h, &nh))
		return -1;
	for (uint32_t i = 0; i < nh; i++)
		fw_line(f, r, root, h[i].site, h[i].bytes);
	free(h);
	return 0;
}

int export_collapsed(const struct report *r, const struct export_moment *m, FILE *f, char *err,
		     size_t errlen)
{
	signed char fwdev[AN_MAX_DEV] = { 0 };

	for (int g = 0; g < r->ngdevs; g++) {
		int di = r->gdevs[g], fdi = export_fw_of_gdev(r, di);
		const struct rep_list *l = &r->dev_sites[di];
		struct rep_list at = { 0 };
		char dn[256];

		rep_dev_name(r, &r->a->devs[di], dn, sizeof(dn));
		if (fdi >= 0) {
			fwdev[r->a->devs[di].dev] = 1;
			if (fw_lines(f, r, m, fdi, dn))
				goto oom;
			continue;
		}
		if (m->at.when == EXPORT_EXIT)
			continue;
		if (m->cuda) {
			if (report_sites_list(r, m->cuda[di].sites, m->cuda[di].nsites, &at))
				goto oom;
			l = &at;
		}
		for (int i = 0; i < l->total; i++)
			line(f, dn, &l->v[i]);
		free(at.v);
	}
	if (m->at.when == EXPORT_EXIT) {
		exit_list(f, &r->leaks, fwdev);
		exit_list(f, &r->cache_exit, fwdev);
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot write the folded stacks");
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}
