#!/usr/bin/env bash
# The TUI with CUDA graphs (issue 15): gputop launches graphs loop (SIMULATED runtime and driver:
# a graph of 10 gk nodes, a memset and a D2H copy, launched every 10 ms) in a tmux terminal of
# 120x30.
#  Kernels (k): an IN GRAPHS column beside LAUNCHES; gk 0 launches and a growing count in graphs;
#               the header counts the graph launches.
#  Bandwidth (b): the graph's copy and memset on rows of their own ("D2H graph", "memset graph").
#  Overview: the launches line says how many kernel runs were in graphs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/tui_lib.bash"
need_bin graphs sim/libcudart.so.13 simdrv/libcuda.so.1
need_gputop

tui_gputop 120 30 LD_LIBRARY_PATH="$SIM:$SIMDRV" -- -d 0.5 -- "$BIN/graphs" loop --stop "$TMP/stop"
expect_screen 'Launches/s .*in graphs' "overview: the kernel runs in graphs beside the launches" ||
	bail "gputop runs the graph loop"

tui_keys k
expect_screen 'KERNEL +LAUNCHES.? +IN GRAPHS.? +PER SEC' "kernels: an IN GRAPHS column beside LAUNCHES"
expect_screen '^ *gk +0 +[1-9][0-9.]*k? +[0-9]' "kernels: gk 0 launches, its runs in graphs"
expect_screen 'kernels, 0 launches, [0-9.]+k? in [0-9.]+k? graph launches' "kernels: the header counts graph launches"
first=$(grep -E '^ *gk ' <<<"$SCREEN" | awk '{ print $3 }')
tui_wait_gone "^ *gk +0 +${first//./\\.} "
second=$(grep -E '^ *gk ' <<<"$SCREEN" | awk '{ print $3 }')
[ "$first" != "$second" ] && ok "kernels: gk's runs in graphs grow ($first, then $second)" ||
	not_ok "kernels: gk's runs in graphs grow ($first, then $second)"

tui_keys b
expect_screen '^ *D2H graph +[1-9]' "bandwidth: the graph's copy on a row of its own"
expect_screen '^ *memset graph +[1-9]' "bandwidth: the graph's memset on a row of its own"

touch "$TMP/stop"
expect_screen 'program exited with status 0 — press q to quit' "the program ends with status 0"
tui_keys q
tui_wait_status
expect_eq "$TUI_STATUS" 0 "gputop exits with the program's status"
finish
