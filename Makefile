# mfmt build. `make` -> build/mfmt, build/libmfmt.a, build/libmfmt.so
# `make test` -> unit tests + conformance, normal and under ASan+UBSan.
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
OPT     ?= -O2
# -ffp-contract=off: ggml's reference quantizers round every a*b+c twice;
# fused multiply-add would change output bits (see doc/quant.md).
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g $(OPT) \
	-Wall -Wextra -Werror -Wno-unused-parameter -fPIC -ffp-contract=off \
	-fno-strict-aliasing
CFLAGS  += $(CFLAGS_BASE) $(EXTRA_CFLAGS)
# The library sees its own headers; the CLI (and the example) only the
# public ones, which proves the public API is enough.
LIB_INC  = -Iinclude -Ilib
CLI_INC  = -Iinclude
LDLIBS  = -ljansson -lyaml -lcrypto -lxxhash -lz -lblosc -lsz -lpcre2-8 -lcurl -lpthread -lm

# The version is written once, in include/mfmt.h; the soname follows the
# major number (Debian's libmfmt0 package would ship libmfmt.so.0).
version_part = $(shell sed -n 's/^\#define MF_VERSION_$(1) \([0-9]*\)$$/\1/p' include/mfmt.h)
VERSION  := $(call version_part,MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME   := libmfmt.so.$(call version_part,MAJOR)
SOFILE   := libmfmt.so.$(VERSION)

LIB_SRC  := $(sort $(wildcard lib/*/*.c lib/formats/*/*.c lib/ops/hfconv/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# -MMD -MP: each object's compile writes its .d (the headers it included),
# read back below, so a header edit rebuilds what includes it, not all.
DEPFLAGS = -MMD -MP

all: $(BUILD)/mfmt $(BUILD)/libmfmt.a $(BUILD)/libmfmt.so

# -fvisibility=hidden: the shared library exports only what mfmt.h marks
# MF_API (the static library, used by tests and fuzzers, keeps everything).
$(BUILD)/lib/%.o: lib/%.c $(BUILD)/lib/%.d
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) $(DEPFLAGS) $(LIB_INC) -fvisibility=hidden -c $< -o $@

$(BUILD)/cli/%.o: cli/%.c $(BUILD)/cli/%.d
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) $(DEPFLAGS) $(CLI_INC) -c $< -o $@

$(BUILD)/libmfmt.a: $(LIB_OBJ)
	@rm -f $@
	@echo "AR $@"
	@ar rcs $@ $^

$(BUILD)/$(SOFILE): $(LIB_OBJ)
	@echo "LD $@ (soname $(SONAME))"
	@$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# libmfmt.so -> libmfmt.so.0 -> libmfmt.so.0.X.Y, as installed
$(BUILD)/libmfmt.so: $(BUILD)/$(SOFILE)
	@ln -sf $(SOFILE) $(BUILD)/$(SONAME)
	@ln -sf $(SONAME) $@

$(BUILD)/mfmt: $(CLI_OBJ) $(BUILD)/libmfmt.a
	@echo "LD $@"
	@$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libmfmt.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/tests/%.d $(BUILD)/libmfmt.a
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) $(DEPFLAGS) $(LIB_INC) -Itests -o $@ $< $(BUILD)/libmfmt.a $(LDFLAGS) $(LDLIBS)

# A missing .d (an object built before this rule, or never) rebuilds its
# object: the empty rule makes it a target that is always out of date.
DEP_FILES := $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d)
$(DEP_FILES):
-include $(DEP_FILES)

# fault injection: the library's allocations and I/O calls go through the
# test's wrappers (tests/test_faults.c), which fail the Nth one
FAULT_WRAP = malloc calloc realloc strdup strndup open openat read pread write fsync \
	rename renameat linkat mmap copy_file_range fopen
$(BUILD)/tests/test_faults: override LDFLAGS += $(patsubst %,-Wl$(comma)--wrap=%,$(FAULT_WRAP))
comma := ,

# a test that includes a fuzz harness's source
$(BUILD)/tests/test_fuzz_quant: fuzz/fuzz_quant.c

tests-build: $(BUILD)/mfmt $(BUILD)/libmfmt.so $(TEST_BIN)

# Runs every unit test, the conformance run and the layer check (exports,
# SONAME, includes: tests/check_layers.sh); prints "N passed, N failed".
check: tests-build
	@MFMT=$(BUILD)/mfmt BUILD=$(BUILD) SUMMARY=$(BUILD)/test-summary sh tests/run.sh $(TEST_BIN) \
	  tests/check_layers.sh tests/check_cli.sh tests/check_readme.sh tests/check_batch.sh \
	  tests/check_pickle_oracle.sh tests/check_gate_oracle.sh
	@sh tests/npy_diff.sh $(BUILD)/mfmt

# doc/mfmt.1's per-command options, from the option tables (cli/cmd_*.c)
man: $(BUILD)/mfmt
	@sed -i '/^\.\\" BEGIN OPTIONS/,/^\.\\" END OPTIONS/{//!d}' doc/mfmt.1
	@$(BUILD)/mfmt help --man > $(BUILD)/man-options.roff
	@sed -i '/^\.\\" BEGIN OPTIONS/r $(BUILD)/man-options.roff' doc/mfmt.1

# The kernels' branch for machines other than x86-64 (lib/quant/qimpl.h,
# MQ_X86_KERNELS), built here with MF_PORTABLE_KERNELS: it must compile, link
# and give the reference bytes with the scalar code alone.
PORTABLE_TESTS := $(addprefix build/portable/tests/test_,quant quant_ref quant_mix quant_simd \
                  quant_lattice_simd imatrix)
check-portable:
	@$(MAKE) --no-print-directory BUILD=build/portable EXTRA_CFLAGS=-DMF_PORTABLE_KERNELS $(PORTABLE_TESTS)
	@BUILD=build/portable SUMMARY=build/portable/test-summary sh tests/run.sh $(PORTABLE_TESTS)

SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The last line is the total over the C runs and the Python tests:
# "N passed, N failed".
test:
	@rm -f build/test-summary build/asan/test-summary build/portable/test-summary build/python-summary
	@st=0; $(MAKE) --no-print-directory check || st=1; \
	echo "== again under AddressSanitizer + UndefinedBehaviorSanitizer"; \
	$(MAKE) --no-print-directory check BUILD=build/asan OPT=-O1 EXTRA_CFLAGS="$(SAN)" LDFLAGS="$(SAN)" || st=1; \
	echo "== the quantizers without the x86 kernels (MF_PORTABLE_KERNELS)"; \
	$(MAKE) --no-print-directory check-portable || st=1; \
	echo "== the Python package (python/)"; \
	$(MAKE) --no-print-directory python-test SUMMARY=build/python-summary || st=1; \
	cat build/test-summary build/asan/test-summary build/portable/test-summary build/python-summary 2>/dev/null | \
	  awk '{p+=$$1; f+=$$2; s+=$$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}'; exit $$st

# The Python package (python/), built in place against $(BUILD)/libmfmt.a;
# `make python-test` runs its pytest suite ("python: N passed, N failed").
# /usr/bin/python3 first: Debian's python3-numpy/-pytest live there, and a
# python3 earlier in PATH (pyenv) may lack them.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
python: $(BUILD)/libmfmt.a
	@echo "PY  python/mfmt/_mfmt (setup.py build_ext --inplace)"
	@cd python && MFMT_BUILD=$(abspath $(BUILD)) MFMT_NO_MAKE=1 $(PYTHON) setup.py -q \
	  build_ext --inplace >/dev/null

# the libraries libmfmt.a needs (python/setup.py links them after it)
print-ldlibs:
	@echo $(LDLIBS)

python-test: python $(BUILD)/mfmt
	@MFMT=$(abspath $(BUILD))/mfmt PYTHON=$(PYTHON) sh python/tests/run.sh

# libFuzzer harnesses, one per reader (fuzz/fuzz_*.c); FUZZ_SECONDS each.
# `make fuzz FUZZ_TARGETS="gguf safetensors"` runs only those; `make
# fuzz-build` builds without running (then: sh fuzz/run.sh SECONDS NAME...).
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?=
fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" build/fuzz/libmfmt.a
	@mkdir -p build/fuzz/bin
	@set -e; for f in $(FUZZ_SRC); do n=$$(basename $$f .c); echo "FUZZ $$n"; \
	  clang $(CFLAGS_BASE) $(LIB_INC) -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o build/fuzz/bin/$$n $$f \
	    build/fuzz/libmfmt.a $(LDLIBS); done

fuzz: fuzz-build
	@sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Every harness once over its seeds (fuzz/seeds/NAME) with no mutation: a
# deterministic check for CI (mutation runs, `make fuzz`, find new inputs at
# random; they are run by hand and their findings become tests/regress cases).
fuzz-replay: fuzz-build
	@set -e; for f in $(FUZZ_SRC); do n=$$(basename $$f .c | sed 's/^fuzz_//'); \
	  if [ -d fuzz/seeds/$$n ]; then \
	    build/fuzz/bin/fuzz_$$n -runs=0 -rss_limit_mb=2048 fuzz/seeds/$$n > build/fuzz/replay-$$n.log 2>&1 || \
	      { tail -30 build/fuzz/replay-$$n.log; echo "fuzz-replay: $$n FAILED"; exit 1; }; \
	    echo "fuzz-replay: $$n ok ($$(ls fuzz/seeds/$$n | wc -l) seeds)"; fi; done

bench: all python
	$(MAKE) -C bench BUILD=../$(BUILD)

# only the Python rows of the benchmark
bench-python: all python
	$(MAKE) -C bench python BUILD=../$(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/mfmt $(DESTDIR)$(PREFIX)/bin/mfmt
	install -m 644 $(BUILD)/libmfmt.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/$(SOFILE) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(SOFILE) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libmfmt.so
	install -d $(DESTDIR)$(PREFIX)/include/mfmt
	install -m 644 include/mfmt.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/mfmt/*.h $(DESTDIR)$(PREFIX)/include/mfmt/
	install -m 644 doc/mfmt.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' doc/mfmt.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mfmt.pc

# Installs into a temporary prefix and builds a program against it (pkg-config).
install-check: all
	@sh tests/install_check.sh

clean:
	rm -rf build python/build python/mfmt/_mfmt*.so

.PHONY: all man test check check-portable tests-build fuzz fuzz-build fuzz-replay bench install install-check clean \
	python python-test bench-python print-ldlibs
