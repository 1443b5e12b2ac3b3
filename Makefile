# gputop — build, test, demo, bench, install.  `make V=1` shows the commands.
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

CC      ?= cc
CFLAGS  ?= -O2 -g
# The layers of src/, bottom up (docs/architecture.md): each may call only those below it.
LAYERS  := base figures cuda output probe engine
CFLAGS  += -std=gnu11 -pthread -Wall -Wextra -Werror -Wno-unused-parameter \
           -Isrc $(LAYERS:%=-Isrc/%) -Iarch -Iui -Iinject -DGPUTOP_VERSION='"$(VERSION)"'
LDLIBS  += -ldw -lelf -lcapstone -ljansson -lncursesw -ltinfo -ldl -lstdc++ -lm -pthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

BUILD   := build
SRC     := $(wildcard src/*.c) $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c)) \
           $(filter-out arch/tally.c,$(wildcard arch/*.c)) $(wildcard ui/*.c)
ASM     := $(wildcard arch/*.S)
OBJ     := $(SRC:%.c=$(BUILD)/%.o) $(ASM:%.S=$(BUILD)/%.o)

# --gpu-time's library, loaded into the program (inject/gputime.c): built where CUPTI's headers
# are (the CUDA toolkit); without them --gpu-time says it is missing.
CUDA    ?= /usr/local/cuda
GPULIB  := $(if $(wildcard $(CUDA)/include/cupti.h),$(BUILD)/libgputop-gpu.so)

all: $(BUILD)/gputop $(GPULIB)

$(BUILD)/libgputop-gpu.so: inject/gputime.c inject/gputime_layout.h inject/gputime_totals.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
		-Wno-unused-parameter -I$(CUDA)/include -Iinject -o $@ $< -ldl -pthread

$(BUILD)/gputop: $(OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)
	$(Q)ln -sf $(BUILD)/gputop gputop

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) -Iarch -Wa,-I$(BUILD)/arch -c -o $@ $<

# The tallies' code (arch/tally.c), which the stubs carry into the program: position-independent
# by construction, and checked so: no relocation, no data, no call out, tally_entry first.
TALLY_CFLAGS := -std=gnu11 -O2 -ffreestanding -fno-builtin -fno-stack-protector -fcf-protection=none \
                -mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-jump-tables -fno-pic -fno-pie \
                -fno-tree-loop-distribute-patterns -Wall -Wextra -Werror -Iarch
$(BUILD)/arch/tally.bin: arch/tally.c arch/tally.h arch/stub_layout.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(TALLY_CFLAGS) -c -o $(BUILD)/arch/tally_code.o $<
	$(Q)! readelf -rW $(BUILD)/arch/tally_code.o | grep -q '^Relocation section' || \
		{ echo "arch/tally.c: its code needs relocations" >&2; exit 1; }
	$(Q)! size -A $(BUILD)/arch/tally_code.o | awk '$$1 ~ /^\.(data|bss|rodata)/ && $$2 > 0' | grep -q . || \
		{ echo "arch/tally.c: its code has data" >&2; exit 1; }
	$(Q)nm $(BUILD)/arch/tally_code.o | grep -qx '0000000000000000 T tally_entry' || \
		{ echo "arch/tally.c: tally_entry is not its first function" >&2; exit 1; }
	$(Q)objcopy -O binary -j .text $(BUILD)/arch/tally_code.o $@
$(BUILD)/arch/x86_64_launch.o: $(BUILD)/arch/tally.bin

-include $(OBJ:.o=.d)

deps:
	@scripts/install-deps

check: deps all
	$(Q)$(MAKE) -s -C tests
	$(Q)tests/run

# The long run of the tests of a killed, frozen or late gputop: 20 SIGKILLs per row of
# tests/e2e/robust_kill9.sh's matrix (make check runs 2), robust_frozen.sh, and 20 trials of
# each case of exact_late.sh (make check runs 1).
check-robust: deps all
	$(Q)$(MAKE) -s -C tests
	$(Q)KILL9_TRIALS=20 EXACT_TRIALS=20 TEST_TIMEOUT=1800 tests/run robust_kill9 robust_frozen exact_late torch_late

demo: deps all
	$(Q)$(MAKE) -s -C tests progs
	$(Q)scripts/demo

bench: deps all
	$(Q)$(MAKE) -s -C bench
	$(Q)bench/run

# A self-contained copy for machines without elfutils/capstone (the GPU machine): the binary
# finds libdw, libelf, capstone, jansson and libmicrohttpd next to it through an $$ORIGIN rpath.
dist: $(BUILD)/gputop $(GPULIB)
	@mkdir -p $(BUILD)/dist/lib
	$(Q)$(if $(GPULIB),cp $(GPULIB) $(BUILD)/dist/)
	$(Q)$(CC) $(CFLAGS) -o $(BUILD)/dist/gputop $(OBJ) $(LDFLAGS) -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib' $(LDLIBS)
	$(Q)for l in libdw.so.1 libelf.so.1 libcapstone.so.4 libjansson.so.4; do \
		cp -L "$$(ldd $(BUILD)/gputop | awk -v l=$$l '$$1 == l { print $$3 }')" $(BUILD)/dist/lib/$$l; done
	$(Q)cp -L "$$($(CC) -print-file-name=libmicrohttpd.so.12)" $(BUILD)/dist/lib/	# dlopen'ed for --listen
	@echo "  DIST    $(BUILD)/dist (gputop + lib/)"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/gputop $(DESTDIR)$(PREFIX)/bin/gputop
	$(if $(GPULIB),install -m 0644 $(GPULIB) $(DESTDIR)$(PREFIX)/bin/libgputop-gpu.so)
	install -m 0644 man/gputop.1 $(DESTDIR)$(PREFIX)/share/man/man1/gputop.1

# tests/ and bench/ are not in an image's build context (.dockerignore): cleaned where they are.
clean:
	rm -rf $(BUILD) gputop
	$(if $(wildcard tests/Makefile),-$(MAKE) -s -C tests clean)
	$(if $(wildcard bench/Makefile),-$(MAKE) -s -C bench clean)

.PHONY: all deps check check-robust demo bench dist install clean
