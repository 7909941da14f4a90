#!/usr/bin/env bash
# The pre-flight example's ConfigMap holds manifests/examples/preflight/run.sh verbatim
# (hack/gen-preflight.sh writes it): a change to one without the other fails here.
source "$(dirname "$0")/lib.sh"
make_tmp
cp "$examples_dir/preflight.yaml" "$tmp/preflight.yaml"
"$repo/hack/gen-preflight.sh" "$tmp/preflight.yaml"
diff -u "$examples_dir/preflight.yaml" "$tmp/preflight.yaml" ||
  die "preflight.yaml's run.sh differs from manifests/examples/preflight/run.sh: run hack/gen-preflight.sh"
bash -n "$examples_dir/preflight/run.sh" || die "run.sh does not parse"
echo "PASS: preflight.yaml carries manifests/examples/preflight/run.sh verbatim"
