#!/usr/bin/env bash
# The image's build context (issue 36, part 8). `docker build -f contrib/kubernetes/Dockerfile .`
# sends the work tree less what .dockerignore excludes; here it is read by @balena/dockerignore,
# a port of Docker's own matcher (tests/consumers/dockerignore_context.mjs), not by a pattern of
# ours. The work tree is the one make check has (build/, tests/bin, tests/consumers/node_modules
# and .git in it: ~100 MB):
#  1. the context is under 8 MiB, and holds nothing of build/, tests/, .git or node_modules;
#  2. it holds what the Dockerfile's COPY lines name, and is all its RUN needs: the context
#     alone, in a folder of its own, builds gputop with `make clean && make` and the binary runs.
source "$(dirname "$0")/../lib.sh"
command -v node >/dev/null && [ -f "$ROOT/tests/consumers/node_modules/@balena/dockerignore/package.json" ] ||
	bail "@balena/dockerignore is installed in tests/consumers (scripts/install-deps)"
[ -f "$ROOT/.dockerignore" ] || bail "the repository has a .dockerignore"
DOCKERFILE=contrib/kubernetes/Dockerfile
MAX=$((8 * 1048576))

node "$ROOT/tests/consumers/dockerignore_context.mjs" "$ROOT" "$DOCKERFILE" >"$TMP/context" ||
	bail "the context listed"
files=$(wc -l <"$TMP/context")
bytes=$(awk '{ s += $1 } END { print s + 0 }' "$TMP/context")
tree=$(du -sb --exclude=tests/out "$ROOT" | awk '{ print $1 }')
note "the work tree: $tree bytes; the context: $files files, $bytes bytes"
[ "$files" -ge 100 ] && ok "the context has the sources ($files files)" || not_ok "the context has the sources ($files files)"
[ "$bytes" -lt "$MAX" ] && ok "the context is under 8 MiB ($bytes bytes of a $tree-byte work tree)" ||
	not_ok "the context is under 8 MiB ($bytes bytes)"
for d in build tests .git tests/consumers/node_modules tests/bin; do
	[ -e "$ROOT/$d" ] || note "$d is not in this work tree: its exclusion is not tried"
	left=$(awk -v d="$d" '$2 == d || index($2, d "/") == 1' "$TMP/context" | head -n 3)
	expect_eq "$left" "" "nothing of $d in the context"
done

# 2. What the Dockerfile copies from the context (COPY without --from: every word but the last).
while read -r src; do
	if [ "$src" = . ]; then
		continue
	fi
	awk -v s="$src" '$2 == s || index($2, s "/") == 1 { found = 1 } END { exit !found }' "$TMP/context" &&
		ok "the Dockerfile's COPY $src: in the context" || not_ok "the Dockerfile's COPY $src: in the context"
done < <(awk '$1 == "COPY" && $2 !~ /^--from/ { for (i = 2; i < NF; i++) print $i }' "$ROOT/$DOCKERFILE")
grep -qE '^RUN make clean && make$' "$ROOT/$DOCKERFILE" || note "the Dockerfile's RUN is no longer 'make clean && make': the build below does that"

mkdir -p "$TMP/ctx"
(cd "$ROOT" && cut -d' ' -f2- "$TMP/context" | tar -cf - --no-recursion -T -) | tar -xf - -C "$TMP/ctx" ||
	bail "the context copied"
(cd "$TMP/ctx" && make clean && make -j2) >"$TMP/build.log" 2>&1
status=$?
expect_eq "$status" 0 "the context alone builds gputop (make clean && make, as the Dockerfile's RUN)"
[ "$status" -eq 0 ] || tail -n 15 "$TMP/build.log" | sed 's/^/#   /'
grep -q 'No such file or directory' "$TMP/build.log" && not_ok "... and says nothing is missing" ||
	ok "... and says nothing is missing (make clean too: tests/ and bench/ are not there)"
expect_match "$("$TMP/ctx/build/gputop" --version 2>&1)" '^gputop [0-9]' "the gputop built from it runs"
finish
