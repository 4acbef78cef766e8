/*
 * lib-nvtxtool.c - a user's own NVTX injection library (as Nsight Systems'
 * would be), for tests/t640: memtrace run chains to it when
 * NVTX_INJECTION64_PATH named it. It logs the calls it gets to
 * $NVTXTOOL_LOG, one line each, and answers with values of its own (a push
 * returns 100 + its depth, a domain is its own handle, a start's id is
 * 7000 + n) so the test can tell that the program saw the tool's answers
 * and the tool saw its own handles. NVTXTOOL_FAIL=1: its init returns 0.
 * It implements NVTX's memory extension too (for t652): heaps get handles
 * 0x7000, 0x7010, ..., regions 0x9000, 0x9001, ... when the program asks
 * for them, and region names (which memtrace does not record) are logged.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
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

/* --- NVTX's memory extension --------------------------------------------- */

static int nheaps, nregions;

static const char *domain_name(nvtxDomainHandle_t d)
{
	for (int i = 0; i < ndomains; i++)
		if ((const char *)(void *)d == domains[i])
			return domains[i];
	return "(not mine)";
}

static nvtxMemHeapHandle_t heap_register(nvtxDomainHandle_t d, const nvtxMemHeapDesc_t *desc)
{
	const nvtxMemVirtualRangeDesc_t *r = desc->typeSpecificDesc;

	if (out)
		fprintf(out, "heap_register %s %s %zu\n", domain_name(d),
			desc->messageType == NVTX_MESSAGE_TYPE_ASCII ? desc->message.ascii : "-",
			r ? r->size >> 20 : 0);
	return (nvtxMemHeapHandle_t)(uintptr_t)(0x7000 + 0x10 * nheaps++);
}

static void heap_op(const char *what, nvtxDomainHandle_t d, nvtxMemHeapHandle_t h)
{
	if (out)
		fprintf(out, "%s %s 0x%lx\n", what, domain_name(d), (unsigned long)(uintptr_t)h);
}

static void heap_unregister(nvtxDomainHandle_t d, nvtxMemHeapHandle_t h) { heap_op("heap_unregister", d, h); }
static void heap_reset(nvtxDomainHandle_t d, nvtxMemHeapHandle_t h) { heap_op("heap_reset", d, h); }

static void regions_register(nvtxDomainHandle_t d, const nvtxMemRegionsRegisterBatch_t *b)
{
	if (out)
		fprintf(out, "regions_register %s 0x%lx %zu\n", domain_name(d),
			(unsigned long)(uintptr_t)b->heap, b->regionCount);
	for (size_t i = 0; b->regionHandleElementsOut && i < b->regionCount; i++)
		b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)(0x9000 + nregions++);
}

static void regions_resize(nvtxDomainHandle_t d, const nvtxMemRegionsResizeBatch_t *b)
{
	if (out)
		fprintf(out, "regions_resize %s %zu\n", domain_name(d), b->regionDescCount);
}

static void regions_unregister(nvtxDomainHandle_t d, const nvtxMemRegionsUnregisterBatch_t *b)
{
	if (out)
		fprintf(out, "regions_unregister %s %u %zu\n", domain_name(d), b->refType, b->refCount);
}

static void regions_name(nvtxDomainHandle_t d, const nvtxMemRegionsNameBatch_t *b)
{
	if (out)
		fprintf(out, "regions_name %s %s\n", domain_name(d),
			b->regionCount ? b->regionElements[0].name.ascii : "-");
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
	if (getenv("NVTXTOOL_FAIL"))
		return 0;
	if (info->moduleId != NVTX_EXT_MODULEID_MEM || !info->segmentsCount)
		return 1;
	intptr_t *slots = info->segments[0].functionSlots;
	size_t n = info->segments[0].slotCount;

	logf_("mem init%s %ld", "", 0);
	if (n > NVTX3EXT_CBID_nvtxMemRegionsName) {
		slots[NVTX3EXT_CBID_nvtxMemHeapRegister] = (intptr_t)heap_register;
		slots[NVTX3EXT_CBID_nvtxMemHeapUnregister] = (intptr_t)heap_unregister;
		slots[NVTX3EXT_CBID_nvtxMemHeapReset] = (intptr_t)heap_reset;
		slots[NVTX3EXT_CBID_nvtxMemRegionsRegister] = (intptr_t)regions_register;
		slots[NVTX3EXT_CBID_nvtxMemRegionsResize] = (intptr_t)regions_resize;
		slots[NVTX3EXT_CBID_nvtxMemRegionsUnregister] = (intptr_t)regions_unregister;
		slots[NVTX3EXT_CBID_nvtxMemRegionsName] = (intptr_t)regions_name;
	}
	return 1;
}
