/*
 * utf8.h - the one UTF-8 check of the escapers (memtrace dump's C-style
 * strings, the report's JSON and text): strings from a trace are any bytes,
 * and only valid sequences are printed as they are.
 */
#ifndef MEMTRACE_UTF8_H
#define MEMTRACE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence of 2..4 bytes at s (n bytes left), or
   0: overlong forms, surrogates and code points past U+10FFFF are invalid. */
static inline size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

#endif
