/*
 * rt-act-rebuilt.c - samples/activations.c built again with one more
 * function in front, so that every address differs from the sample's
 * while functions, files and lines stay the same: `memtrace diff` must
 * still match every site exactly.
 */
/* in main's section, in front of it, so that main moves too */
__attribute__((noinline, used, section(".text.startup"))) static void rebuilt_padding(void)
{
	static volatile int x;

	for (int i = 0; i < 64; i++)
		x += i * 3;
}

#include "../../samples/activations.c"
