# shellcheck shell=bash
# The self-tests of the pattern lints (layering.sh, json_numbers.sh), sourced by them: a rule is
# only trusted once a planted violation of it has been caught.
#
#   planted_all_caught NAME CHECK TREE PLANT...
# TREE is a scratch git tree that CHECK (a function taking the tree) passes clean. Each PLANT is
# "relative/file:line of text": the file is written with that line, CHECK must refuse the tree,
# and the file is removed again. Prints the tally; returns 1 naming every plant not caught.
planted_all_caught() {
  local name=$1 check_fn=$2 tree=$3
  shift 3
  if ! "$check_fn" "$tree" 2>/dev/null; then
    echo "self-test: a clean tree was refused" >&2
    return 1
  fi
  local plant n=0 failed=0
  for plant in "$@"; do
    local f=${plant%%:*} line=${plant#*:}
    echo "$line" >"$tree/$f"
    n=$((n + 1))
    if "$check_fn" "$tree" 2>/dev/null; then
      echo "self-test: not caught: $f: $line" >&2
      failed=1
    fi
    rm "$tree/$f"
  done
  ((failed == 0)) || return 1
  echo "$name self-test: $n planted, $n caught; a clean tree passes"
}

# A scratch git tree for a self-test's plants; prints its path (the caller removes it).
planted_tree() {
  local t
  t=$(mktemp -d)
  git -C "$t" init -q
  echo "$t"
}

#   planted_lint_main NAME CHECK SELF_TEST [--self-test | REPO]
# A pattern lint's entry point: with --self-test runs SELF_TEST; otherwise CHECK on REPO (this
# repository when none is given) and prints "NAME: OK".
planted_lint_main() {
  local name=$1 check_fn=$2 self_test_fn=$3
  if [[ ${4:-} == --self-test ]]; then
    "$self_test_fn"
    return
  fi
  "$check_fn" "${4:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
  echo "$name: OK"
}
