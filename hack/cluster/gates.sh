# shellcheck shell=bash
# Feature gates per Kubernetes minor version, for every component (a gate a component does not
# know is an error, so each component gets only the gates it registers). Sourced.
#
# What rdmanet needs beyond each release's defaults (KEP stages in the README):
#   1.34, 1.35: DRA device taints (KEP-5055), extended resources through DRA (KEP-5004) and
#         resource health in pod status (KEP-4680) are alpha: turned on (1.34 is no longer
#         tested).
#   1.37: taints and extended resources are GA; resource health is beta and on by default.

# gates COMPONENT: prints the --feature-gates value (empty for none).
gates() {
  local minor
  minor=$(k8s_version) && minor=${minor#v1.} && minor=${minor%%.*}
  if ((minor < 36)); then
    case $1 in
      kube-apiserver) echo "DRADeviceTaints=true,DRAExtendedResource=true" ;;
      kube-scheduler | kube-controller-manager) echo "DRADeviceTaints=true,DRAExtendedResource=true" ;;
      kubelet) echo "ResourceHealthStatus=true,DRAExtendedResource=true" ;;
    esac
  fi
}

# runtime_config: the API server's --runtime-config value (empty for none). On 1.34 the
# scheduler's DRADeviceTaints informer lists DeviceTaintRules (resource.k8s.io/v1alpha3), an
# alpha API the server does not serve unless asked: without it the scheduler's caches never
# sync and no pod is scheduled.
runtime_config() {
  local minor
  minor=$(k8s_version) && minor=${minor#v1.} && minor=${minor%%.*}
  ((minor < 36)) && echo "resource.k8s.io/v1alpha3=true"
  true
}
