/*
 * format.c - how the text and JSON views write what the model holds:
 * sizes, times, strings from a trace (escaped for a terminal or for
 * JSON), device names. Formatting only: no number is computed here.
 */
#include <inttypes.h>
#include <stdio.h>

#include "views/format.h"
#include "views/utf8.h"

const char *rep_size(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)b;
	int u = -1;

	if (b < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", b);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

const char *rep_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

const char *rep_time(char *buf, size_t len, uint64_t ns)
{
	char d[32];

	snprintf(buf, len, "+%s", rep_duration(d, sizeof(d), ns));
	return buf;
}

void rep_json_str(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!str) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t u;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c >= 0x20 && c < 0x7f) {
			putc(c, f);
		} else if (c >= 0x80 && (u = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, u, f);
			i += u;
			continue;
		} else {
			fprintf(f, "\\u%04x", c);
		}
		i++;
	}
	putc('"', f);
}

void rep_text_str(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; str && i < n;) {
		unsigned char c = s[i];
		size_t u;

		if (c >= 0x20 && c < 0x7f) {
			putc(c, f);
		} else if (c >= 0x80 && (u = utf8_len(s + i, n - i))) {
			fwrite(s + i, 1, u, f);
			i += u;
			continue;
		} else {
			fprintf(f, "\\x%02x", c);
		}
		i++;
	}
}

const char *rep_dev_name(const struct report *r, const struct an_dev *d, char *buf, size_t len)
{
	if (r->a->nhosts > 1) {
		const char *h;
		size_t hl;

		an_hostname(r->a, d->host_proc, &h, &hl);
		snprintf(buf, len, "%.*s:%d", (int)(hl < 200 ? hl : 200), h, d->dev);
	} else {
		snprintf(buf, len, "device %d", d->dev);
	}
	return buf;
}
