#!/usr/bin/env bash
# The layers of docs/architecture.md hold: the module graph (../shared/tools/layers, from nm of
# the build) has no cycle, and no module calls a layer above its own. Order, bottom up:
# arch and src/base, src/cuda, src/figures, src/output, src/probe, src/engine, ui, src (top).
source "$(dirname "$0")/../lib.sh"

tool=$ROOT/../shared/tools/layers
[ -x "$tool" ] || skip "no ../shared/tools/layers beside the repository"
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
