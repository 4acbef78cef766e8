/*
 * treecpu.c OUT CMD [ARG...] - runs CMD and writes to the file OUT the CPU
 * time (user + system, in ns) of the whole tree of processes it made:
 * getrusage(RUSAGE_CHILDREN) once CMD was waited for, which holds every
 * descendant that its parent waited for in turn (a shell's pipeline:
 * heaptrack's interpreter and compressor). CMD's output passes through;
 * the exit status is CMD's. For bench/paths-bench.sh: what a tool costs
 * the machine, not only the traced process.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: treecpu OUT CMD [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("treecpu: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "treecpu: cannot run '%s'\n", argv[2]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || getrusage(RUSAGE_CHILDREN, &ru) != 0) {
		perror("treecpu: wait");
		return 1;
	}
	if (!(out = fopen(argv[1], "w"))) {
		fprintf(stderr, "treecpu: cannot open '%s'\n", argv[1]);
		return 1;
	}
	fprintf(out, "%llu\n", (unsigned long long)((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
						     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u));
	fclose(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
