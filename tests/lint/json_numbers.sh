#!/usr/bin/env bash
# lint: numbers of JSON from outside are read through common/json/json_access.h (asInt, optInt,
# intOr), which checks the type and the range. nlohmann's own conversions do not: `value("k", 0)`
# and `get<int>()` turn 1e300 into undefined behaviour and 70000 into a wrapped uint16_t, and the
# fuzzers found both in state-file readers. Fails naming each offending line.
#
#   json_numbers.sh [REPO]      check the production code (cni/, common/, deviceplugin/) of REPO
#   json_numbers.sh --self-test plant each refused form in a scratch tree and show that every one
#                               is caught (and that a clean tree passes)
#
# Refused outside common/json/:
#   - `.value("key", <number>)`, a numeric fallback (a number literal or an int64_t{...}-style one);
#   - `.value<T>(` and `.get<T>()` for an integer or floating type, and `.get_to(`.
# A line whose value was checked first (an unsigned 64-bit counter, beyond int64_t) may carry the
# marker `json-number: checked` in a comment on it.
set -euo pipefail
# shellcheck source=tests/lint/planted.sh
source "$(dirname "$0")/planted.sh"

readonly kTypes='(int|unsigned|long|short|u?int(8|16|32|64)_t|size_t|ssize_t|double|float)'
readonly kForms='(\.|->)value\("[^"]*",[[:space:]]*(-?[0-9]|(u?int(8|16|32|64)_t|size_t)\{)|(\.|->)(value|get)<[[:space:]]*'"$kTypes"'[[:space:]]*>|(\.|->)get_to\('

check() {
  local repo=$1 hits
  hits=$( (cd "$repo" && git ls-files -co --exclude-standard -- cni common deviceplugin 2>/dev/null) |
    grep -E '\.(cc|h)$' | grep -v '^common/json/' | while read -r f; do
      grep -nH -E "$kForms" "$repo/$f" | grep -v 'json-number: checked' | sed "s#^$repo/##" || true
    done)
  if [[ -n $hits ]]; then
    printf 'json_numbers: a JSON number read without a type and range check (use asInt/optInt/intOr of common/json/json_access.h):\n%s\n' "$hits" >&2
    return 1
  fi
}

self_test() {
  local t
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  git -C "$t" init -q
  mkdir -p "$t"/{cni/state,common/json,deviceplugin/dra}
  # Allowed: strings and booleans through value(), the typed helpers, common/json's own reads,
  # and a checked line.
  printf '%s\n' 'auto s = j.value("name", "");' 'bool b = j.value("up", false);' \
    'auto n = intOr(j, "mtu", 0);' >"$t/cni/state/ok.cc"
  echo 'const uint64_t u = v.get<uint64_t>();' >"$t/common/json/ok.cc"
  echo 'out = v.get<uint64_t>();  // json-number: checked (is_number_unsigned above)' \
    >"$t/deviceplugin/dra/ok.cc"
  planted_all_caught json_numbers check "$t" 'cni/state/a.cc:s.vf = j.value("vfIndex", -1);' \
    'cni/state/b.cc:s.t = j.value("addedNs", int64_t{0});' \
    'common/c.cc:int v = j.at("version").get<int>();' \
    'deviceplugin/dra/d.cc:auto g = p["generation"].get<int64_t>();' \
    'deviceplugin/e.h:double x = j.value<double>("x", 1.5);' \
    'cni/f.cc:j.at("n").get_to(n);' 'common/g.cc:auto m = j.value("mtu", 0u);' \
    'cni/h.cc:info["tc"] = it->get<int>() << 2;' 'cni/i.cc:s.p = d->value("podIfindex", 0);'
}

if [[ ${1:-} == --self-test ]]; then
  self_test
else
  repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
  check "$repo"
  echo "json_numbers: OK"
fi
