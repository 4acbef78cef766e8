/*
 * testhelp.h - the tiny assertion header of memtrace's C unit tests
 * (in the spirit of redis' testhelp.h).
 *
 *   TEST("name") { ... CHECK(cond); CHECK_EQ_U64(a, b); ... }
 *   return test_report();
 *
 * Each failed check prints the file, line and the values; test_report()
 * prints "unit <file>: N checks, N failed" and returns the exit status.
 */
#ifndef MEMTRACE_TESTHELP_H
#define MEMTRACE_TESTHELP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_checks, test_failed;
static const char *test_name = "";

#define TEST(name) for (int test_once_ = (test_name = (name), 1); test_once_; test_once_ = 0)

#define CHECK(cond) do { \
	test_checks++; \
	if (!(cond)) { \
		test_failed++; \
		fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__, test_name, #cond); \
	} \
} while (0)

#define CHECK_EQ_U64(a, b) do { \
	uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b); \
	test_checks++; \
	if (va_ != vb_) { \
		test_failed++; \
		fprintf(stderr, "%s:%d: [%s] %s == %" PRIu64 ", expected %s == %" PRIu64 "\n", \
			__FILE__, __LINE__, test_name, #a, va_, #b, vb_); \
	} \
} while (0)

#define CHECK_EQ_STR(a, b) do { \
	const char *sa_ = (a), *sb_ = (b); \
	test_checks++; \
	if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) { \
		test_failed++; \
		fprintf(stderr, "%s:%d: [%s] %s == \"%s\", expected \"%s\"\n", \
			__FILE__, __LINE__, test_name, #a, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
	} \
} while (0)

static inline int test_report(const char *file)
{
	printf("unit %s: %d checks, %d failed\n", file, test_checks, test_failed);
	return test_failed ? 1 : 0;
}

#endif
