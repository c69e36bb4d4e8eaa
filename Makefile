# SPDX-License-Identifier: GPL-2.0-only
#
# ktest: build, test and install.
#
#   make                 build ktest/ktest (the engine's folder is ktest/, so the
#                        binary sits in it, as tools/perf/perf does in the kernel)
#   make check           build and run every test; ends with "N passed, N failed"
#   make SAN=1 check     the same under AddressSanitizer + UBSan
#   make check-host      the unit and command line tests only: no lab (the
#                        kernel builds and qemu boots), no fuzzing
#   make check-unit      the unit tests only (no lab)
#   make build-check     build what check runs (build-unit: check-unit)
#   make valgrind        the unit tests under valgrind memcheck: no error, no
#                        leak (the lab ones only when KTEST_LAB is set)
#   make fuzz            run the libFuzzer targets for longer (FUZZ_SECONDS)
#   make check FUZZ_EACH=60 FUZZ_JOBS=2
#                        (CI) every fuzz target 60 s, two at a time
#   make bench           run the benchmarks
#   make deps            install the Debian packages the build and tests need
#   make install PREFIX=/usr/local DESTDIR=
#                        the binary, man pages, examples, bash completion
#   make uninstall PREFIX=/usr/local DESTDIR=
#
# CI=true turns warnings into errors.

VERSION := 0.1.0

# What the build was made from, for ktest --version: git describe of the work
# tree at build time (here only, never at run time). A tree without .git (a
# tarball, a Debian source package) builds without it: the plain VERSION.
GIT_DESCRIBE := $(if $(wildcard .git),$(shell GIT_OPTIONAL_LOCKS=0 \
	git describe --always --dirty 2>/dev/null))

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS := libconfuse libgit2 libssh libserialport libpcre2-8 libcurl

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/ktest
EXAMPLEDIR ?= $(DOCDIR)/examples
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -Wformat=2
ifeq ($(CI),true)
WARN += -Werror
endif

ifeq ($(SAN),1)
# the tests' LD_PRELOAD shims must not stop the sanitized binaries
export ASAN_OPTIONS ?= verify_asan_link_order=0
O := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
OPT := -O1 -g
else
O := build
SANFLAGS :=
OPT := -O2 -g
endif

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

CPPFLAGS += -D_GNU_SOURCE -DKTEST_VERSION='"$(VERSION)"' -I.
CFLAGS ?= $(OPT)
CFLAGS += -std=c11 $(WARN) $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS += $(PKG_LIBS) -lm

# Every .c under the four rooms is part of the engine library, except main.
LIB_SRCS := $(filter-out ktest/main.c, \
	$(wildcard conf/*.c ktest/*.c power/*.c console/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
LIB := $(O)/libktest.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/%)
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 300

BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(O)/bench/%)

MANPAGES := $(wildcard doc/*.1 doc/*.5)

.PHONY: FORCE all check check-host check-unit build-check build-unit unit valgrind fuzz \
	fuzz-build bench deps install \
	uninstall clean

ifeq ($(SAN),1)
BIN := $(O)/bin/ktest
else
BIN := ktest/ktest
endif

all: $(BIN)

$(BIN): $(O)/ktest/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Only main.o holds the git describe; it is rebuilt when that changes.
$(O)/ktest/main.o: CPPFLAGS += -DKTEST_GIT='"$(GIT_DESCRIBE)"'
$(O)/ktest/main.o: $(O)/git-describe
$(O)/git-describe: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_DESCRIBE)' | cmp -s - $@ || echo '$(GIT_DESCRIBE)' > $@

FORCE:

$(LIB): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# The state machines are pure: their tests link them alone, without libgit2,
# libssh or anything else, so any I/O dependency breaks the build.
PURE_OBJS := $(addprefix $(O)/,ktest/bisect.o ktest/patchcheck.o \
	ktest/config_bisect.o ktest/min_config.o ktest/flaky.o conf/kconfig.o \
	conf/strmap.o)
PURE_TESTS := $(filter $(O)/tests/test_bisect $(O)/tests/test_patchcheck \
	$(O)/tests/test_flaky \
	$(O)/tests/test_config_bisect $(O)/tests/test_min_config,$(UNIT_BINS))
$(PURE_TESTS): $(O)/tests/%: tests/unit/%.c $(PURE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(PURE_OBJS) $(LDFLAGS) -lcmocka -lm

# libFuzzer targets: clang, with the engine built in (not the gcc lib): its
# sources compiled once for all of them (fuzzer-no-link instrumentation)
FUZZ_FLAGS := $(CPPFLAGS) -std=c11 -g -O1 $(PKG_CFLAGS)
FUZZ_OBJS := $(LIB_SRCS:%.c=$(O)/fuzzobj/%.o)
.SECONDARY: $(FUZZ_OBJS)
$(O)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP \
		-fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
$(O)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(FUZZ_OBJS) $(PKG_LIBS) -lm

$(O)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

unit: $(UNIT_BINS)

fuzz-build: $(FUZZ_BINS)

# Every test: unit binaries, the script tests, a short fuzz run.
# The lab's (kernel builds and boots) run alongside the others, at nice 15.
check: $(BIN) $(UNIT_BINS) $(FUZZ_BINS)
	KTEST_BUILD=$(O) KTEST=$(CURDIR)/$(BIN) FUZZ_SECONDS=$${FUZZ_SECONDS:-15} \
		sh tests/run-tests.sh $(HOST_UNITS) --lab $(LAB_UNITS) \
		--fuzz $(FUZZ_BINS)

valgrind: $(UNIT_BINS)
	sh tests/run-valgrind.sh $(UNIT_BINS)

# What needs no lab: CI runs it again with SAN=1, where the lab's kernel
# builds and boots would take 20 minutes more.
LAB_UNITS := $(O)/tests/test_kbuild_real $(O)/tests/test_qemu
HOST_UNITS := $(filter-out $(LAB_UNITS), $(UNIT_BINS))
check-host: $(BIN) $(HOST_UNITS)
	KTEST_E2E=0 KTEST_BUILD=$(O) KTEST=$(CURDIR)/$(BIN) \
		sh tests/run-tests.sh $(HOST_UNITS)

# The unit tests alone, without the lab's (CI: the plain build's).
check-unit: $(BIN) $(HOST_UNITS)
	KTEST_E2E=0 KTEST_CLI=0 KTEST_BUILD=$(O) KTEST=$(CURDIR)/$(BIN) \
		sh tests/run-tests.sh $(HOST_UNITS)

# What check and check-unit run, built only (CI builds with -j first: the
# tests themselves run make without a jobserver).
build-check: $(BIN) $(UNIT_BINS) $(FUZZ_BINS)
build-unit: $(BIN) $(HOST_UNITS)

fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do \
		n=$$(basename $$f); mkdir -p $(O)/fuzz-corpus/$$n; \
		echo "fuzzing $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			$(O)/fuzz-corpus/$$n tests/fuzz/corpus/$$n || exit 1; \
	done

bench: $(BIN) $(BENCH_BINS)
	KTEST=$(CURDIR)/$(BIN) sh bench/run.sh $(abspath $(BENCH_BINS))

deps:
	sh .ci/deps.sh

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(EXAMPLEDIR) \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/ktest
	install -m 644 dist/bash-completion/ktest $(DESTDIR)$(BASHCOMPDIR)/ktest
	for m in $(MANPAGES); do \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	cp -R examples/. $(DESTDIR)$(EXAMPLEDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ktest $(DESTDIR)$(BASHCOMPDIR)/ktest
	for m in $(MANPAGES); do \
		s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$$(basename $$m); \
	done
	rm -rf $(DESTDIR)$(EXAMPLEDIR)
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build build-san ktest/ktest

-include $(shell find $(O) -name '*.d' 2>/dev/null)
