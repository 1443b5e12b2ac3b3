#!/usr/bin/env bash
# Robustness, security (issue 5):
#  1. gputop installed set-uid root, set-gid root, or with a file capability (cap_sys_ptrace+ep),
#     and run by nobody: refuses at once (exit status 4, with the reason); never more privilege
#     than the user has.
#  2. Outputs are never written through a symbolic link (--json, --trace, -o; a link to an
#     existing file leaves it unchanged, a dangling one creates nothing), and are refused before
#     anything runs.
#  3. While attached, gputop changes in the program exactly what README ("What gputop does to
#     your program") says: the 64 KiB trampoline page (read + execute) and, where the time stamp
#     counter is reliable, the 128 KiB table of return records (read + write), one int3 byte (0xcc) per
#     probed entry in libcudart's code; no file descriptor, no environment variable. After the
#     detach the mappings and every byte of code are as before.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin wait_then_work sim/libcudart.so.13
need_gputop

# --- 1. set-uid, set-gid, file capabilities ------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	NOGROUP=$(id -gn nobody)
	mkdir -p "$TMP/priv"
	chmod 755 "$TMP" "$TMP/priv"
	if findmnt -no OPTIONS -T "$TMP/priv" | grep -qw nosuid; then
		note "$TMP is on a nosuid file system: the set-uid/set-gid part is not run"
	else
		# refused NAME MODE WHAT
		refused() {
			cp "$GPUTOP" "$TMP/priv/$1"
			chown root:root "$TMP/priv/$1"
			chmod "$2" "$TMP/priv/$1"
			setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups "$TMP/priv/$1" -- /bin/true \
				>"$TMP/$1.out" 2>"$TMP/$1.err" </dev/null
			expect_eq "$?" 4 "$3: exit status 4"
			expect_match "$(cat "$TMP/$1.err")" '^gputop: refusing to run set-uid' "$3: says why"
		}
		refused setuid 4755 "set-uid root, run by nobody"
		refused setgid 2755 "set-gid root, run by nobody"
		if command -v setcap >/dev/null && cp "$GPUTOP" "$TMP/priv/caps" && chmod 755 "$TMP/priv/caps" &&
			setcap cap_sys_ptrace+ep "$TMP/priv/caps" 2>/dev/null; then
			setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups "$TMP/priv/caps" -- /bin/true \
				>"$TMP/caps.out" 2>"$TMP/caps.err" </dev/null
			expect_eq "$?" 4 "cap_sys_ptrace+ep, run by nobody: exit status 4"
			expect_match "$(cat "$TMP/caps.err")" 'file capabilities' "cap_sys_ptrace+ep: says why"
		else
			note "setcap is not available here: the file-capability case is not run"
		fi
	fi
else
	note "set-uid part not run: needs root, setpriv and user nobody"
fi

# --- 2. no output through a symbolic link ----------------------------------------------------------
printf 'precious\n' >"$TMP/precious"
for opt in --json --trace -o; do
	name=${opt#-}
	name=${name#-}
	ln -s "$TMP/precious" "$TMP/link-$name"
	ln -s "$TMP/nowhere-$name" "$TMP/dangling-$name"
	timeout -k 5 20 "$GPUTOP" "$opt" "$TMP/link-$name" -- touch "$TMP/ran-$name" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
	expect_eq "$?" 6 "$opt to a symbolic link: exit status 6"
	expect_match "$(cat "$TMP/$name.err")" 'symbolic link' "$opt to a symbolic link: says why"
	expect_eq "$(cat "$TMP/precious")" precious "$opt to a symbolic link: the file it points to is unchanged"
	[ ! -e "$TMP/ran-$name" ] && ok "$opt to a symbolic link: refused before the program ran" ||
		not_ok "$opt to a symbolic link: refused before the program ran"
	timeout -k 5 20 "$GPUTOP" "$opt" "$TMP/dangling-$name" -- true >/dev/null 2>&1 </dev/null
	expect_eq "$?" 6 "$opt to a dangling symbolic link: exit status 6"
	[ ! -e "$TMP/nowhere-$name" ] && ok "$opt to a dangling symbolic link: nothing created where it points" ||
		not_ok "$opt to a dangling symbolic link: nothing created where it points"
done

# --- 3. what is written into the program ------------------------------------------------------------
can_attach_to_others || { note "part 3 not run: this user may not ptrace other processes"; finish; }
export LD_LIBRARY_PATH=$SIM
spawn "$TMP/target" "$BIN/wait_then_work" --go "$TMP/go" --iters 1
TARGET=$SPAWNED_PID
wait_for_line "$TMP/target.out" '^ready' 20 || bail "wait_then_work said ready"

# snapshot NAME: mappings (address, permissions, name), descriptors, environment, and the bytes of
# libcudart's and the dynamic linker's executable mappings.
snapshot() {
	local n=$1 line range perms name start end
	awk '{ print $1, $2, $6 }' "/proc/$TARGET/maps" >"$TMP/$n.maps"
	ls -l "/proc/$TARGET/fd" | awk 'NR > 1 { print $9, $10, $11 }' | sort >"$TMP/$n.fds"
	tr '\0' '\n' <"/proc/$TARGET/environ" >"$TMP/$n.env"
	: >"$TMP/$n.code"
	while read -r range perms name; do
		[[ $perms == r-xp && ( $name == *libcudart* || $name == */ld-linux* ) ]] || continue
		start=$((16#${range%-*}))
		end=$((16#${range#*-}))
		dd if="/proc/$TARGET/mem" bs=4096 skip=$((start / 4096)) count=$(((end - start) / 4096)) \
			2>/dev/null >>"$TMP/$n.code"
	done <"$TMP/$n.maps"
}
snapshot before
[ -s "$TMP/before.code" ] && ok "the code of libcudart and ld.so can be read" || bail "the code of libcudart and ld.so can be read"

rb_gputop_bg g -p "$TARGET"
rb_wait_attached g
snapshot during
planted=$(grep -oE 'probing [0-9]+ CUDA functions' "$TMP/g.err" | awk '{ s += $2 } END { print s + 0 }')
new_maps=$(diff "$TMP/before.maps" "$TMP/during.maps" | grep '^>' | sed 's/^> //')
gone_maps=$(diff "$TMP/before.maps" "$TMP/during.maps" | grep -c '^<')
expect_eq "$gone_maps" 0 "attached: no mapping of the program removed or changed"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
rw_want=0
if grep -qw constant_tsc <<<"$flags" && grep -qw nonstop_tsc <<<"$flags"; then
	# retfast.c's record table (128 KiB) and the launch ring with the call stub's records
	# and the tallies (stub_layout.h LR_SIZE: the launch records' offset, LR_CAP launch
	# records, LR_DONE_CAP records of the calls' ring, then LR_TALLY_SIZE bytes of tallies, in
	# whole pages): the kernel may merge the two into one mapping.
	layout() { awk -v k="$1" '$1 == "#define" && $2 == k { print $3 }' "$ROOT/arch/stub_layout.h"; }
	ring=$(($(layout LR_OFF_RECORDS) + $(layout LR_CAP) * $(layout LR_RECORD_SIZE) +
		$(layout LR_DONE_CAP) * $(layout LR_CALL_SIZE) + $(layout LR_TALLY_SIZE)))
	rw_want=$((131072 + (ring + 4095) / 4096 * 4096))
fi
rx_got=$(awk '$2 == "r-xp"' <<<"$new_maps" | while read -r range perms name; do
	echo $((16#${range#*-} - 16#${range%-*})); done | awk "{ s += \$1 } END { print s + 0 }")
rw_got=$(awk '$2 == "rw-p"' <<<"$new_maps" | while read -r range perms name; do
	echo $((16#${range#*-} - 16#${range%-*})); done | awk "{ s += \$1 } END { print s + 0 }")
other=$(awk '$2 != "r-xp" && $2 != "rw-p"' <<<"$new_maps" | grep -c .)
expect_eq "${rx_got:-0} ${rw_got:-0} $other" "65536 $rw_want 0" \
	"attached: only the trampoline page (64 KiB, r-x), the return records and the call records (rw-) added"
expect_file_eq "$TMP/during.fds" "$TMP/before.fds" "attached: no file descriptor opened in the program"
expect_file_eq "$TMP/during.env" "$TMP/before.env" "attached: its environment untouched"
# Each probe changes its entry: one int3 (0xcc), or a jump probe's 5-byte jmp (0xe9 + rel32) into
# gputop's page, some of whose bytes may equal the program's. cmp -l prints offsets (1-based) and
# bytes in octal (0xcc = 314, 0xe9 = 351).
counts=$(cmp -l "$TMP/before.code" "$TMP/during.code" | awk '
	jmp && $1 < jmp + 5 { next }		# the rest of a jmp
	$3 == 351 { jmp = $1; n++; next }	# a jump probe
	$3 == 314 { jmp = 0; n++; next }	# an int3
	{ bad++ }
	END { print n + 0, bad + 0 }')
read -r nruns bad <<<"$counts"
expect_eq "$bad" 0 "attached: every change in the code is an int3 or a jump probe's jmp"
if [ "$nruns" -ge 1 ] && [ "$nruns" -le $((planted + 1)) ]; then
	ok "attached: one change per probe ($nruns; $planted probes + the dynamic linker's hook)"
else
	not_ok "attached: one change per probe ($nruns; $planted probes + the dynamic linker's hook)"
fi

kill -TERM "$GPUTOP_PID"
wait_pid "$GPUTOP_PID" 20
expect_eq "$WAIT_STATUS" 0 "gputop detaches, status 0"
snapshot after
expect_file_eq "$TMP/after.maps" "$TMP/before.maps" "detached: the mappings are as before"
expect_file_eq "$TMP/after.fds" "$TMP/before.fds" "detached: the descriptors are as before"
if cmp -s "$TMP/after.code" "$TMP/before.code"; then
	ok "detached: every byte of code is as before"
else
	not_ok "detached: every byte of code is as before ($(cmp -l "$TMP/before.code" "$TMP/after.code" | wc -l) differ)"
fi
touch "$TMP/go"
wait_pid "$TARGET" 30
expect_eq "$WAIT_STATUS" 0 "the program then works and exits 0"
expect_eq "$(grep -v '^ready' "$TMP/target.out")" 'wait_then_work: ok iterations=1' "... with its normal output"
finish
