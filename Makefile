# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gaptrace build: BPF objects -> skeletons -> gaptrace (libbpf static),
# libgaptrace-cupti.so (when a CUDA toolkit is present), workloads, tests.
# Quiet by default; `make V=1` shows the commands.

OUTPUT ?= .output
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
CC ?= cc
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc

LLVM_STRIP ?= llvm-strip
CLANG_FORMAT ?= clang-format

# Only x86-64 is supported: the BPF program reads x86-64 registers and syscall
# numbers (include/gaptrace/gaptrace_syscalls.h) and vmlinux/ holds only vmlinux/x86.
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/')
ifneq ($(ARCH),x86)
ifeq ($(filter deps clean format format-check,$(MAKECMDGOALS)),)
$(error gaptrace builds on x86-64 only (this machine is $(shell uname -m)): the BPF program uses x86-64 registers and syscall numbers)
endif
endif
VMLINUX := vmlinux/$(ARCH)/vmlinux.h
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

# gaptrace --version: "gaptrace 0.1 (git 9f46350)"; the release is bumped by hand.
GT_RELEASE := 0.1
GT_GIT := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
GT_VERSION := $(GT_RELEASE) (git $(GT_GIT))

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -g -O2
override CFLAGS += -std=gnu11 $(WARN) -fno-omit-frame-pointer -D_GNU_SOURCE \
	-DGT_VERSION='"$(GT_VERSION)"'
# include/gaptrace/: every format that crosses a boundary (BPF, CUPTI library,
# capture), included as "gaptrace/NAME.h"; user/ reaches nothing in bpf/ or cupti/.
INCLUDES := -I$(OUTPUT) -Iinclude -Iuser
GT_HDRS := $(wildcard include/gaptrace/*.h)
# The public USDT header: programs (the workloads) include it as installed,
# "gaptrace-usdt.h" with -I$(USDT_INC).
USDT_INC := include/gaptrace
USDT_H := $(USDT_INC)/gaptrace-usdt.h
# libbpf, libdw (--stacks dwarf unwinding) and what they need (libelf, zlib,
# lzma, bzip2: `pkg-config --static --libs`) linked statically so the binary
# can be copied to another host; Debian ships them all as .a.
STATIC_PKGS := libbpf libdw libzstd
STATIC_LIBS := $(shell pkg-config --static --libs $(STATIC_PKGS) 2>/dev/null)
# libbpf 1.4 or later (bookworm-backports, tools/install-deps): USDT probes
# and uprobes attached as multi-uprobe links, one per object and process.
ifeq ($(filter deps clean format format-check,$(MAKECMDGOALS)),)
ifneq ($(shell pkg-config --atleast-version=1.4 libbpf && echo y),y)
$(error gaptrace needs libbpf 1.4 or later (pkg-config finds $(shell pkg-config --modversion libbpf 2>/dev/null)): run 'sudo make deps')
endif
endif
LIBS_STATIC := -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic
# libiberty (Debian ships it static only) for C++ and Rust demangling.
# libmicrohttpd (shared: its static build needs GnuTLS's) for monitor --listen.
LDLIBS := $(LIBS_STATIC) -liberty -lm -lpthread -lmicrohttpd

# The BPF side: one object per concern, linked into one object and skeleton.
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(OUTPUT)/gaptrace.skel.h

USER_SRCS := $(wildcard user/*.c user/*/*.c)
USER_HDRS := $(wildcard user/*.h user/*/*.h)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(OUTPUT)/user/cli/main.o,$(USER_OBJS))

TEST_SRCS := $(wildcard tests/test_*.c)
# The CUPTI library's conversion test needs CUPTI's headers (not its library).
CUPTI_H := $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h)
ifeq ($(CUPTI_H),)
TEST_SRCS := $(filter-out tests/test_cupti_convert.c,$(TEST_SRCS))
endif
TESTS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(TEST_SRCS))
ASAN_TESTS := $(patsubst tests/%.c,$(OUTPUT)/asan/%,$(TEST_SRCS))
ASAN_OBJS := $(patsubst user/%.c,$(OUTPUT)/asan/user/%.o,$(filter-out user/cli/main.c,$(USER_SRCS)))

WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))
# The ground-truth workload without frame pointers, for --stacks dwarf tests.
WORKLOADS += $(OUTPUT)/workloads/prover_sim_nofp $(OUTPUT)/workloads/libfollow_lib.so
# The same blocking stacks without frame pointers, for the --stacks cfi walk.
WORKLOADS += $(OUTPUT)/workloads/cfi_stacks_nofp $(OUTPUT)/workloads/libcfi_dl_lib.so
# A C++ program at g++ -O2 (no frame pointers: GCC's default), where g++ is installed.
CXX_BIN := $(shell command -v g++ 2>/dev/null)
ifneq ($(CXX_BIN),)
WORKLOADS += $(OUTPUT)/workloads/cfi_cxx
endif
# The Rust/tokio one, where cargo and librust-tokio-dev are installed (rules below).
CARGO ?= $(shell command -v /usr/bin/cargo 2>/dev/null || command -v cargo 2>/dev/null)
RUSTC ?= $(if $(CARGO),$(dir $(CARGO))rustc)
TOKIO_DIR := tests/workloads/tokio_prover
TOKIO_OUT := $(OUTPUT)/tokio_prover
TOKIO_SRCS := $(TOKIO_DIR)/Cargo.toml $(TOKIO_DIR)/build.rs $(TOKIO_DIR)/.cargo/config.toml \
	$(wildcard $(TOKIO_DIR)/src/*.rs)
ifneq ($(CARGO),)
ifneq ($(wildcard /usr/share/cargo/registry/tokio-1.*),)
WORKLOADS += $(OUTPUT)/workloads/tokio_prover
endif
endif

HAVE_CUDA := $(shell test -x $(NVCC) -a -f $(CUDA_HOME)/include/cupti.h && echo 1)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(abspath $(OUTPUT))/%,%,$(2))";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all clean deps demo test unit-test integration-test browser-test bench format format-check install uninstall fuzz cupti workloads \
	gpu-workload

all: $(OUTPUT)/gaptrace workloads cupti

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/tests $(OUTPUT)/asan $(OUTPUT)/workloads:
	$(Q)mkdir -p $@

# ---- BPF ----
$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(GT_HDRS) $(wildcard bpf/*.bpf.h) $(VMLINUX) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Iinclude \
		-idirafter /usr/include/$(MULTIARCH) \
		-Wall -Werror -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

# The static linker joins the parts: what two parts share is defined in one
# (common.bpf.c) and extern in the others (bpf/common.bpf.h).
$(OUTPUT)/gaptrace.bpf.o: $(BPF_OBJS) | $(OUTPUT)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- user space ----
$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) $(GT_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/gaptrace: $(USER_OBJS)
	$(call msg,BINARY,$@)
	$(Q)[ -n "$(STATIC_LIBS)" ] || { echo "gaptrace: error: pkg-config finds no static $(STATIC_PKGS): run 'sudo make deps'" >&2; exit 1; }
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# ---- workloads (ground truth programs; frame pointers kept) ----
workloads: $(WORKLOADS)
$(OUTPUT)/workloads/%: tests/workloads/%.c tests/workloads/delay_common.h $(USDT_H) \
		| $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
		-I$(USDT_INC) $< -o $@ -lpthread -lm
$(OUTPUT)/workloads/follow_sim: tests/workloads/follow_sim.h
# The library follow_sim dlopens (its probes appear only then).
$(OUTPUT)/workloads/libfollow_lib.so: tests/workloads/lib/follow_lib.c tests/workloads/follow_sim.h \
		$(USDT_H) | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer \
		-fPIC -shared -I$(USDT_INC) -Itests/workloads $< -o $@
$(OUTPUT)/workloads/prover_sim_nofp: tests/workloads/prover_sim.c tests/workloads/delay_common.h \
		$(USDT_H) | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fomit-frame-pointer \
		-I$(USDT_INC) $< -o $@ -lpthread -lm

$(OUTPUT)/workloads/cfi_stacks_nofp: tests/workloads/cfi_stacks.c | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fomit-frame-pointer \
		$< -o $@ -lpthread

# Code first seen after exec: a program and the library it dlopens, both without frame pointers.
$(OUTPUT)/workloads/cfi_dlopen: tests/workloads/cfi_dlopen.c $(OUTPUT)/workloads/libcfi_dl_lib.so \
		| $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fomit-frame-pointer \
		$< -o $@ -lpthread -ldl
$(OUTPUT)/workloads/libcfi_dl_lib.so: tests/workloads/lib/cfi_dl_lib.c | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -fomit-frame-pointer \
		-fPIC -shared $< -o $@

$(OUTPUT)/workloads/cfi_cxx: tests/workloads/cfi_cxx.cpp | $(OUTPUT)/workloads
	$(call msg,WORKLOAD,$@)
	$(Q)$(CXX_BIN) -g -O2 -std=c++17 -Wall -Wextra -Werror $< -o $@ -lpthread

# ---- the Rust/tokio ground-truth workload (only where cargo is installed) ----
# Debian's cargo and rustc (1.63) with librust-tokio-dev, offline: the crate's
# .cargo/config.toml replaces crates.io with /usr/share/cargo/registry.  The
# crate is copied under $(OUTPUT) so that Cargo.lock and target/ stay out of
# the source tree; its USDT probes come from a C shim linked by build.rs.
$(TOKIO_OUT)/libgt_usdt_shim.a: $(TOKIO_DIR)/usdt_shim.c $(USDT_H)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE -fno-omit-frame-pointer -I$(USDT_INC) \
		-c $< -o $(TOKIO_OUT)/usdt_shim.o
	$(Q)rm -f $@ && ar rcs $@ $(TOKIO_OUT)/usdt_shim.o
$(OUTPUT)/workloads/tokio_prover: $(TOKIO_SRCS) $(TOKIO_OUT)/libgt_usdt_shim.a | $(OUTPUT)/workloads
	$(call msg,CARGO,$@)
	$(Q)mkdir -p $(TOKIO_OUT)/crate
	$(Q)cp -rp $(TOKIO_DIR)/Cargo.toml $(TOKIO_DIR)/build.rs $(TOKIO_DIR)/src $(TOKIO_DIR)/.cargo \
		$(TOKIO_OUT)/crate/
	$(Q)cd $(TOKIO_OUT)/crate && GT_USDT_SHIM_DIR=$(abspath $(TOKIO_OUT)) RUSTC=$(RUSTC) \
		$(CARGO) build --offline --release $(if $(Q),--quiet) \
		--target-dir $(abspath $(TOKIO_OUT)/target)
	$(Q)cp $(TOKIO_OUT)/target/release/tokio_prover $@

# ---- CUPTI injection library (skipped without a toolkit) ----
cupti:
ifeq ($(HAVE_CUDA),1)
	$(Q)$(MAKE) --no-print-directory -f cupti/cupti.mk OUTPUT=$(OUTPUT) CUDA_HOME=$(CUDA_HOME) Q=$(Q)
else
	@echo "  SKIP     libgaptrace-cupti.so: no CUDA toolkit at $(CUDA_HOME) (set CUDA_HOME)"
endif

# ---- the ground-truth workload on a real GPU (tools/gpu-check runs it) ----
# Where toolkits keep CUPTI (as cupti/cupti.mk): next to the runtime or under extras/CUPTI.
GPU_CUPTI_INCDIRS := $(wildcard $(CUDA_HOME)/extras/CUPTI/include)
GPU_CUPTI_LIBDIRS := $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib $(CUDA_HOME)/extras/CUPTI/lib64)
NVCC_FLAGS := -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 -Xcompiler -Wall,-Wextra,-Werror,-fno-omit-frame-pointer
gpu-workload:
ifeq ($(HAVE_CUDA),1)
	$(call msg,NVCC,$(OUTPUT)/gpu/prover_gpu)
	$(Q)mkdir -p $(OUTPUT)/gpu
	$(Q)$(NVCC) $(NVCC_FLAGS) -I$(USDT_INC) -Itests/workloads tests/gpu/prover_gpu.cu \
		-o $(OUTPUT)/gpu/prover_gpu -lpthread
	$(call msg,NVCC,$(OUTPUT)/gpu/launch_loop)
	$(Q)$(NVCC) $(NVCC_FLAGS) tests/gpu/launch_loop.cu -o $(OUTPUT)/gpu/launch_loop
	$(call msg,NVCC,$(OUTPUT)/gpu/cupti_cost)
	$(Q)$(NVCC) $(NVCC_FLAGS) $(addprefix -I,$(GPU_CUPTI_INCDIRS)) tests/gpu/cupti_cost.cu \
		-o $(OUTPUT)/gpu/cupti_cost $(addprefix -L,$(GPU_CUPTI_LIBDIRS)) \
		$(addprefix -Xlinker -rpath=,$(GPU_CUPTI_LIBDIRS)) -lcupti
	$(call msg,NVCC,$(OUTPUT)/gpu/pm_sampling_cost)
	$(Q)$(NVCC) $(NVCC_FLAGS) $(addprefix -I,$(GPU_CUPTI_INCDIRS)) tests/gpu/pm_sampling_cost.cu \
		-o $(OUTPUT)/gpu/pm_sampling_cost $(addprefix -L,$(GPU_CUPTI_LIBDIRS)) \
		$(addprefix -Xlinker -rpath=,$(GPU_CUPTI_LIBDIRS)) -lcupti -lcuda -lpthread
	$(call msg,CC-SO,$(OUTPUT)/gpu/libother-subscriber.so)
	$(Q)$(CC) -O2 -fPIC -shared -Wall -Wextra -Werror -I$(CUDA_HOME)/include \
		tests/gpu/other_subscriber.c -o $(OUTPUT)/gpu/libother-subscriber.so \
		-L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcupti
else
	@echo "  SKIP     prover_gpu: no CUDA toolkit at $(CUDA_HOME) (set CUDA_HOME)"
endif

# ---- tests ----
$(OUTPUT)/tests/%: tests/%.c $(LIB_OBJS) $(wildcard tests/*.h) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itests $< $(LIB_OBJS) $(LDLIBS) -lcmocka -o $@

# Library test_inject loads into running children (live attach).
$(OUTPUT)/tests/libinject_probe.so: tests/data/inject_probe.c | $(OUTPUT)/tests
	$(call msg,LIB,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE -fPIC -shared $< -o $@
$(OUTPUT)/tests/test_inject $(OUTPUT)/asan/test_inject: $(OUTPUT)/tests/libinject_probe.so

# test_unwind unwinds a program built without frame pointers (and checks the
# frame-pointer detector on it and on the same code built with them).
$(OUTPUT)/tests/nofp: tests/data/nofp.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -fomit-frame-pointer $< -o $@
$(OUTPUT)/tests/withfp: tests/data/nofp.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -fno-omit-frame-pointer $< -o $@
$(OUTPUT)/tests/test_unwind $(OUTPUT)/asan/test_unwind: $(OUTPUT)/tests/nofp $(OUTPUT)/tests/withfp
# test_syms_dwfl strips this one in every way (build-id tree, debuglink, MiniDebugInfo).
$(OUTPUT)/tests/inline_spin: tests/data/inline_spin.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -Wl,--build-id $< -o $@
$(OUTPUT)/tests/test_syms_dwfl $(OUTPUT)/asan/test_syms_dwfl: $(OUTPUT)/tests/inline_spin
# test_fuzz_replay includes the analysis fuzzer's target to replay its inputs.
$(OUTPUT)/tests/test_fuzz_replay $(OUTPUT)/asan/test_fuzz_replay: tests/fuzz/fuzz_analysis.c

# test_cupti_convert links the CUPTI library's conversion and what it calls
# (helpers, names) without CUPTI: the test stands in for the CUPTI calls,
# takes the records at batch_fire and fixes the conversion's clock.
CUPTI_TEST_SRCS := cupti/gaptrace_cupti.c cupti/gaptrace_cupti_names.c cupti/gaptrace_cupti_convert.c
CUPTI_TEST_FLAGS := -Icupti -Iinclude $(addprefix -I,$(CUDA_HOME)/include $(wildcard $(CUDA_HOME)/extras/CUPTI/include)) \
	-Wl,--wrap=batch_fire -Wl,--wrap=mono_now
$(OUTPUT)/tests/test_cupti_convert: tests/test_cupti_convert.c $(CUPTI_TEST_SRCS) $(wildcard cupti/*.h) $(GT_HDRS) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(CUPTI_TEST_FLAGS) $< $(CUPTI_TEST_SRCS) -lcmocka -lpthread -o $@
$(OUTPUT)/asan/test_cupti_convert: tests/test_cupti_convert.c $(CUPTI_TEST_SRCS) $(wildcard cupti/*.h) $(GT_HDRS) | $(OUTPUT)/asan
	$(call msg,TEST-ASAN,$@)
	$(Q)$(CC) $(CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(CUPTI_TEST_FLAGS) $< $(CUPTI_TEST_SRCS) -lcmocka -lpthread -o $@

$(OUTPUT)/asan/user/%.o: user/%.c $(USER_HDRS) $(GT_HDRS) $(SKELS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(INCLUDES) -c $< -o $@

$(OUTPUT)/asan/%: tests/%.c $(ASAN_OBJS) $(wildcard tests/*.h) | $(OUTPUT)/asan
	$(call msg,TEST-ASAN,$@)
	$(Q)$(CC) $(CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(INCLUDES) -Itests $< $(ASAN_OBJS) $(LDLIBS) -lcmocka -o $@

$(OUTPUT)/bench/gen_capture: tests/bench/gen_capture.c $(LIB_OBJS)
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/bench/zread_bench: tests/bench/zread_bench.c $(LIB_OBJS)
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/bench/sink_bench: tests/bench/sink_bench.c $(LIB_OBJS)
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/bench/switch_stress: tests/bench/switch_stress.c
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE -fno-omit-frame-pointer $< -o $@ -lpthread

$(OUTPUT)/bench/malloc_churn: tests/bench/malloc_churn.c
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE -fno-omit-frame-pointer $< -o $@

$(OUTPUT)/bench/tick_cost: tests/bench/tick_cost.c
	$(call msg,BENCH,$@)
	$(Q)mkdir -p $(OUTPUT)/bench
	$(Q)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE $< -o $@

deps:
	$(Q)tools/install-deps

unit-test: $(TESTS) $(ASAN_TESTS)
	$(Q)tools/run-unit-tests $(TESTS) $(ASAN_TESTS)

integration-test: $(OUTPUT)/gaptrace workloads $(OUTPUT)/bench/switch_stress $(OUTPUT)/bench/malloc_churn \
		$(OUTPUT)/bench/gen_capture
	$(Q)tests/integration/run-all $(OUTPUT)

# Headless Chromium (Debian's chromium, npm playwright-core): the flame graph
# SVG (hover, zoom, search) and its folded stacks in speedscope, the HTML report
# and the trace export must open without errors; screenshots in .output/artifacts.
browser-test: $(OUTPUT)/gaptrace workloads $(OUTPUT)/tests/test_flame
	$(Q)tools/install-deps --browser
	$(Q)tests/browser/run $(OUTPUT)

test: deps
	$(Q)tools/check-layout --self-test && tools/check-layout
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory unit-test
	$(Q)$(MAKE) --no-print-directory integration-test
	$(Q)tools/cupti-mock-check $(OUTPUT)
	$(Q)$(MAKE) --no-print-directory browser-test

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo $(OUTPUT)

bench: deps
	$(Q)tools/install-deps --bench
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/bench/gen_capture $(OUTPUT)/bench/switch_stress \
		$(OUTPUT)/bench/sink_bench $(OUTPUT)/bench/tick_cost $(OUTPUT)/bench/malloc_churn \
		$(OUTPUT)/bench/zread_bench
	$(Q)tools/bench $(OUTPUT)

# FUZZ_SECONDS of the analysis fuzzer (the reader and demangler targets: 20 s each).
FUZZ_SECONDS ?= 300
fuzz:
	$(Q)tools/install-deps --fuzz
	$(Q)tools/build-fuzz $(OUTPUT) --run $(FUZZ_SECONDS)

# docs/gaptrace.1 and docs/gaptrace.bash-completion, from the help text and
# the long-option tables (checked in; tests/integration/cli-check fails when stale).
.PHONY: docs
docs: $(OUTPUT)/gaptrace
	$(Q)tools/gen-docs $(OUTPUT)/gaptrace

# Every C, CUDA and header file of the project (vmlinux.h is generated).
FORMAT_SRCS = $(filter-out vmlinux/%,$(shell git ls-files '*.c' '*.h' '*.cu'))
format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)

# CI: fails, naming the files, when one is not formatted (`make format` fixes it).
format-check:
	$(Q)bad=$$(for f in $(FORMAT_SRCS); do $(CLANG_FORMAT) $$f | cmp -s - $$f || echo $$f; done); \
	if [ -n "$$bad" ]; then \
		echo "gaptrace: error: not clang-formatted: $$(echo $$bad): run 'make format'" >&2; exit 1; fi; \
	echo "  FORMAT   $(words $(FORMAT_SRCS)) files clean"

# Installation: PREFIX (default /usr/local) and DESTDIR (staging) as usual.
# record finds the CUPTI library at BINDIR/../lib/gaptrace (any PREFIX).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
MANPAGE ?= docs/gaptrace.1
BASHCOMP ?= docs/gaptrace.bash-completion
INSTALL_FILES := $(BINDIR)/gaptrace $(LIBDIR)/gaptrace/libgaptrace-cupti.so \
	$(INCLUDEDIR)/gaptrace-usdt.h $(MANDIR)/man1/gaptrace.1 $(BASHCOMPDIR)/gaptrace

install: $(OUTPUT)/gaptrace cupti
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(OUTPUT)/gaptrace $(DESTDIR)$(BINDIR)/gaptrace
	$(Q)if [ -f $(OUTPUT)/libgaptrace-cupti.so ]; then \
		install -D -m 0644 $(OUTPUT)/libgaptrace-cupti.so \
			$(DESTDIR)$(LIBDIR)/gaptrace/libgaptrace-cupti.so; fi
	$(Q)install -D -m 0644 $(USDT_H) $(DESTDIR)$(INCLUDEDIR)/gaptrace-usdt.h
	$(Q)if [ -f $(MANPAGE) ]; then \
		install -D -m 0644 $(MANPAGE) $(DESTDIR)$(MANDIR)/man1/gaptrace.1; fi
	$(Q)if [ -f $(BASHCOMP) ]; then \
		install -D -m 0644 $(BASHCOMP) $(DESTDIR)$(BASHCOMPDIR)/gaptrace; fi

# Removes what install put there, and the gaptrace library directory once empty.
uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(addprefix $(DESTDIR),$(INSTALL_FILES))
	$(Q)rmdir $(DESTDIR)$(LIBDIR)/gaptrace 2>/dev/null || true

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT)
