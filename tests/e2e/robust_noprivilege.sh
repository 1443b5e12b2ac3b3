#!/usr/bin/env bash
# Robustness, no privilege (issue 5): the end-to-end basics with exact counts, in launch and in
# attach mode, on the SIMULATED runtime,
#  1. as an ordinary user (nobody) with every capability dropped (setpriv --inh-caps=-all
#     --bounding-set=-all): no CAP_SYS_PTRACE, no CAP_BPF, nothing;
#  2. inside a user + PID namespace (unshare -Urpf --mount-proc, entered as nobody), as in a
#     rootless container;
#  3. nobody attaching to a root-owned process: refused, exit status 4, with the reason.
# gputop and the programs are copied to a folder nobody can read (mode 755 under /tmp). Needs
# root (to become nobody); skipped otherwise, and where user namespaces are not allowed.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/robust_lib.bash"
need_bin basic wait_then_work no_cuda sim/libcudart.so.13
need_gputop
[ "$(id -u)" -eq 0 ] || skip "needs root, to run gputop as user nobody"
command -v setpriv >/dev/null || skip "setpriv is not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody"
NOGROUP=$(id -gn nobody)

NB=$TMP/nb
mkdir -p "$NB/sim" "$NB/out"
cp "$GPUTOP" "$NB/gputop"
cp "$BIN/basic" "$BIN/wait_then_work" "$NB/"
cp "$SIM/libcudart.so.13" "$NB/sim/"
chmod 755 "$TMP" "$NB" "$NB/sim" "$NB"/gputop "$NB"/basic "$NB"/wait_then_work
chmod 644 "$NB/sim/libcudart.so.13"
chmod 777 "$NB/out"

# as_nobody CMD...: CMD as nobody with every capability gone, LD_LIBRARY_PATH on the copy.
as_nobody() {
	setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all --bounding-set=-all \
		env LD_LIBRARY_PATH="$NB/sim" "$@"
}
as_nobody true || skip "setpriv cannot switch to nobody here"

# check_basic_counts FILE ITERATIONS WHAT: the figures of workload.cpp, ITERATIONS times.
check_counts() {
	local F=$1 k=$2
	expect_api "$F" cudaMalloc $((3 * k)) 0
	expect_api "$F" cudaMallocHost "$k" 0
	expect_api "$F" cudaMemcpy $((3 * k)) 0
	expect_api "$F" cudaFree $((2 * k)) 0
	expect_launch_api "$F" $((15 * k)) cudaLaunchKernel cuLaunchKernel
	expect_kernel "$F" 'scale(float*, int)' $((10 * k)) '[4,2,1]' '[128,1,1]'
}

# --- 1. as nobody, every capability dropped ---------------------------------------------------
caps=$(as_nobody awk '/^Cap(Eff|Prm|Bnd):/ { printf "%s ", $2 }' /proc/self/status)
expect_eq "$caps" "0000000000000000 0000000000000000 0000000000000000 " "nobody: no capability at all (CapEff CapPrm CapBnd)"

as_nobody "$NB/basic" 2 >"$TMP/plain.out" 2>&1
expect_eq "$(cat "$TMP/plain.out")" 'basic: ok iterations=2' "nobody, without gputop: basic works"
as_nobody "$NB/gputop" -q --json "$NB/out/launch.json" -- "$NB/basic" 2 >"$TMP/launch.out" 2>"$TMP/launch.err" </dev/null
expect_eq "$?" 0 "nobody, launch: gputop exits with basic's status 0"
expect_file_eq "$TMP/launch.out" "$TMP/plain.out" "nobody, launch: output as without gputop"
check_counts "$NB/out/launch.json" 2

# attach: a process of nobody's, by nobody (needs ptrace_scope 0 where Yama is on)
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" -eq 0 ]; then
	spawn "$TMP/target" setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all \
		--bounding-set=-all env LD_LIBRARY_PATH="$NB/sim" "$NB/wait_then_work" --go "$NB/out/go" --iters 2
	TARGET=$SPAWNED_PID	# setpriv and env exec: the pid is the program's
	wait_for_line "$TMP/target.out" '^ready' 20 || bail "wait_then_work said ready"
	TARGET=$(awk '/^ready/ { print $2; exit }' "$TMP/target.out")
	spawn "$TMP/attach" setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all \
		--bounding-set=-all "$NB/gputop" -p "$TARGET" --json "$NB/out/attach.json"
	G=$SPAWNED_PID
	rb_wait_attached attach
	touch "$NB/out/go"
	wait_pid "$G" 30
	expect_eq "$WAIT_STATUS" 0 "nobody, attach: gputop ends with the program, status 0"
	expect_eq "$(grep -v '^ready' "$TMP/target.out")" 'wait_then_work: ok iterations=2' "nobody, attach: the program's output"
	jq_eq "$NB/out/attach.json" '.exit_status' 0 "nobody, attach: exit_status 0"
	check_counts "$NB/out/attach.json" 2
else
	note "attach as nobody not run: kernel.yama.ptrace_scope is $scope"
fi

# --- 2. a user + PID namespace, as a rootless container ------------------------------------------
if as_nobody unshare -Urpf --mount-proc true 2>/dev/null; then
	cat >"$NB/inside.sh" <<'EOF'
# Runs inside the namespace: pid 1 is this shell. Launch, then attach.
out=$1
cd "$(dirname "$0")"
./gputop -q --json "$out/ns-launch.json" -- ./basic 1 >"$out/ns-launch.out" 2>"$out/ns-launch.err"
echo "launch=$?" >"$out/ns-status"
./wait_then_work --go "$out/ns-go" --iters 1 >"$out/ns-target.out" 2>&1 &
target=$!
while ! grep -q '^ready' "$out/ns-target.out" 2>/dev/null; do sleep 0.02; done
./gputop -p "$target" --json "$out/ns-attach.json" >"$out/ns-attach.out" 2>"$out/ns-attach.err" &
gputop=$!
while ! grep -q 'attached to' "$out/ns-attach.err" 2>/dev/null; do sleep 0.02; done
touch "$out/ns-go"
wait "$target"
echo "target=$?" >>"$out/ns-status"
wait "$gputop"
echo "attach=$?" >>"$out/ns-status"
echo "target_pid=$target" >>"$out/ns-status"
EOF
	chmod 755 "$NB/inside.sh"
	timeout -k 5 60 setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups --inh-caps=-all --bounding-set=-all \
		env LD_LIBRARY_PATH="$NB/sim" unshare -Urpf --mount-proc sh "$NB/inside.sh" "$NB/out" </dev/null
	O=$NB/out
	expect_eq "$(grep -c . "$O/ns-status" 2>/dev/null)" 4 "namespace: the script ran to its end"
	expect_match "$(cat "$O/ns-status" 2>/dev/null)" '^launch=0$' "namespace, launch: status 0"
	expect_eq "$(cat "$O/ns-launch.out" 2>/dev/null)" 'basic: ok iterations=1' "namespace, launch: output"
	[ -s "$O/ns-launch.json" ] && check_counts "$O/ns-launch.json" 1
	expect_match "$(cat "$O/ns-status" 2>/dev/null)" 'target=0' "namespace, attach: the program exits 0"
	expect_match "$(cat "$O/ns-status" 2>/dev/null)" 'attach=0' "namespace, attach: gputop exits 0"
	expect_match "$(cat "$O/ns-status" 2>/dev/null)" 'target_pid=[0-9]$' "namespace, attach: a pid of the namespace (small)"
	expect_eq "$(grep -v '^ready' "$O/ns-target.out" 2>/dev/null)" 'wait_then_work: ok iterations=1' "namespace, attach: output"
	[ -s "$O/ns-attach.json" ] && check_counts "$O/ns-attach.json" 1
else
	note "user namespaces are not allowed here (unshare -Urpf as nobody failed): that part is not run"
fi

# --- 3. nobody attaching to a root-owned process: 4 ------------------------------------------------
spawn "$TMP/rootproc" "$BIN/no_cuda" --seconds 20
ROOTPROC=$SPAWNED_PID
wait_for_line "$TMP/rootproc.out" '^ready' 20
as_nobody "$NB/gputop" -p "$ROOTPROC" >"$TMP/perm.out" 2>"$TMP/perm.err" </dev/null
expect_eq "$?" 4 "nobody attaching to root's process: exit status 4"
expect_match "$(head -n 1 "$TMP/perm.err")" "^gputop: cannot attach to $ROOTPROC: Operation not permitted: it belongs to user 0" \
	"nobody attaching to root's process: says whose it is"
expect_match "$(cat "$TMP/perm.err")" 'hint: .*CAP_SYS_PTRACE' "nobody attaching to root's process: a hint"
expect_eq "$(awk '/^TracerPid:/ { print $2 }' "/proc/$ROOTPROC/status")" 0 "root's process is left untouched"
finish
