/*
 * check.h - error checks for the test clients: a failing CUDA call that the
 * client did not expect ends it with a message and exit status 1.
 */
#ifndef MEMTRACE_CLIENT_CHECK_H
#define MEMTRACE_CLIENT_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define CK(call) do { \
	int rc_ = (int)(call); \
	if (rc_ != 0) { \
		fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, rc_); \
		exit(1); \
	} \
} while (0)

#define EXPECT(call, want) do { \
	int rc_ = (int)(call); \
	if (rc_ != (int)(want)) { \
		fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, #call, rc_, (int)(want)); \
		exit(1); \
	} \
} while (0)
#endif
