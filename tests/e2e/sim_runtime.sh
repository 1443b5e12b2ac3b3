#!/usr/bin/env bash
# The SIMULATED CUDA runtime and driver themselves (no gputop): what the other tests rely on.
# Sonames and symbol versions as NVIDIA's, every exported entry point a real function starting
# with push %rbp; mov %rsp,%rbp (as in libcudart.so.13), __cudaLaunchKernel a jump to
# cudaLaunchKernel, and the behaviours tests/progs/simcheck.c checks, alone and layered.
source "$(dirname "$0")/../lib.sh"
need_bin simcheck sim/libcudart.so.13 simdrv/libcuda.so.1
command -v objdump >/dev/null || skip "objdump (binutils) is not installed"

RT=$SIM/libcudart.so.13
DRV=$SIMDRV/libcuda.so.1
expect_match "$(readelf -d "$RT")" 'SONAME.*\[libcudart\.so\.13\]' "runtime soname libcudart.so.13"
expect_match "$(readelf -d "$DRV")" 'SONAME.*\[libcuda\.so\.1\]' "driver soname libcuda.so.1"
expect_match "$(nm -D --defined-only "$RT" | grep ' cudaMalloc@')" '@@libcudart\.so\.13$' \
	"runtime symbols in version node libcudart.so.13"
expect_eq "$(nm -D --defined-only "$RT" | grep -vc '@@libcudart\.so\.13$')" 1 \
	"every runtime symbol versioned (but the version node's own)"
expect_eq "$(nm -D --defined-only "$RT" | awk '$2 == "T"' | grep -vc ' _*cuda')" 0 \
	"the runtime exports only cuda* and __cuda* functions"
expect_eq "$(nm -D --defined-only "$DRV" | awk '$2 == "T"' | grep -vc ' cu')" 0 \
	"the driver exports only cu* functions"

# prologues: the first two instructions of every exported function
prologues() {
	local lib=$1
	objdump -d --no-show-raw-insn "$lib" |
		awk -v syms="$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | tr '\n' ' ')" '
		BEGIN { n = split(syms, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1 }
		/^[0-9a-f]+ <.*>:$/ {
			name = $2; gsub(/[<>:]/, "", name)
			plt = name ~ /@plt$/; sub(/@.*/, "", name)
			left = want[name] && !plt ? 2 : 0; text = ""; next
		}
		left > 0 && NF >= 2 { $1 = ""; text = text ";" $0; if (--left == 0) print name text }'
}
prologues "$RT" >"$TMP/rt.prologues"
prologues "$DRV" >"$TMP/drv.prologues"
expect_eq "$(grep -vc '; *push *%rbp; *mov *%rsp,%rbp$' "$TMP/rt.prologues")" 0 \
	"runtime: every entry point starts with push %rbp; mov %rsp,%rbp ($(wc -l <"$TMP/rt.prologues") functions)"
expect_eq "$(grep -vc '; *push *%rbp; *mov *%rsp,%rbp$' "$TMP/drv.prologues")" 0 \
	"driver: every entry point starts with push %rbp; mov %rsp,%rbp ($(wc -l <"$TMP/drv.prologues") functions)"
expect_match "$(objdump -d "$RT" | grep -A5 '<__cudaLaunchKernel>:')" 'jmp .*<cudaLaunchKernel@plt>' \
	"__cudaLaunchKernel jumps to cudaLaunchKernel"

for mode in runtime layered; do
	[ $mode == runtime ] && libs=$SIM || libs=$SIM:$SIMDRV
	LD_LIBRARY_PATH=$libs "$BIN/simcheck" >"$TMP/$mode.out" 2>&1
	status=$?
	grep '^not ok' "$TMP/$mode.out" | sed "s/^/# $mode: /"
	expect_eq "$status" 0 "$mode: simcheck passes ($(grep -c '^ok' "$TMP/$mode.out") checks)"
done
finish
