/*
 * dl-sim-lookup.c - drives the simulated driver's cuGetProcAddress the way
 * the runtime does: dlopen("libcuda.so.1"), dlsym of cuGetProcAddress_v2
 * and cuGetProcAddress, then look-ups. Prints one line per look-up:
 *   <name> <version> <flags> -> <CUresult> <symbolStatus> <variant|NULL>
 * where the variant is found by comparing the returned pointer with dlsym
 * of the candidate names. "exports" mode reads exported names on stdin and
 * checks that each is reachable through its base name; prints "missing X".
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dlfcn.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t);

static void *lib;
static gpa2_t gpa2;
static gpa_t gpa;

/* The exported name whose address is p, among base and its suffixed forms. */
static const char *variant_name(const char *base, void *p)
{
	static const char *suffixes[] = { "", "_v2", "_v3", "_v4", "_ptsz", "_ptds",
		"_v2_ptsz", "_v2_ptds", "_v3_ptsz" };
	static char name[256];

	if (!p)
		return "NULL";
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", base, suffixes[i]);
		if (dlsym(lib, name) == p)
			return name;
	}
	return "UNKNOWN";
}

static void query(const char *name, int version, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
	void *p = (void *)1;
	CUresult r = gpa2(name, &p, version, flags, &st);

	printf("%s %d %llu -> %d %d %s\n", *name ? name : "\"\"", version,
	       (unsigned long long)flags, (int)r, (int)st, variant_name(name, p));
}

static void query_v1(const char *name, int version, cuuint64_t flags)
{
	void *p = (void *)1;
	CUresult r = gpa(name, &p, version, flags);

	printf("v1 %s %d %llu -> %d %s\n", name, version, (unsigned long long)flags, (int)r,
	       variant_name(name, p));
}

/* Every exported name (stdin) must come back from its base name at some version and flags. */
static int check_exports(void)
{
	char line[256], base[256];
	regex_t re;
	int missing = 0;

	regcomp(&re, "(_v[0-9]+)?(_ptsz|_ptds)?$", REG_EXTENDED);
	while (fgets(line, sizeof(line), stdin)) {
		regmatch_t m;
		void *want, *got;
		int found = 0;

		line[strcspn(line, "\n")] = 0;
		want = dlsym(lib, line);
		snprintf(base, sizeof(base), "%s", line);
		if (regexec(&re, base, 1, &m, 0) == 0)
			base[m.rm_so] = 0;
		for (int v = 2000; v <= 13000 && !found; v += 10)
			for (int f = 0; f <= 2 && !found; f += 2)
				found = gpa2(base, &got, v, (cuuint64_t)f, NULL) == CUDA_SUCCESS && got == want;
		if (!found) {
			printf("missing %s\n", line);
			missing++;
		}
	}
	regfree(&re);
	return missing != 0;
}

int main(int argc, char **argv)
{
	void *p;
	CUresult r;

	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	gpa2 = (gpa2_t)dlsym(lib, "cuGetProcAddress_v2");
	gpa = (gpa_t)dlsym(lib, "cuGetProcAddress");
	if (!gpa2 || !gpa)
		return 2;
	if (argc > 1 && strcmp(argv[1], "exports") == 0)
		return check_exports();

	query("", 0, 0);
	query("cuMemAlloc", 2000, 0);
	query("cuMemAlloc", 3020, 0);
	query("cuMemAlloc", 13000, 2);
	query("cuMemAlloc", 1000, 0);
	query("cuMemAlloc_v2", 13000, 0);
	query("cuNoSuchFunction", 13000, 0);
	query("cuMemAllocAsync", 11020, 0);
	query("cuMemAllocAsync", 11020, 1);
	query("cuMemAllocAsync", 11020, 2);
	query("cuMemAllocAsync", 11010, 2);
	query("cuGetProcAddress", 11030, 0);
	query("cuGetProcAddress", 12000, 0);
	query("cuGetProcAddress", 11020, 0);
	query("cuCtxGetDevice", 2000, 0);
	query("cuCtxGetDevice", 12090, 0);
	query("cuCtxGetDevice", 13000, 0);
	query("cuStreamSynchronize", 2000, 2);
	query("cuStreamSynchronize", 6050, 2);
	query("cuStreamSynchronize", 7000, 2);
	query("cuMemcpyHtoD", 13000, 0);
	query("cuMemcpyHtoD", 13000, 2);
	query("cuStreamGetCtx", 12000, 2);
	query("cuStreamGetCtx", 12050, 2);
	query("cuCtxCreate", 13000, 0);
	query("cuMemFreeAsync", 13000, 2);
	query("cuInit", 2000, 0);
	query_v1("cuMemAlloc", 3020, 0);
	query_v1("cuMemAllocAsync", 12000, 2);
	query_v1("cuMemAlloc_v2", 12000, 0);

	/* NULL symbolStatus, and the pointer really is dlsym's. */
	r = gpa2("cuMemAllocAsync", &p, 12000, 2, NULL);
	printf("null-status %d %s\n", (int)r, p == dlsym(lib, "cuMemAllocAsync_ptsz") ? "same" : "different");
	r = gpa2("cuMemAllocAsync", &p, 12000, 7, NULL);
	printf("bad-flags %d\n", (int)r);
	return 0;
}
