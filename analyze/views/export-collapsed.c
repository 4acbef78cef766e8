/*
 * export-collapsed.c - folded stacks ("root;...;leaf bytes"), the input of
 * flamegraph.pl, speedscope and Grafana's flame graph panel
 * (docs/export.md): one line per site of the report's full lists (not only
 * the ten shown), the device first, then the site's frames outermost
 * first, weighted by the bytes it held at its device's peak or left at
 * exit. The lines of a device sum to the report's figure for it.
 *
 * A frame's text keeps what the format needs free: ';', controls, a
 * backslash and bytes that are not UTF-8 are written as \xNN.
 */
#include <inttypes.h>
#include <string.h>

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

static void line(FILE *f, const char *root, const struct rep_entry *e)
{
	char b[1024];

	if (!e->bytes)
		return;
	put_escaped(f, root, strlen(root));
	if (!e->st || !e->st->nframes)
		fputs(";(no stack)", f);
	for (int i = e->st ? e->st->nframes - 1 : -1; i >= 0; i--) {
		size_t n = export_frame_text(&e->st->frames[i], b, sizeof(b));

		fputc(';', f);
		put_escaped(f, b, n);
	}
	fprintf(f, " %" PRIu64 "\n", e->bytes);
}

static void exit_list(FILE *f, const struct rep_list *l)
{
	char root[64];

	for (int i = 0; i < l->total; i++) {
		const struct rep_entry *e = &l->v[i];

		if (e->dev >= 0)
			snprintf(root, sizeof(root), "device %d", e->dev);
		else
			snprintf(root, sizeof(root), "pinned host");
		line(f, root, e);
	}
}

int export_collapsed(const struct report *r, int at_exit, FILE *f, char *err, size_t errlen)
{
	if (at_exit) {
		exit_list(f, &r->leaks);
		exit_list(f, &r->cache_exit);
	} else {
		for (int g = 0; g < r->ngdevs; g++) {
			const struct rep_list *l = &r->dev_sites[r->gdevs[g]];
			char dn[256];

			rep_dev_name(r, &r->a->devs[r->gdevs[g]], dn, sizeof(dn));
			for (int i = 0; i < l->total; i++)
				line(f, dn, &l->v[i]);
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot write the folded stacks");
		return -1;
	}
	return 0;
}
