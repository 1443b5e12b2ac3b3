#!/usr/bin/env bash
# Issue 24: gputop's state is few named objects. Counted over the object of every source of the
# product (src/, arch/, ui/): objects in .data and .bss (writable while gputop runs) at most 40,
# each module's state one struct; const tables that hold pointers sit in .data.rel.ro, which
# the dynamic linker makes read-only after relocation (RELRO, checked on the binary) and are
# not counted. No variable holds a "current process": every function is handed the process
# it works on (struct tracee *p).
source "$(dirname "$0")/../lib.sh"
command -v objdump >/dev/null || skip "no objdump (binutils)"
[ -x "$ROOT/build/gputop" ] || bail "gputop is built (make)"

MAX=40
objects=()
for c in "$ROOT"/src/*.c "$ROOT"/src/*/*.c "$ROOT"/arch/*.c "$ROOT"/ui/*.c; do
	# arch/tally.c runs in the program, not in gputop (the Makefile checks it has no data)
	[ "${c##*/}" = tally.c ] && continue
	o=$ROOT/build/${c#"$ROOT"/}
	o=${o%.c}.o
	[ -f "$o" ] || bail "$o is built (make)"
	objects+=("$o")
done
writable=$(for o in "${objects[@]}"; do
	objdump -t "$o" | awk -v f="${o#"$ROOT"/build/}" '/ O / && ($4 == ".data" || $4 == ".bss") { print f ":" $NF }'
done)
n=$(printf '%s\n' "$writable" | grep -c .)
if [ "$n" -le "$MAX" ]; then
	ok "writable data objects (.data, .bss): $n <= $MAX"
else
	not_ok "writable data objects (.data, .bss): $n <= $MAX"
	printf '%s\n' "$writable" | sed 's/^/#   /'
fi
expect_match "$(readelf -lW "$ROOT/build/gputop")" 'GNU_RELRO' "the binary links with RELRO: const tables of pointers are read-only after start"

# No file-scope variable holds a process (a struct member, like the first process the tracer
# keeps for its exit status, is not one).
current=$(cd "$ROOT" && grep -nE '^(extern |static )?(const )?struct tracee \*[a-z_]+( = [^;]*)?;' src/*.[ch] src/*/*.[ch] ui/*.[ch] || true)
expect_eq "$current" "" "no global names a current process: each function is handed its own"
finish
