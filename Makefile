# memtrace - the only build file.
#
#   make                 build/memtrace and build/libmemtrace.so (and the
#                        simulated CUDA used by tests and the demo)
#   make test            install missing dependencies, build with -Werror,
#                        run unit and end-to-end tests
#   make demo            run the samples under memtrace and report
#   make bench           measure overhead; writes bench/RESULTS.md
#   make install PREFIX=/usr/local DESTDIR=
#   knobs: CFLAGS, V=1 (show commands), ASAN=1, WERROR=1, CUDA_HOME

CUDA_HOME ?= /usr/local/cuda
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CFLAGS ?= -O2 -g
B := build
VERSION := 0.1.0

WARN := -Wall -Wextra -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
# ASAN=1: the analyzer and the unit tests (test-preload-* link the
# recorder into an ASan-built program, as a user's may be: t414 traces one)
# with AddressSanitizer and UBSan, a finding ending the program (so a test
# fails on it). What is loaded into programs built without ASan (the
# recorder through LD_PRELOAD, the simulated CUDA) gets UBSan alone: ASan's
# runtime must be the first library of a process, which a preloaded library
# is not. So do the test clients and samples: they stand for the traced
# program, whose every call the tests compare (some interpose dlsym or
# write, or leak on purpose, which ASan's runtime changes or fails).
# Switching ASAN rebuilds everything
# ($(B)/.san holds the flags of the last build).
ifeq ($(ASAN),1)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LIBSAN := -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# tests run memtrace itself under LD_PRELOAD (t120, t202): ASan would refuse
export ASAN_OPTIONS ?= verify_asan_link_order=0
export UBSAN_OPTIONS ?= print_stacktrace=1
endif
# the sanitizers of a source file: LIBSAN for what runs inside traced programs
# (bench/ none: its timings are the point, and UBSan's runtime changes what it links)
san_for = $(if $(filter bench/%,$(1)),,$(if $(filter preload/% tests/simcuda/% tests/clients/% \
	samples/%,$(1)),$(LIBSAN),$(SAN)))
SAN_STAMP := $(B)/.san
$(shell mkdir -p $(B) && { echo '$(SAN)' | cmp -s - $(SAN_STAMP) || echo '$(SAN)' >$(SAN_STAMP); })

CPPFLAGS += -Iinclude -I$(CUDA_HOME)/include -DMEMTRACE_VERSION='"$(VERSION)"'
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(call san_for,$<) -MMD -MP
PIC := -fPIC

ifeq ($(V),1)
Q :=
else
Q := @
endif

# --- sources --------------------------------------------------------------
PRELOAD_SRC := $(wildcard preload/*.c)
PRELOAD_ASM := $(wildcard preload/*.S)
ANALYZE_SRC := $(wildcard analyze/*/*.c)
ANALYZE_MAIN := analyze/cli/memtrace.c
SIMDRV_SRC := $(wildcard tests/simcuda/driver/*.c)
SIMRT_SRC := $(wildcard tests/simcuda/runtime/*.c)
UNIT_SRC := $(wildcard tests/unit/test-*.c)
CLIENT_SRC := $(wildcard tests/clients/*.c)
SAMPLE_SRC := $(wildcard samples/*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(filter %.c,$(1))) \
      $(patsubst %.S,$(B)/obj/%.o,$(filter %.S,$(1)))

PRELOAD_OBJ := $(call obj,$(PRELOAD_SRC) $(PRELOAD_ASM))
# The page of `memtrace view`: its static parts as C arrays (xxd -i).
HTML_ASSETS := $(sort $(wildcard analyze/views/html/*.html analyze/views/html/*.css \
	analyze/views/html/*.js))
HTML_GEN := $(B)/gen/html-assets.c
ANALYZE_OBJ := $(call obj,$(ANALYZE_SRC)) $(B)/obj/$(HTML_GEN:.c=.o)
ANALYZE_LIB_OBJ := $(filter-out $(call obj,$(ANALYZE_MAIN)),$(ANALYZE_OBJ))
SIMDRV_OBJ := $(call obj,$(SIMDRV_SRC))
SIMRT_OBJ := $(call obj,$(SIMRT_SRC))

SIMDRV := $(B)/simcuda/driver/libcuda.so.1
SIMRT := $(B)/simcuda/runtime/libcudart.so.13
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
CLIENT_BIN := $(patsubst tests/clients/%.c,$(B)/tests/clients/%,$(CLIENT_SRC))
SAMPLE_BIN := $(patsubst samples/%.c,$(B)/samples/%,$(SAMPLE_SRC))
BENCH_BIN := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))

PRELOAD_LIBS := -lunwind -ldl -lpthread
ANALYZE_LIBS := -lsqlite3 -ldw -lelf -linih -ljson-c -lncursesw -lzstd -lm -lpthread

.PHONY: all deps test demo bench fuzz fuzz2 install clean check-deps
all: check-deps $(B)/memtrace $(B)/libmemtrace.so $(SIMDRV) $(SIMRT)

# Stops early, with one line naming what is missing and how to install it.
check-deps:
	$(Q)CUDA_HOME=$(CUDA_HOME) scripts/install-deps.sh --check

deps:
	$(Q)CUDA_HOME=$(CUDA_HOME) scripts/install-deps.sh

# --- compile --------------------------------------------------------------
$(B)/obj/%.o: %.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(PIC) $(EXTRA_CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@

$(B)/obj/%.o: %.S $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) $(CPPFLAGS) $(LIBSAN) $(PIC) -c $< -o $@

$(HTML_GEN): $(HTML_ASSETS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)(cd analyze/views/html && for f in $(notdir $(HTML_ASSETS)); do xxd -i $$f; done) | \
	  sed 's/^unsigned/const unsigned/' >$@.tmp && mv $@.tmp $@

$(B)/obj/$(B)/gen/%.o: $(B)/gen/%.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(PIC) -c $< -o $@

# The preload library hides everything but its hooks.
EXTRA_CFLAGS_preload := -fvisibility=hidden -ftls-model=initial-exec
# The simulated driver and runtime never call their own exported symbols
# through the PLT, as the real libraries don't.
EXTRA_CFLAGS_tests := -fvisibility=hidden
# The analyzer includes its headers by folder: "model/analysis.h".
EXTRA_CFLAGS_analyze := -Ianalyze

# --- link -----------------------------------------------------------------
$(B)/libmemtrace.so: $(PRELOAD_OBJ) preload/libmemtrace.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(LIBSAN) -Wl,-z,defs -Wl,-soname,libmemtrace.so \
	  -Wl,--version-script=preload/libmemtrace.map $(PRELOAD_OBJ) -o $@ $(PRELOAD_LIBS)

$(B)/memtrace: $(ANALYZE_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN) $^ -o $@ $(ANALYZE_LIBS)

$(SIMDRV): $(SIMDRV_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(LIBSAN) -Wl,-z,defs -Wl,-Bsymbolic -Wl,-soname,libcuda.so.1 $^ -o $@ -lpthread
	$(Q)ln -sf libcuda.so.1 $(dir $@)libcuda.so

$(SIMRT): $(SIMRT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(LIBSAN) -Wl,-z,defs -Wl,-Bsymbolic -Wl,-soname,libcudart.so.13 $^ -o $@ -ldl -lpthread
	$(Q)ln -sf libcudart.so.13 $(dir $@)libcudart.so

# Unit tests: test-preload-* link the recorder's objects, test-analyze-* the
# analyzer's (without its main), any other test-* links nothing extra.
$(B)/tests/unit/test-preload-%: tests/unit/test-preload-%.c $(PRELOAD_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ipreload $^ -o $@ $(PRELOAD_LIBS)

$(B)/tests/unit/test-analyze-%: tests/unit/test-analyze-%.c $(ANALYZE_LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ianalyze $^ -o $@ $(ANALYZE_LIBS)

$(B)/tests/unit/test-%: tests/unit/test-%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@

# Test clients, by name prefix:
#   rt-*     linked against the (simulated) shared runtime, -lcudart
#   drv-*    linked against the (simulated) driver, -lcuda
#   dl-*     neither: they dlopen what they need
#   lib-*    shared libraries over the (simulated) runtime, loaded by the
#            Python clients (tests/clients/py-*.py) with ctypes
#   realrt-* linked against the real libcudart.so.13 of CUDA_HOME, found
#            first through DT_RPATH, over the simulated driver;
#            realrt-static-* against the real libcudart_static.a, as nvcc
#            links by default
$(B)/tests/clients/rt-%: tests/clients/rt-%.c $(SIMRT)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -L$(B)/simcuda/runtime -lcudart -lpthread

$(B)/tests/clients/lib-%: tests/clients/lib-%.c $(SIMRT)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared $< -o $@ -L$(B)/simcuda/runtime -lcudart -lpthread

$(B)/tests/clients/drv-%: tests/clients/drv-%.c $(SIMDRV)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -L$(B)/simcuda/driver -lcuda -lpthread

$(B)/tests/clients/dl-%: tests/clients/dl-%.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -ldl -lpthread

$(B)/tests/clients/realrt-static-%: tests/clients/realrt-static-%.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)if [ -e $(CUDA_HOME)/lib64/libcudart_static.a ]; then \
	  $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ $(CUDA_HOME)/lib64/libcudart_static.a -ldl -lpthread -lrt; \
	else echo "  (skipped $@: no $(CUDA_HOME)/lib64/libcudart_static.a)"; fi

$(B)/tests/clients/realrt-%: tests/clients/realrt-%.c $(SAN_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)if [ -e $(CUDA_HOME)/lib64/libcudart.so.13 ]; then \
	  $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64 -l:libcudart.so.13 \
	    -Wl,--disable-new-dtags,-rpath,$(CUDA_HOME)/lib64; \
	else echo "  (skipped $@: no $(CUDA_HOME)/lib64/libcudart.so.13)"; fi

# Samples use the CUDA runtime API only; on a real GPU the real runtime is
# found instead of the simulated one.
$(B)/samples/%: samples/%.c $(SIMRT)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -L$(B)/simcuda/runtime -lcudart -lpthread

# Benchmark programs run on the simulated driver.
$(B)/bench/%: bench/%.c $(SIMDRV)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $< -o $@ -L$(B)/simcuda/driver -lcuda -lpthread

tests-build: all $(UNIT_BIN) $(CLIENT_BIN) $(SAMPLE_BIN) $(BENCH_BIN)

# --- test, demo, bench ----------------------------------------------------
test: deps
	$(Q)$(MAKE) --no-print-directory WERROR=1 tests-build
	$(Q)tests/run.sh

demo: deps
	$(Q)$(MAKE) -s --no-print-directory all $(SAMPLE_BIN)
	$(Q)scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)bench/run.sh

# --- fuzz -----------------------------------------------------------------
# make fuzz [FUZZ_SECONDS=600]: builds build/fuzz/fuzz-trace, a libFuzzer
# target over the trace reader and every command that reads a trace (the
# whole analyzer but main, compiled by clang with ASan and UBSan), and runs
# it for FUZZ_SECONDS on the seeds of tests/fuzz/corpus/. New inputs go to
# build/fuzz/corpus/, crashes to build/fuzz/crash-*; rerun one with
# build/fuzz/fuzz-trace FILE. Needs clang with libFuzzer (Debian: clang).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_ARGS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SRC := $(filter-out $(ANALYZE_MAIN),$(ANALYZE_SRC)) $(HTML_GEN)
FUZZ_OBJ := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_SRC))
FUZZ_DEPS := $(wildcard analyze/*/*.h include/memtrace/*.h)

$(B)/fuzz/obj/%.o: %.c $(FUZZ_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -Ianalyze -std=gnu11 $(WARN) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

$(B)/fuzz/fuzz-trace: tests/fuzz/fuzz-trace.c $(FUZZ_OBJ) $(FUZZ_DEPS)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 $(WARN) -O1 -g -Ianalyze -fsanitize=fuzzer $(FUZZ_SAN) \
	  tests/fuzz/fuzz-trace.c $(FUZZ_OBJ) -o $@ $(ANALYZE_LIBS)

fuzz:
	$(Q)printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' | \
	  $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null || \
	  { echo "make fuzz: '$(FUZZ_CC) -fsanitize=fuzzer' does not link: install clang with libFuzzer (apt-get install clang), or set FUZZ_CC"; exit 2; }
	$(Q)$(MAKE) --no-print-directory $(B)/fuzz/fuzz-trace
	$(Q)mkdir -p $(B)/fuzz/corpus
	cd $(B)/fuzz && ./fuzz-trace -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 \
	  -print_final_stats=1 -artifact_prefix=./ $(FUZZ_ARGS) corpus $(CURDIR)/tests/fuzz/corpus

# make fuzz2 [FUZZ2_SECONDS=600] [FUZZ2_SEED=N]: the format-2 mutation
# fuzzer (tests/fuzz/fuzz2.py: mutants of real traces through every command,
# and what each must say of them) for longer than its bounded run in make
# test (tests/t413-fuzz-format2.sh, 40 s); with ASAN=1 under ASan and UBSan.
FUZZ2_SECONDS ?= 600
fuzz2:
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)FUZZ2_SECONDS=$(FUZZ2_SECONDS) sh tests/t413-fuzz-format2.sh

# --- install --------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/memtrace \
	  $(DESTDIR)$(PREFIX)/share/memtrace
	install -m 755 $(B)/memtrace $(DESTDIR)$(PREFIX)/bin/memtrace
	install -m 755 $(B)/libmemtrace.so $(DESTDIR)$(PREFIX)/lib/memtrace/libmemtrace.so
	install -d $(DESTDIR)$(PREFIX)/lib/memtrace/python && install -m 644 python/*.py $(DESTDIR)$(PREFIX)/lib/memtrace/python/
	install -m 644 scripts/*.gp $(DESTDIR)$(PREFIX)/share/memtrace/ 2>/dev/null || true

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
