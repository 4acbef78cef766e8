/*
 * deepbind-main.c PLUGIN [now] - dlopen PLUGIN with RTLD_DEEPBIND (and
 * RTLD_NOW with "now", else RTLD_LAZY), then call its plugin_run()
 * (deepbind-plugin.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int now = argc > 2 && strcmp(argv[2], "now") == 0;
	void *h = dlopen(argv[1], (now ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL | RTLD_DEEPBIND);
	int (*run)(void);

	if (!h) {
		fprintf(stderr, "deepbind-main: %s\n", dlerror());
		return 1;
	}
	run = (int (*)(void))dlsym(h, "plugin_run");
	if (!run) {
		fprintf(stderr, "deepbind-main: %s\n", dlerror());
		return 1;
	}
	return run();
}
