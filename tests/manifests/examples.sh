#!/usr/bin/env bash
# manifests/examples: every object valid offline, every network they attach rendered by a
# per-mode values file with the resource they request, and their embedded scripts parse.
source "$(dirname "$0")/lib.sh"
require_tools
make_tmp

renders=()
for m in $(modes); do
  render "$tmp/$m.yaml" -f "$values_dir/$m.yaml"
  renders+=("$tmp/$m.yaml")
done
examples=("$examples_dir"/*.yaml)
((${#examples[@]} >= 5)) || die "expected the PyTorch (sriov, DRA), macvlan/shared, GPU-NIC claim and pre-flight examples"
node "$tests_dir/check_examples.js" --scripts-out "$tmp/scripts" --renders "${renders[@]}" \
  --examples "${examples[@]}"

n=0
for s in "$tmp"/scripts/*; do
  case $s in
    *.sh) bash -n "$s" || die "$(basename "$s") does not parse" ;;
    *.py) /usr/bin/python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' "$s" ||
      die "$(basename "$s") does not parse" ;;
    *) continue ;;
  esac
  n=$((n + 1))
done
((n >= 2)) || die "expected the training script and the pre-flight script, checked $n"

# The pre-flight pass thresholds are part of the contract with the admin.
grep -q '90% of the port.s line rate' "$examples_dir/preflight.yaml" || die "preflight: no 90% line-rate threshold"
grep -q '80% of the theoretical bus bandwidth' "$examples_dir/preflight.yaml" ||
  die "preflight: no 80% bus-bandwidth threshold"
grep -q 'all_reduce_perf' "$examples_dir/preflight.yaml" || die "preflight lacks all_reduce_perf"
grep -q 'ib_write_bw' "$examples_dir/preflight.yaml" || die "preflight lacks ib_write_bw"
grep -q 'rdmanet-doctor probe' "$examples_dir/preflight.yaml" || die "preflight does not run the probe"
echo "PASS: examples (${#examples[@]} files, $n scripts parsed)"
