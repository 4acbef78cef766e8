/*
 * dlsym-tool.c - another LD_PRELOAD tool that interposes dlsym, as many
 * do: it appends each looked-up name to $DLSYM_TOOL_LOG, one a line, and
 * forwards with the common idiom dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34")
 * (falling back to GLIBC_2.2.5). Used by t120 before and after libmemtrace
 * in LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*next_dlsym)(void *, const char *);

__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
	const char *log = getenv("DLSYM_TOOL_LOG");

	if (!next_dlsym)
		next_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!next_dlsym)
		next_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (log && name) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			(void)!write(fd, name, strlen(name));
			(void)!write(fd, "\n", 1);
			close(fd);
		}
	}
	return next_dlsym ? next_dlsym(handle, name) : NULL;
}
