/*
 * lib-nvtxtool.c - a user's own NVTX injection library (as Nsight Systems'
 * would be), for tests/t640: memtrace run chains to it when
 * NVTX_INJECTION64_PATH named it. It logs the calls it gets to
 * $NVTXTOOL_LOG, one line each, and answers with values of its own (a push
 * returns 100 + its depth, a domain is its own handle, a start's id is
 * 7000 + n) so the test can tell that the program saw the tool's answers
 * and the tool saw its own handles. NVTXTOOL_FAIL=1: its init returns 0.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static int depth, nstart;
static char domains[8][32];
static int ndomains;

static void logf_(const char *fmt, const char *s, long v)
{
	if (!out)
		return;
	fprintf(out, fmt, s, v);
	fputc('\n', out);
	fflush(out);
}

static int push_a(const char *m) { logf_("push %s %ld", m, depth); return 100 + depth++; }
static int pop(void) { logf_("pop%s %ld", "", depth); return depth > 0 ? 100 + --depth : -1; }
static void mark_a(const char *m) { logf_("mark %s%ld", m, 0); }
static nvtxRangeId_t start_a(const char *m) { logf_("start %s %ld", m, 7000 + nstart); return 7000 + (nvtxRangeId_t)nstart++; }
static void end(nvtxRangeId_t id) { logf_("end%s %ld", "", (long)id); }

static nvtxDomainHandle_t domain_create(const char *name)
{
	if (ndomains == 8)
		return NULL;
	snprintf(domains[ndomains], sizeof domains[0], "%s", name);
	logf_("domain %s %ld", name, ndomains);
	return (nvtxDomainHandle_t)(void *)domains[ndomains++];
}

/* the handle must be the tool's own: its name is right there */
static int domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	const char *name = (const char *)(void *)d;
	int ours = 0;

	for (int i = 0; i < ndomains; i++)
		ours |= name == domains[i];
	logf_("dpush %s %ld", ours ? name : "(not mine)", a->messageType);
	return 100 + depth++;
}

static int domain_pop(nvtxDomainHandle_t d)
{
	const char *name = (const char *)(void *)d;
	int ours = 0;

	for (int i = 0; i < ndomains; i++)
		ours |= name == domains[i];
	logf_("dpop %s %ld", ours ? name : "(not mine)", depth);
	return depth > 0 ? 100 + --depth : -1;
}

static nvtxStringHandle_t reg_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	logf_("register %s %ld", s, 0);
	return (nvtxStringHandle_t)(void *)strdup(s);
}

static void set(NvtxGetExportTableFunc_t get, NvtxCallbackModule m, unsigned id, NvtxFunctionPointer f)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable table;
	unsigned size;

	if (cb && cb->GetModuleFunctionTable(m, &table, &size) && id < size && table[id])
		*table[id] = f;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const char *p = getenv("NVTXTOOL_LOG");

	if (getenv("NVTXTOOL_FAIL"))
		return 0;
	if (p && !out)
		out = fopen(p, "a");
	logf_("init%s %ld", "", 0);
	set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
	set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop);
	set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)mark_a);
	set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)start_a);
	set(get, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)end);
	set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create);
	set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push);
	set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
	set(get, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)reg_a);
	return 1;
}
