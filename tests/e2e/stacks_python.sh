#!/usr/bin/env bash
# Issue 12, acceptance 2: Python call stacks. tests/progs/py_alloc.py calls the SIMULATED
# runtime's cudaMalloc through ctypes from grow() at a line marked "@site grow" (found in the
# source here), called from main() and from the method Cache.fill(). Under gputop, each leak's
# stack reads from <module> down to cudaMalloc: the Python frames (file, function, line)
# merged in where the interpreter's eval loop is. With Debian's python3.11 always; with
# CPython 3.10, 3.12, 3.13 and 3.14 where they are installed (on PATH, or under pyenv's root:
# PYTHONS="path ..." names others). From 3.13 on, the offsets come from the interpreter's own
# _Py_DebugOffsets (gputop keeps no table for them); before, from gputop's table. A CPython gputop
# cannot read (3.9) gives native frames only and says so once.
source "$(dirname "$0")/../lib.sh"
need_bin sim/libcudart.so.13
need_gputop
PROG=$ROOT/tests/progs/py_alloc.py
LIB=$SIM/libcudart.so.13
line_of() {
	grep -n "@site $1\$" "$PROG" | head -n1 | cut -d: -f1
}
L_GROW=$(line_of grow) L_FILL=$(line_of fill) L_MAIN_GROW=$(line_of main_grow) L_MAIN_FILL=$(line_of main_fill) L_MOD=$(line_of module)
note "lines: grow $L_GROW, fill $L_FILL, main $L_MAIN_GROW/$L_MAIN_FILL, module $L_MOD"

# find_python 3.V: an interpreter of that version that runs, from pyenv's builds or PATH.
pyroot=$(command -v pyenv >/dev/null && pyenv root 2>/dev/null)
find_python() {
	local p
	for p in $(ls -d "$pyroot"/versions/"$1".*/bin/python"$1" 2>/dev/null) $(command -v "python$1" 2>/dev/null); do
		"$p" -c 'import sys' >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}
pythons=${PYTHONS:-}
if [ -z "$pythons" ]; then
	[ -x /usr/bin/python3.11 ] || skip "Debian's /usr/bin/python3.11 is not installed"
	pythons=/usr/bin/python3.11
	for v in 3.10 3.12 3.13 3.14; do
		p=$(find_python $v) && pythons="$pythons $p" || note "no CPython $v here: not tested"
	done
fi
note "interpreters: $pythons"
export GPUTOP_DEBUG=1	# it says where the interpreter's offsets came from

for py in $pythons; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	libdir=$(dirname "$(dirname "$py")")/lib	# a pyenv build's libpython, where it has one
	run_gputop_json "$TMP/$v.json" -- -b --stacks allocs -- env LD_LIBRARY_PATH="$libdir" "$py" "$PROG" "$LIB" || { not_ok "$v: a summary"; continue; }
	expect_eq "$(prog_lines "$GPUTOP_OUT" py_alloc)" "py_alloc: ok leaks=2" "$v: the program works under gputop"
	F=$TMP/$v.json
	from="gputop's table"
	[ "${v#3.}" -ge 13 ] && from="its _Py_DebugOffsets"
	expect_eq "$(grep -c "CPython $v in .*: offsets from $from" "$GPUTOP_ERR")" 1 "$v: offsets from $from"
	# Python frames, innermost first, and cudaMalloc right above them.
	pyframes='[.stack[] | select(.python) | [.function, (.file | split("/") | last), .line]]'
	fill=$([ "$v" = 3.10 ] && echo fill || echo Cache.fill)	# co_qualname came in 3.11
	jq_eq "$F" "[.memory.leaks[] | select(.bytes == 2097152) | $pyframes][0]" \
		"[[\"grow\",\"py_alloc.py\",$L_GROW],[\"main\",\"py_alloc.py\",$L_MAIN_GROW],[\"<module>\",\"py_alloc.py\",$L_MOD]]" \
		"$v: the 2 MiB leak's Python frames: grow <- main <- <module>, with lines"
	jq_eq "$F" "[.memory.leaks[] | select(.bytes == 1048576) | $pyframes][0]" \
		"[[\"grow\",\"py_alloc.py\",$L_GROW],[\"$fill\",\"py_alloc.py\",$L_FILL],[\"main\",\"py_alloc.py\",$L_MAIN_FILL],[\"<module>\",\"py_alloc.py\",$L_MOD]]" \
		"$v: the 1 MiB leak's Python frames: grow <- $fill <- main <- <module>"
	jq_check "$F" '.memory.leaks | all(.stack[0].function == "cudaMalloc")' "$v: cudaMalloc is the innermost frame"
	# Merged where the eval loop is: native frames (ctypes, libffi) between cudaMalloc and grow,
	# an eval loop frame right below the outermost Python frame.
	jq_check "$F" '.memory.leaks | all(.stack | (map(.python) | index(true)) as $i | $i > 1 and (.[1:$i] | all(.python | not)))' \
		"$v: native frames (ctypes) between cudaMalloc and grow" '.memory.leaks[0].stack'
	jq_check "$F" '.memory.leaks | all(.stack | (map(.python) | rindex(true)) as $i | .[$i + 1].function == "_PyEval_EvalFrameDefault")' \
		"$v: the eval loop below the outermost Python frame" '.memory.leaks[0].stack'
done

# --- a stack deeper than --stack-depth: the Python frames stay, native ones between go ---------
# (a PyTorch allocation lies 40 and more native frames below its Python line: cut from the
# outside, its OOM report said no line on the GPU machine)
run_gputop_json "$TMP/depth.json" -- -b --stacks allocs --stack-depth 4 -- /usr/bin/python3.11 "$PROG" "$LIB" ||
	not_ok "--stack-depth 4: a summary"
jq_eq "$TMP/depth.json" '[.memory.leaks[] | select(.bytes == 2097152) | [.stack[] | [.function, .line]]][0]' \
	"[[\"cudaMalloc\",null],[\"grow\",$L_GROW],[\"main\",$L_MAIN_GROW],[\"<module>\",$L_MOD]]" \
	"--stack-depth 4: cudaMalloc, then every Python frame of the 2 MiB leak (ctypes' frames left out)"
jq_eq "$TMP/depth.json" '[.memory.leaks[] | select(.bytes == 1048576) | [.stack[] | [.function, .line]]][0]' \
	"[[\"cudaMalloc\",null],[\"grow\",$L_GROW],[\"Cache.fill\",$L_FILL],[\"main\",$L_MAIN_FILL]]" \
	"--stack-depth 4: the 1 MiB leak's innermost Python frames where all do not fit"

# --- a CPython gputop cannot read: native frames only, said once --------------------------------
if old=$(find_python 3.9); then
	run_gputop_json "$TMP/old.json" -- -b --stacks allocs -- env LD_LIBRARY_PATH="$(dirname "$(dirname "$old")")/lib" "$old" "$PROG" "$LIB"
	jq_eq "$TMP/old.json" '[.memory.leaks[].stack[] | select(.python)] | length' 0 "3.9: no Python frame"
	jq_check "$TMP/old.json" '.memory.leaks | length == 2 and all(.stack[0].function == "cudaMalloc")' "3.9: native stacks still"
	expect_eq "$(grep -c 'CPython 3.9 is not a version gputop can read' "$GPUTOP_ERR")" 1 "3.9: said once"
else
	note "no CPython 3.9 here: the unknown-version check is not run"
fi
finish
