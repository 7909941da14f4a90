#!/usr/bin/env bash
# lint: one clock. Production code reads time only through the Clock seam (common/base/clock.h:
# Clock, SteadyClock, wallNow), so every deadline, time-out and timer runs on the injected clock
# and tests drive it with a FakeClock; and nothing sleeps: a pause is a wait on the clock
# (Clock::sleepFor, Clock::waitUntil) or on a condition. Tests wait for events with a clock step,
# a condition variable or tests/fakes/eventually.h, never a bare sleep (CONTRIBUTING.md,
# "Tests"). Fails naming each offending line.
#
#   one_clock.sh [REPO]       check REPO (the production code in cni/, common/, deviceplugin/, and
#                             tests/)
#   one_clock.sh --self-test  plant each refused form in a scratch tree and show that every one
#                             is caught (and that a clean tree passes)
#
# Refused in production code outside common/base/clock.h (the real clock):
#   steady_clock::now, system_clock::now, high_resolution_clock::now, time(nullptr),
#   gettimeofday, clock_gettime of a wall or monotonic clock (a thread's CPU time is not a clock
#   of ours), sleep_for, sleep_until, usleep, nanosleep, sleep().
# Refused in tests/: sleep_for, sleep_until, usleep, nanosleep, beyond the sleeps the allowlist
# below grants a file, each with its reason: only where real time is the thing under test.
# Text after // is a comment and not looked at.
set -euo pipefail
# shellcheck source=tests/lint/planted.sh
source "$(dirname "$0")/planted.sh"

readonly kClockFile='common/base/clock.h'
readonly kSleeps='sleep_for|sleep_until|(^|[^[:alnum:]_])(usleep|nanosleep|sleep)[[:space:]]*\('
readonly kProductForms='(steady_clock|system_clock|high_resolution_clock)::now|(^|[^[:alnum:]_])time\((nullptr|NULL|0)\)|gettimeofday|clock_gettime\([[:space:]]*CLOCK_(REALTIME|MONOTONIC|BOOTTIME)|'"$kSleeps"
readonly kTestForms='sleep_for|sleep_until|(^|[^[:alnum:]_])(usleep|nanosleep)[[:space:]]*\('

# The sleeps tests keep: "file|how many|why". Anything else waits on a condition or steps a clock.
readonly kTestAllowlist=(
  'tests/fakes/eventually.h|1|the one poll of a condition nothing notifies (another process, a file, a server behind a socket): the sleep paces the polls, a deadline bounds them'
  'tests/deviceplugin/daemon/http_stall_test.cc|2|clients that trickle their headers and drip-read the reply at a set pace: real slow clients against the server'"'"'s real deadlines are what is under test'
  'tests/deviceplugin/integration/dp_http_hostile_test.cc|1|scrapers that drip-read /metrics at a set pace against the daemon binary: the reply deadline on a real slow reader is what is under test'
  'tests/deviceplugin/fake_kubelet/fake_kubelet.cc|1|a simulated kubelet restart stays down for a set real time: the plugin'"'"'s reaction to a real absence is what restart tests look at'
)

# Lines of `file` (relative to `repo`) that match `forms` outside comments, as "file:line:text".
hits() {
  local repo=$1 f=$2 forms=$3
  sed 's#//.*##' "$repo/$f" | grep -nE "$forms" | sed "s#^#$f:#" || true
}

# Prints WHY and the offending lines, and fails.
refuse() {
  printf 'one_clock: %s:\n%s' "$1" "$2" >&2
  return 1
}

files() {
  (cd "$1" && git ls-files -co --exclude-standard -- "${@:2}" 2>/dev/null) | grep -E '\.(cc|h)$' || true
}

check() {
  local repo=$1 out="" f h n
  while read -r f; do
    [[ -z $f || $f == "$kClockFile" ]] && continue
    h=$(hits "$repo" "$f" "$kProductForms")
    [[ -n $h ]] && out+="$h"$'\n'
  done < <(files "$repo" cni common deviceplugin)
  [[ -z $out ]] || refuse "production code reads a clock or sleeps outside $kClockFile (take the injected Clock, wallNow() for a timestamp, Clock::sleepFor or a condition wait for a pause)" "$out" || return 1
  local -A allowed=()
  local entry
  for entry in "${kTestAllowlist[@]}"; do
    IFS='|' read -r f n _ <<<"$entry"
    allowed[$f]=$n
  done
  while read -r f; do
    [[ -z $f ]] && continue
    h=$(hits "$repo" "$f" "$kTestForms")
    [[ -z $h ]] && continue
    if [[ -n ${allowed[$f]:-} ]] && (($(wc -l <<<"$h") <= allowed[$f])); then continue; fi
    out+="$h"$'\n'
  done < <(files "$repo" tests)
  [[ -z $out ]] || refuse 'a test sleeps (step a FakeClock, wait on a condition, or poll with rdmanet::testing::eventually; a sleep where real time is under test goes in the allowlist of tests/lint/one_clock.sh with its reason)' "$out"
}

self_test() {
  local t
  t=$(planted_tree)
  trap 'rm -rf "$t"; trap - RETURN' RETURN
  mkdir -p "$t"/{cni/state,common/base,common/os,deviceplugin/daemon,tests/fakes,tests/cni}
  # Allowed: the real clock's file, the seam's calls, a thread's CPU time, comments, and the
  # allowlisted test sleeps up to their count.
  printf '%s\n' 'return std::chrono::steady_clock::now();' 'return std::chrono::system_clock::now();' \
    >"$t/$kClockFile"
  printf '%s\n' 'const auto at = clock_.now() + kRetry;' 'clock.sleepFor(pause);' \
    'clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);' '// never std::this_thread::sleep_for here' \
    'const auto stamp = wallNow();' 'int sleeps = 0;' >"$t/deviceplugin/daemon/ok.cc"
  echo 'std::this_thread::sleep_for(every);' >"$t/tests/fakes/eventually.h"
  echo 'if (clock.waitIdle()) clock.advance(1s);' >"$t/tests/cni/ok_test.cc"
  planted_all_caught one_clock check "$t" \
    'cni/state/a.cc:const auto deadline = std::chrono::steady_clock::now() + timeout;' \
    'common/os/b.cc:auto wall = std::chrono::system_clock::now();' \
    'deviceplugin/daemon/c.cc:    ::usleep(100000);' \
    'deviceplugin/d.cc:std::this_thread::sleep_for(pause);' \
    'common/base/e.h:  nanosleep(&ts, nullptr);' \
    'cni/f.cc:  sleep(1);' \
    'deviceplugin/g.cc:const auto t = high_resolution_clock::now();' \
    'cni/h.cc:int64_t now = std::time(nullptr);' \
    'common/i.cc:gettimeofday(&tv, nullptr);' \
    'deviceplugin/j.cc:clock_gettime(CLOCK_MONOTONIC, &ts);' \
    'deviceplugin/k.cc:std::this_thread::sleep_until(at);' \
    'tests/cni/l_test.cc:std::this_thread::sleep_for(std::chrono::milliseconds(10));' \
    'tests/cni/m_test.cc:  usleep(1000);' \
    'tests/fakes/n.h:nanosleep(&ts, nullptr);' \
    $'tests/fakes/eventually.h:std::this_thread::sleep_for(a);\nstd::this_thread::sleep_for(b);'
}

planted_lint_main one_clock check self_test "$@"
