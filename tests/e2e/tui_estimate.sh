#!/usr/bin/env bash
# TUI under --max-overhead (SIMULATED runtime): demo launches kernels in a tight loop, far more
# than a 1% budget allows, so gputop samples launch probes and extrapolates. Every launch figure
# on the screen is then marked as an estimate: "~" in front of the Kernels view's launches, per
# second and share, of the Overview's launches, of cudaLaunchKernel's calls in the API view, and
# a note in the status line. Launches through the launch ring cost no stop and are never shed:
# GPUTOP_LAUNCH_RING=0 gives the simulated runtime's launches their int3 back (estimates.sh).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin demo sim/libcudart.so.13
need_gputop
export GPUTOP_LAUNCH_RING=0

tui_gputop 120 30 -- -d 0.5 --max-overhead 1 -- "$BIN/demo" 120
expect_screen 'launch figures are estimates' "the status line says launch figures are estimates" ||
	bail "gputop sheds launch probes under --max-overhead 1"
expect_screen '~estimates' "the status line's flag"
expect_screen 'Launches/s +~[0-9]' "overview: launches per second marked ~"
expect_screen '~[0-9.]+[kMG]? launches' "overview: total launches marked ~"
tui_keys k
expect_screen 'ml::linear_forward\(float\*, float const\*, int\) +~[0-9]' "kernels: launches marked ~"
expect_screen 'ml::relu\(float\*, int\) +~[0-9.]+[kMG]? +~[0-9.]+[kMG]? .* ~[0-9.]+%' \
	"kernels: per second and share marked ~"
expect_screen '~[0-9.]+[kMG]? launches, ~' "kernels: the totals line marked ~"
tui_capture
unmarked=$(grep -E '^ ml::' <<<"$SCREEN" | grep -vE '\) +~[0-9.]+[kMG]? +~')
[ -z "$unmarked" ] && ok "kernels: no launch figure without ~" || {
	not_ok "kernels: no launch figure without ~"
	note "$unmarked"
}
tui_keys a
expect_screen 'cudaLaunchKernel +~[0-9]' "api: cudaLaunchKernel calls marked ~"
expect_screen 'cudaMemcpyAsync +[0-9]' "api: other calls are not estimates"
tui_keys q k
tui_wait_status
expect_eq "$TUI_STATUS" 137 "q k ends it"
finish
