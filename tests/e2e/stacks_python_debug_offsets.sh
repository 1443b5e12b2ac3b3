#!/usr/bin/env bash
# Issue 26, part 4: CPython 3.13 and later say where their structures are in _Py_DebugOffsets,
# at the start of _PyRuntime; gputop reads Python stacks through it, selected by the table's
# cookie and version. Real interpreters run in stacks_python.sh (3.13 where installed: gputop
# has no table of its own for it any more). Here a stand-in CPython (tests/progs/fakepy.c,
# libpython3.X.so.1.0 with the table of CPython's published layout for 3.X, describing
# structures laid out unlike CPython's) calls the SIMULATED cudaMalloc from grow (train.py:42)
# <- <module> (train.py:7): the leak's stack names both, file:line, with the native frames
# around them, for the 3.13 and the 3.14 layout (whose frames hold tagged stack references,
# a frame owned by the C stack, a frame not started yet). A table of a version gputop does not
# know (3.15), and a free-threaded build, give native frames only, said once.
source "$(dirname "$0")/../lib.sh"
need_bin sim/libcudart.so.13 fakepy313/fakepy fakepy314/fakepy fakepy315/fakepy fakepy314t/fakepy
need_gputop
export GPUTOP_DEBUG=1
pyframes='[.memory.leaks[0].stack[] | select(.python) | [.function, .file, .line]]'

for v in 313 314; do
	name=3.${v#3}
	run_gputop_json "$TMP/$v.json" -- -b --stacks allocs -- \
		env LD_LIBRARY_PATH="$SIM" "$BIN/fakepy$v/fakepy" || continue
	expect_eq "$(prog_lines "$GPUTOP_OUT" fakepy)" "fakepy: ok" "$name: the program works under gputop"
	expect_eq "$(grep -c "CPython $name in libpython$name.so.1.0: offsets from its _Py_DebugOffsets" "$GPUTOP_ERR")" 1 \
		"$name: the layout comes from the interpreter's _Py_DebugOffsets"
	jq_eq "$TMP/$v.json" "$pyframes" '[["grow","train.py",42],["<module>","train.py",7]]' \
		"$name: the leak's Python frames: grow (train.py:42) <- <module> (train.py:7)"
	jq_check "$TMP/$v.json" '.memory.leaks[0].stack | .[0].function == "cudaMalloc" and .[1].function == "alloc_from_python"' \
		"$name: cudaMalloc, then the native caller, above the Python frames" '.memory.leaks[0].stack'
	jq_check "$TMP/$v.json" '.memory.leaks[0].stack | (map(.python) | rindex(true)) as $i | .[$i + 1].function == "_PyEval_EvalFrameDefault"' \
		"$name: the eval loop right below the outermost Python frame" '.memory.leaks[0].stack'
done

for v in 315 314t; do
	run_gputop_json "$TMP/$v.json" -- -b --stacks allocs -- \
		env LD_LIBRARY_PATH="$SIM" "$BIN/fakepy$v/fakepy" || continue
	expect_eq "$(prog_lines "$GPUTOP_OUT" fakepy)" "fakepy: ok" "$v: the program works under gputop"
	jq_eq "$TMP/$v.json" '[.memory.leaks[0].stack[] | select(.python)] | length' 0 "$v: no Python frame"
	jq_check "$TMP/$v.json" '.memory.leaks[0].stack[0].function == "cudaMalloc"' "$v: the native stack still"
done
expect_eq "$(grep -c "warning: the _Py_DebugOffsets of CPython 3.15 are not a layout gputop knows (3.13, 3.14)" "$TMP"/gputop.3.err)" 1 \
	"3.15: said once: its table is not a layout gputop knows"
expect_eq "$(grep -c "warning: free-threaded CPython 3.14 is not an interpreter gputop can read" "$TMP"/gputop.4.err)" 1 \
	"3.14t: said once: a free-threaded build is not read"
finish
