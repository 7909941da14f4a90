#!/usr/bin/env bash
# hack/install-helm.sh is idempotent: with everything present (hack/test.sh installed it) a rerun
# prints nothing and changes nothing (every file and link under the tools dir keeps its name, size
# and mtime: nothing was downloaded or reinstalled), and the tools are the pinned ones. Not timed:
# a wall-clock bound failed on a loaded machine (lint running beside it).
source "$(dirname "$0")/lib.sh"
require_tools
snapshot() { find "$tools" ! -type d -printf '%p %s %T@\n' | sort; }
before=$(snapshot)
out=$("$repo/hack/install-helm.sh" 2>&1) || die "install-helm.sh failed: $out"
[[ -z $out ]] || die "a rerun with everything installed printed: $out"
[[ $(snapshot) == "$before" ]] ||
  die "a no-op rerun changed the tools dir: $(diff <(echo "$before") <(snapshot) | head -n 5)"
[[ $("$helm" version --template '{{.Version}}') == v3.17.3 ]] || die "helm is not v3.17.3"
grep -q 'v1.31' <<<"$("$tools/bin/kubectl" version --client 2>/dev/null)" || die "kubectl is not v1.31"
grep -q '"version": "4.5.1"' "$node_modules/kubernetes-models/package.json" ||
  die "kubernetes-models is not 4.5.1"
# The resource.k8s.io/v1 schemas of the stand-in API server (tests/fakes/apiserver).
grep -q '"version": "5.1.0"' "$node_modules/kubernetes-models-5/package.json" ||
  die "kubernetes-models-5 (alias of kubernetes-models@5.1.0) is not installed"
# Nothing of it lands in the checkout.
[[ -z $(cd "$repo" && git status --porcelain --ignored -- node_modules package-lock.json 2>/dev/null) ]] ||
  die "npm left files in the checkout"
echo "PASS: install-helm.sh is a no-op rerun; helm v3.17.3, kubectl v1.31, kubernetes-models 4.5.1 and 5.1.0"
