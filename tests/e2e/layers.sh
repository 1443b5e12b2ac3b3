#!/usr/bin/env bash
# The layers of docs/architecture.md hold: no file includes a header of a layer above its own
# (from the sources), and the module graph (../shared/tools/layers, from nm of the build) has
# no cycle and no module calls a layer above its own. Order, bottom up: arch, src/base and
# inject (the layouts shared with the code gputop puts in the program), src/cuda, src/figures,
# src/output, src/probe, src/engine, ui, src (top).
source "$(dirname "$0")/../lib.sh"

# Includes (needs nothing but the sources): a file includes headers of its own layer or below.
up_includes=$(cd "$ROOT" && python3 - <<'PY'
import os, re
ORDER = ["arch", "src/base", "inject", "src/cuda", "src/figures", "src/output", "src/probe", "src/engine", "ui", "src"]
def layer(path):
    d = os.path.dirname(path)
    if d in ("arch", "src/base", "inject"):
        return 0
    return ORDER.index(d) - 2 if d in ORDER else None
where = {}
files = []
for d in ORDER:
    for f in sorted(os.listdir(d)):
        if f.endswith((".c", ".h", ".S")):
            files.append(os.path.join(d, f))
            if f.endswith(".h"):
                where[f] = os.path.join(d, f)
bad = []
for f in files:
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(f, errors="replace").read(), re.M):
        h = where.get(os.path.basename(m.group(1)))
        if h and layer(h) > layer(f):
            bad.append("%s->%s" % (f, h))
print(" ".join(bad))
PY
)
if [ -z "$up_includes" ]; then ok "no file includes a header of a layer above its own"; else not_ok "no file includes a header of a layer above its own: $up_includes"; fi

tool=$ROOT/../shared/tools/layers
[ -x "$tool" ] || { note "no ../shared/tools/layers beside the repository: the module graph is not checked"; finish; }
command -v python3 >/dev/null || skip "no python3 for the layers tool"
[ -d "$ROOT/build/src" ] || bail "gputop is built (make)"

out=$(cd "$ROOT" && "$tool" build)
rc=$?
if [ "$rc" -eq 0 ]; then ok "no cycle among the modules of src/, arch/ and ui/"; else not_ok "no cycle among the modules of src/, arch/ and ui/"; echo "$out" | grep "^cycle" | sed "s/^/#   /"; fi
echo "$out" | tail -1 | sed 's/^/# /'

rank() {
	case $1 in
	arch/* | src/base/*) echo 0 ;;
	src/cuda/*) echo 1 ;;
	src/figures/*) echo 2 ;;
	src/output/*) echo 3 ;;
	src/probe/*) echo 4 ;;
	src/engine/*) echo 5 ;;
	ui/*) echo 6 ;;
	src/*) echo 7 ;;
	*) echo 99 ;;
	esac
}
up=""
while read -r mod arrow deps; do
	[ "$arrow" = "->" ] || continue
	for d in $deps; do
		[ "$d" = "-" ] && continue
		if [ "$(rank "$d")" -gt "$(rank "$mod")" ]; then
			up="$up $mod->$d"
		fi
	done
done <<<"$out"
if [ -z "$up" ]; then ok "no module calls a layer above its own"; else not_ok "no module calls a layer above its own:$up"; fi
finish
