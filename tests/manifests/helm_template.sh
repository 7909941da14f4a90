#!/usr/bin/env bash
# helm template with one values set, then every rendered object checked offline
# (check_chart.js: kubernetes-models, netconfs, the DaemonSet's wiring).
#
#   helm_template.sh default       the chart's own values
#   helm_template.sh <mode>        manifests/values/<mode>.yaml (sriov, macvlan, host-device,
#                                  sriov-dra: a file with `api: dra` is checked as such)
#   helm_template.sh toggles       the optional parts switched: metrics Service + ServiceMonitor,
#                                  scrape annotations, PrometheusRule, dashboard, CDI, no CNI
#                                  install, an existing ServiceAccount, image digest
#   helm_template.sh dra           api: dra with the defaults, and with its values changed
source "$(dirname "$0")/lib.sh"
require_tools
make_tmp
what=${1:?usage: helm_template.sh default|toggles|<mode>}
check=(node "$tests_dir/check_chart.js")

case $what in
  default)
    render "$tmp/r.yaml"
    "${check[@]}" "$tmp/r.yaml"
    # Optional objects stay off by default.
    ! grep -qE '^kind: (Service|ServiceMonitor|PrometheusRule|NetworkAttachmentDefinition)$' "$tmp/r.yaml" ||
      die "default values render optional objects"
    ! grep -qE '^  (rdmanet\.json|prometheus\.io/scrape):' "$tmp/r.yaml" ||
      die "default values render the dashboard or scrape annotations"
    ;;
  toggles)
    render "$tmp/a.yaml" --set metrics.serviceMonitor.enabled=true --set devicePlugin.cdi.enabled=true
    "${check[@]}" "$tmp/a.yaml"
    grep -qx 'kind: ServiceMonitor' "$tmp/a.yaml" || die "serviceMonitor.enabled renders no ServiceMonitor"
    grep -qx 'kind: Service' "$tmp/a.yaml" || die "a ServiceMonitor needs the metrics Service"
    grep -qx -- ' *- --cdi' "$tmp/a.yaml" || die "cdi.enabled does not pass --cdi"
    # LLDP (rails) off: --no-lldp and no capability; a rail rule reaches the config as `rails`.
    render "$tmp/l.yaml" --set devicePlugin.lldp.enabled=false
    "${check[@]}" "$tmp/l.yaml"
    grep -qx -- ' *- --no-lldp' "$tmp/l.yaml" || die "lldp.enabled=false does not pass --no-lldp"
    ! grep -q 'add: \[NET_RAW\]' "$tmp/l.yaml" || die "lldp.enabled=false still adds NET_RAW"
    render "$tmp/r.yaml" --set devicePlugin.lldp.rails.match='leaf-([0-9]+)' \
      --set devicePlugin.lldp.rails.rail='rail-$1'
    "${check[@]}" "$tmp/r.yaml"
    grep -q '"rails": {' "$tmp/r.yaml" || die "devicePlugin.lldp.rails is not in the config"
    grep -q 'add: \[NET_RAW\]' "$tmp/r.yaml" || die "lldp on by default adds no NET_RAW"
    ! grep -q 'add: \[.*SYS_ADMIN\|name: pod-netns' "$tmp/r.yaml" || die "podNetns off by default, yet rendered"
    # Reading in the pods' netns: SYS_ADMIN beside NET_RAW (alone with LLDP off), the runtime's
    # netns dir mounted read-only with HostToContainer propagation.
    render "$tmp/n.yaml" --set devicePlugin.podNetns.enabled=true
    "${check[@]}" "$tmp/n.yaml"
    grep -q 'add: \[NET_RAW, SYS_ADMIN\]' "$tmp/n.yaml" || die "podNetns adds no SYS_ADMIN"
    grep -A3 'name: pod-netns$' "$tmp/n.yaml" | grep -q 'mountPropagation: HostToContainer' ||
      die "the pods' netns dir is not mounted HostToContainer"
    grep -A2 'name: pod-netns$' "$tmp/n.yaml" | grep -q 'path: /var/run/netns' ||
      die "the pods' netns dir is not /var/run/netns"
    render "$tmp/n2.yaml" --set devicePlugin.podNetns.enabled=true --set devicePlugin.lldp.enabled=false
    grep -q 'add: \[SYS_ADMIN\]' "$tmp/n2.yaml" || die "podNetns without LLDP adds not SYS_ADMIN alone"
    # The per-pod series' own namespace and pod labels survive the scrape.
    grep -qx ' *honorLabels: true' "$tmp/a.yaml" || die "the ServiceMonitor does not honor labels"

    # Monitoring without the operator: scrape annotations on the pods; the rules and the
    # dashboard (its ConfigMap where Grafana's sidecar looks, with the sidecar's label).
    render "$tmp/m.yaml" --set metrics.scrapeAnnotations.enabled=true \
      --set metrics.prometheusRule.enabled=true --set metrics.prometheusRule.labels.release=kps \
      --set metrics.dashboard.enabled=true --set metrics.dashboard.namespace=grafana \
      --set devicePlugin.metricsPort=9200
    "${check[@]}" "$tmp/m.yaml"
    grep -qx ' *prometheus.io/scrape: "true"' "$tmp/m.yaml" || die "no prometheus.io/scrape annotation"
    grep -qx ' *prometheus.io/port: "9200"' "$tmp/m.yaml" || die "prometheus.io/port is not the metrics port"
    grep -qx 'kind: PrometheusRule' "$tmp/m.yaml" || die "prometheusRule.enabled renders no PrometheusRule"
    grep -qx '    release: kps' "$tmp/m.yaml" || die "prometheusRule.labels ignored"
    node -e 'const {renderedDashboard}=require(process.argv[1]);const d=renderedDashboard(process.argv[2]);
      if(!d.uid)process.exit(1)' "$tests_dir/monitoring.js" "$tmp/m.yaml" || die "no dashboard JSON"
    grep -qx '  namespace: grafana' "$tmp/m.yaml" || die "dashboard.namespace ignored"
    grep -qx '    grafana_dashboard: "1"' "$tmp/m.yaml" || die "the dashboard lacks the sidecar's label"

    # The metrics port on the node's InternalIP only.
    render "$tmp/n.yaml" --set devicePlugin.metricsBindNodeIP=true
    "${check[@]}" "$tmp/n.yaml"
    grep -qx -- ' *- "\$(NODE_IP):9109"' "$tmp/n.yaml" || die "metricsBindNodeIP does not bind \$(NODE_IP)"
    grep -qx ' *fieldPath: status.hostIP' "$tmp/n.yaml" || die "metricsBindNodeIP sets no NODE_IP"
    ! grep -qx ' *- name: NODE_IP' "$tmp/a.yaml" || die "NODE_IP set without metricsBindNodeIP"

    render "$tmp/b.yaml" --set cni.install=false --set serviceAccount.create=false \
      --set serviceAccount.name=node-agents \
      --set image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    "${check[@]}" "$tmp/b.yaml" --install-cni false
    ! grep -qx 'kind: ServiceAccount' "$tmp/b.yaml" || die "serviceAccount.create=false still renders one"
    grep -q 'serviceAccountName: node-agents' "$tmp/b.yaml" || die "serviceAccount.name ignored"
    grep -q 'image: rdmanet@sha256:0123' "$tmp/b.yaml" || die "image.digest ignored"

    # A pool change must change the pods' checksum (and so roll them); a network change must not.
    # (--set on a list element replaces the list, so the changed pool comes as a file.)
    sed 's/preferredAllocation: gpu-near/preferredAllocation: pack/' "$values_dir/sriov.yaml" >"$tmp/pack.yaml"
    render "$tmp/c.yaml" -f "$tmp/pack.yaml"
    render "$tmp/d.yaml" -f "$values_dir/sriov.yaml"
    render "$tmp/e.yaml" -f "$values_dir/sriov.yaml" --set 'networks[0].mtu=1500'
    sum() { sed -n 's/.*checksum\/config: //p' "$1"; }
    [[ $(sum "$tmp/d.yaml") != "$(sum "$tmp/c.yaml")" ]] || die "checksum ignores a pool change"
    [[ $(sum "$tmp/d.yaml") == "$(sum "$tmp/e.yaml")" ]] || die "checksum changes with a network"

    # Another kubelet root dir in device-plugin mode: pod-resources follows it, device-plugins
    # stays at kubelet's fixed path unless devicePluginDir says otherwise.
    render "$tmp/k0s.yaml" --set devicePlugin.kubeletDir=/var/lib/k0s/kubelet
    "${check[@]}" "$tmp/k0s.yaml" --api deviceplugin
    grep -qx -- ' *path: /var/lib/kubelet/device-plugins' "$tmp/k0s.yaml" ||
      die "device-plugins does not stay at kubelet's fixed path when kubeletDir moves"
    grep -qx -- ' *path: /var/lib/k0s/kubelet/pod-resources' "$tmp/k0s.yaml" ||
      die "pod-resources does not follow kubeletDir"
    render "$tmp/dpdir.yaml" --set devicePlugin.devicePluginDir=/opt/kubelet/device-plugins
    grep -qx -- ' *path: /opt/kubelet/device-plugins' "$tmp/dpdir.yaml" ||
      die "devicePluginDir is not the device-plugins hostPath"
    ;;
  dra)
    render "$tmp/a.yaml" --set api=dra
    "${check[@]}" "$tmp/a.yaml" --api dra
    # Both of the daemon's env entries when the metrics port is bound to the node's IP.
    render "$tmp/n.yaml" --set api=dra --set devicePlugin.metricsBindNodeIP=true
    "${check[@]}" "$tmp/n.yaml" --api dra
    grep -qx ' *- name: NODE_NAME' "$tmp/n.yaml" && grep -qx ' *- name: NODE_IP' "$tmp/n.yaml" ||
      die "api: dra with metricsBindNodeIP lacks NODE_NAME or NODE_IP"
    ! grep -q -- '--dra-allow-multiple-allocations' "$tmp/a.yaml" || die "KEP-5075 is on by default"
    # Device metadata (KEP-5304): on by default (the daemon's default), off on request.
    ! grep -q -- '--no-dra-device-metadata' "$tmp/a.yaml" || die "device metadata is off by default"
    # LLDP off: no `update` on nodes and no rails policy (check_dra.js reads --no-lldp).
    render "$tmp/nolldp.yaml" --set api=dra --set devicePlugin.lldp.enabled=false
    "${check[@]}" "$tmp/nolldp.yaml" --api dra
    ! grep -q 'own-node-rails' "$tmp/nolldp.yaml" || die "lldp off still renders the rails policy"
    render "$tmp/nometa.yaml" --set api=dra --set dra.deviceMetadata=false
    grep -qx -- ' *- --no-dra-device-metadata' "$tmp/nometa.yaml" ||
      die "dra.deviceMetadata=false does not pass --no-dra-device-metadata"
    # The admission policy that binds slice writes to the daemon's node: on by default, off on
    # request (a cluster with an equivalent of its own).
    render "$tmp/nopolicy.yaml" --set api=dra --set dra.admissionPolicy.enabled=false
    "${check[@]}" "$tmp/nopolicy.yaml" --api dra --admission-policy false
    # Everything of the driver follows its values: name, kubelet dir, KEP-5075, several pools
    # (an underscore in a pool name is not DNS: its class name uses '-').
    cat >"$tmp/pools.yaml" <<'EOF'
pools:
  - {resourceName: vf_a, selectors: [{pfNames: [ens1f0]}]}
  - {resourceName: shared, mode: shared, selectors: [{ifNames: [ens2f0]}]}
EOF
    render "$tmp/b.yaml" --set api=dra --set dra.driverName=nic.example.com \
      --set devicePlugin.kubeletDir=/var/lib/k0s/kubelet --set dra.allowMultipleAllocations=true \
      --set devicePlugin.resourcePrefix=example.com -f "$tmp/pools.yaml"
    "${check[@]}" "$tmp/b.yaml" --api dra
    grep -qx -- ' *- --dra-allow-multiple-allocations' "$tmp/b.yaml" ||
      die "allowMultipleAllocations does not pass --dra-allow-multiple-allocations"
    grep -qx -- ' *- /var/lib/k0s/kubelet' "$tmp/b.yaml" || die "kubeletDir is not the --kubelet-dir"
    for c in vf-a.nic.example.com shared.nic.example.com; do
      grep -qx "  name: $c" "$tmp/b.yaml" || die "no DeviceClass $c"
    done
    # The README's move from the device plugin, node by node: the old release kept off the
    # labelled nodes, a second one with api: dra on them, the NADs left to the first.
    cat >"$tmp/old.yaml" <<'EOF'
daemonset:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: rdmanet.io/api, operator: NotIn, values: [dra]}]
EOF
    render "$tmp/old.yaml.out" -f "$values_dir/sriov.yaml" -f "$tmp/old.yaml"
    "${check[@]}" "$tmp/old.yaml.out" --min-networks 1
    "$helm" template rdmanet-dra "$chart" --namespace kube-system -f "$values_dir/sriov.yaml" \
      --set api=dra --set 'daemonset.nodeSelector.rdmanet\.io/api=dra' --set-json 'networks=[]' \
      >"$tmp/new.yaml"
    "${check[@]}" "$tmp/new.yaml" --api dra
    ! grep -qx 'kind: NetworkAttachmentDefinition' "$tmp/new.yaml" || die "the DRA release renders NADs"
    grep -q 'rdmanet.io/api: dra' "$tmp/new.yaml" || die "the DRA release ignores its nodeSelector"
    grep -qx '  name: rdmanet-dra-dra' "$tmp/new.yaml" || die "the second release's RBAC is not its own"
    ;;
  *)
    f=$values_dir/$what.yaml
    [[ -f $f ]] || die "no values file $f"
    render "$tmp/r.yaml" -f "$f"
    "${check[@]}" "$tmp/r.yaml" --min-networks 1 --netconf-out "$tmp/nc" --api "$(values_api "$f")"
    # The file's own mode (its name, less a -dra suffix) must be what its networks render.
    for nc in "$tmp"/nc/*.json; do
      [[ $(basename "$nc") == device-plugin-*.json ]] && continue
      node -e 'const r=require(process.argv[1]);if(r.netconf.mode!==process.argv[2])
        {console.error(`${r.netconf.name}: mode ${r.netconf.mode}`);process.exit(1)}' "$nc" "${what%-dra}" ||
        die "values/$what.yaml renders a network of another mode"
    done
    ;;
esac
echo "PASS: helm template $what"
