#!/usr/bin/env bash
# rdmanet's main job, end to end, in a few minutes: a training pod's network life.
#
#   sudo hack/demo.sh [--quiet] [--keep]
#
#  1. installs what is missing (hack/install-deps.sh) and builds the binaries the demo runs;
#  2. boots the real-kernel VM (hack/vm: two igb SR-IOV NICs on two NUMA nodes), or, when the VM
#     cannot run (no QEMU 10, or RDMANET_DEMO_SIMNODE=1), the simulated node on this host;
#  3. the node doctor's checklist and NIC x GPU matrix;
#  4. rdmanet-device-plugin with a pools config, registered with a stand-in kubelet;
#  5. two pods on NUMA 0 and 1: GetPreferredAllocation, Allocate, then CNI ADD of the device;
#  6. jumbo ping between the pods, the lossless PCP on the wire, the PF's VF table; RDMA writes
#     (ib_write_bw) between the pods, every RoCE v2 frame on the wire tagged with the priority;
#  7. a link down and up, seen by kubelet as Unhealthy then Healthy;
#  8. CNI DEL, and every VF back as it was.
# Exits 0 only if every step checked out (N/A: not possible on this path, and said why).
#
# --quiet prints only the summary (the story goes to a log file, named on failure);
# --keep leaves the simulated node up; in the VM, it ends with a root shell on the VM's console
# (from a terminal; the VM powers off when the shell exits).
# BUILD_DIR (default build/) is the build directory, as for hack/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

quiet=0 keep=0
for a in "$@"; do
  case $a in
    --quiet) quiet=1 ;;
    --keep) keep=1 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" && exit 0 ;;
    *) echo "demo: unknown option $a (see --help)" >&2 && exit 2 ;;
  esac
done
if [[ $(id -u) != 0 ]]; then
  echo "demo: run as root (it installs packages, creates links and network namespaces)" >&2
  exit 2
fi

build_dir=${BUILD_DIR:-build}
[[ $build_dir = /* ]] || build_dir=$repo/$build_dir
work=$(mktemp -d /tmp/rdmanet-demo-host.XXXXXX)
results=$work/results
log=$work/story.log
: >"$results"
start=$SECONDS
# The story goes to the terminal, and with --quiet to the log file only.
if ((quiet)); then exec 3>"$log"; else exec 3>&1; fi

section() { printf '\n==== %s\n' "$*" >&3; }
record() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$results" && printf '>> %s: %s%s\n' "$1" "$2" "${3:+ ($3)}" >&3; }

# --- 1. install and build -------------------------------------------------------------------------
targets=(rdmanet rdmanet-device-plugin rdmanet-fake-kubelet rdmanet-doctor rdmanet-simnode)
section "1. Install what is missing, build ${targets[*]} (in $build_dir)"
build_ok=1
hack/install-deps.sh >&3 2>&1 || build_ok=0
if ((build_ok)) && [[ ! -f $build_dir/build.ninja ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&3 2>&1 || build_ok=0
fi
if ((build_ok)); then
  cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" >"$work/build.log" 2>&1 ||
    build_ok=0
  tail -n 2 "$work/build.log" >&3
fi
build_detail="$((SECONDS - start)) s"
if ((build_ok)); then
  record build PASS "$build_detail"
else
  record build FAIL "see $log"
fi

export RDMANET_DEMO_REPO=$repo RDMANET_DEMO_KEEP=$keep
export RDMANET_DEMO_BIN_CNI=$build_dir/cni/rdmanet
export RDMANET_DEMO_BIN_DP=$build_dir/deviceplugin/rdmanet-device-plugin
export RDMANET_DEMO_BIN_KUBELET=$build_dir/tests/deviceplugin/rdmanet-fake-kubelet
export RDMANET_DEMO_BIN_DOCTOR=$build_dir/deviceplugin/doctor/rdmanet-doctor
export RDMANET_DEMO_BIN_SIMNODE=$build_dir/tests/simnode/rdmanet-simnode

# --- 2-8. the story, in the VM or on the simulated node ------------------------------------------
qemu_major=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\).*/\1/p')
platform=vm why=
if [[ ${RDMANET_DEMO_SIMNODE:-0} == 1 ]]; then
  platform=simnode why="RDMANET_DEMO_SIMNODE=1"
elif [[ -z $qemu_major || $qemu_major -lt 10 ]]; then
  platform=simnode why="no QEMU >= 10 (igb SR-IOV emulation) on this machine"
fi
if ((build_ok)) && [[ $platform == vm ]]; then
  section "2-8. In the real-kernel VM (hack/vm/run.sh hack/demo/story.sh vm)"
  # --keep hands this terminal to a shell in the VM at the end (hack/vm/run.sh --interactive).
  vm_opts=(--timeout "${RDMANET_DEMO_VM_TIMEOUT:-900}")
  if ((keep && !quiet)) && [[ -t 0 ]]; then vm_opts=(--timeout 7200 --interactive); fi
  rc=0
  RDMANET_VM_OUT_DIR=$work/vm hack/vm/run.sh "${vm_opts[@]}" hack/demo/story.sh vm >&3 2>&1 || rc=$?
  [[ -f $work/vm/results ]] && cat "$work/vm/results" >>"$results"
  if ((rc == 125)); then
    platform=simnode why="the VM could not run here (hack/vm/run.sh: infrastructure failure)"
    : >"$results" && record build PASS "$build_detail"
  elif ((rc == 124)); then
    record vm FAIL "the VM run timed out"
  fi
fi
if ((build_ok)) && [[ $platform == simnode ]]; then
  section "2-8. On the simulated node, on this host: $why"
  RDMANET_DEMO_RESULTS=$results hack/demo/story.sh simnode >&3 2>&1 || true
fi

# --- summary --------------------------------------------------------------------------------------
steps=(build node doctor device-plugin pod-a pod-b ping-jumbo pcp-capture vf-settings
  rdma-traffic health-down health-up vf-restore)
declare -A status detail
while IFS=$'\t' read -r k s d; do
  status[$k]=$s detail[$k]=$d
done <"$results"
fails=0
where=$platform
[[ -n $why ]] && where="$platform ($why)"
printf '\nrdmanet demo summary: %s, %d s\n' "$where" $((SECONDS - start))
printf '  %-14s %-6s %s\n' STEP RESULT DETAIL
for k in "${steps[@]}" vm; do
  [[ $k == vm && -z ${status[vm]:-} ]] && continue
  s=${status[$k]:-FAIL} d=${detail[$k]:-not reached}
  [[ $s == PASS || $s == N/A ]] || fails=$((fails + 1))
  printf '  %-14s %-6s %s\n' "$k" "$s" "${d:0:110}"
done
if ((fails)); then
  if ((quiet)); then
    printf 'demo: %d step(s) failed; the story is in %s\n' "$fails" "$log"
  else
    printf 'demo: %d step(s) failed\n' "$fails"
    rm -rf "$work"
  fi
  exit 1
fi
printf 'demo: every step checked out\n'
rm -rf "$work"
