// The api-dependent parts of a chart render (issue 12), for check_chart.js:
// - checkNoDra (api: deviceplugin): kubelet's device-plugins dir mounted; no RBAC, no DeviceClass;
// - checkDra (api: dra): the daemon runs with --api dra, its driver name and the host's kubelet
//   dir; the DRA plugin and registry dirs are mounted at their host paths (kubelet dials the
//   socket path the driver registers); NODE_NAME comes from the downward API; the RBAC is exactly
//   what the driver calls; one DeviceClass per pool selects the driver and the pool by CEL and
//   carries the pool's extended resource name (KEP-5004); a ValidatingAdmissionPolicy and its
//   binding hold the daemon's service account to its own node's ResourceSlices of its driver.
// ctx: {docs, pod, container, dpConfig, fail, expectEq, mountFor, hostPathOf, flag, noPolicy}.
'use strict';

const kRbacKinds = ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'];

// What the driver calls (deviceplugin/dra/apiserver/slice_publisher.cc, kube_claim_reader.cc,
// event_recorder.cc, kube_claim_status_writer.cc), as "group resource verb"; the core group is
// "". The synthetic resourceclaims/driver rule (Kubernetes 1.36+, for status.devices) is checked
// apart: it alone names a resource, the driver.
const kDraRules = [
  'resource.k8s.io resourceclaims/status update',
  'resource.k8s.io resourceslices list',
  'resource.k8s.io resourceslices create',
  'resource.k8s.io resourceslices update',
  'resource.k8s.io resourceslices delete',
  'resource.k8s.io resourceclaims get',
  'resource.k8s.io resourceclaims list',
  ' nodes get',
  ' events create',
].sort();

const kPolicyKinds = ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
const ofKind = (docs, k) => docs.filter((d) => d.kind === k);
const argvOf = (c) => [...(c.command || []), ...(c.args || [])];

function checkNoDra(ctx) {
  const {docs, container: c, fail, mountFor, hostPathOf, flag} = ctx;
  const argv = argvOf(c);
  if (argv.includes('--api') && flag(argv, '--api') !== 'deviceplugin') fail('--api is not deviceplugin');
  const kubelet = flag(argv, '--kubelet-dir');
  const dpm = mountFor(c, `${kubelet}/device-plugins`);
  if (!dpm || dpm.readOnly) fail(`--kubelet-dir ${kubelet}: device-plugins not mounted read-write`);
  else if (!/\/device-plugins$/.test(hostPathOf(dpm.name) || '')) fail('device-plugins is not a hostPath');
  for (const k of [...kRbacKinds, 'DeviceClass', ...kPolicyKinds]) {
    if (ofKind(docs, k).length) fail(`${k} rendered with api: deviceplugin, none is needed`);
  }
}

function checkDra(ctx) {
  const {docs, pod, container: c, dpConfig, fail, expectEq, mountFor, hostPathOf, flag} = ctx;
  const argv = argvOf(c);
  expectEq('--api', flag(argv, '--api'), 'dra');
  const driver = flag(argv, '--driver-name');
  if (!driver || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(driver)) {
    fail(`--driver-name ${driver} is not a DNS subdomain`);
  }
  for (const f of ['--devinfo-dir', '--cdi']) if (argv.includes(f)) fail(`${f} passed with api: dra`);

  // The socket paths the driver registers are host paths: mounted where they are on the host.
  const kubelet = flag(argv, '--kubelet-dir') || '/var/lib/kubelet';
  for (const dir of [`${kubelet}/plugins/${driver}`, `${kubelet}/plugins_registry`]) {
    const m = mountFor(c, dir);
    if (!m || m.readOnly) fail(`${dir} is not mounted read-write`);
    else expectEq(`hostPath of ${dir}`, hostPathOf(m.name), dir);
  }
  if ((c.volumeMounts || []).some((m) => /\/device-plugins$/.test(m.mountPath))) {
    fail('device-plugins mounted with api: dra');
  }
  const env = (c.env || []).find((e) => e.name === 'NODE_NAME');
  expectEq('NODE_NAME env', env && env.valueFrom, {fieldRef: {fieldPath: 'spec.nodeName'}});

  // The node's rails are written only while the daemon hears LLDP (no --no-lldp): only then
  // `update` on nodes and the policy that narrows it.
  const lldp = !argv.includes('--no-lldp');
  checkRbac(docs, pod, driver, lldp, fail, expectEq);
  checkDeviceClasses(docs, driver, dpConfig, fail, expectEq);
  if (!ctx.noPolicy) checkAdmissionPolicy(docs, pod, driver, lldp, fail, expectEq);
  else for (const k of kPolicyKinds) if (ofKind(docs, k).length) fail(`${k} rendered though disabled`);
}

// The policy that binds the daemon's ResourceSlice writes to its node (templates/
// admissionpolicy.yaml): what it matches, whom, and that each rule names the token's node claim
// and this driver. (The CEL itself runs only under a real API server: tests/cluster/dra.sh.)
// The policy that narrows the daemon's Node updates to its own node's rail labels and annotation
// (templates/admissionpolicy.yaml, node_rails.h).
function checkNodeRailsPolicy(p, fail, expectEq) {
  if (!p) return fail('no ValidatingAdmissionPolicy for the daemon\'s Node updates');
  expectEq('rails policy failurePolicy', p.spec.failurePolicy, 'Fail');
  expectEq('rails policy resourceRules', p.spec.matchConstraints.resourceRules, [{
    apiGroups: [''], apiVersions: ['*'], operations: ['UPDATE'], resources: ['nodes'],
  }]);
  const cel = JSON.stringify(p.spec.validations);
  for (const want of ["object.metadata.name == variables.tokenNode", "startsWith('rail.rdmanet.io/')",
                      "k == 'rdmanet.io/rails'", 'object.spec == oldObject.spec']) {
    if (!cel.includes(want)) fail(`the rails policy does not check ${want}`);
  }
}

function checkAdmissionPolicy(docs, pod, driver, lldp, fail, expectEq) {
  const policies = ofKind(docs, 'ValidatingAdmissionPolicy');
  const bindings = ofKind(docs, 'ValidatingAdmissionPolicyBinding');
  const want = lldp ? 2 : 1;
  if (policies.length !== want || bindings.length !== want) {
    fail(`expected ${want} ValidatingAdmissionPolicies and bindings, got ${policies.length} and ${bindings.length}`);
    return;
  }
  for (const b of bindings) {
    if (!policies.some((p) => p.metadata.name === b.spec.policyName)) fail(`binding ${b.metadata.name} names no policy`);
    expectEq(`${b.metadata.name} validationActions`, b.spec.validationActions, ['Deny']);
  }
  const forNodes = (p) => p.spec.matchConstraints.resourceRules[0].resources[0] === 'nodes';
  if (lldp) checkNodeRailsPolicy(policies.find(forNodes), fail, expectEq);
  const p = policies.find((x) => !forNodes(x));
  const ds = ofKind(docs, 'DaemonSet')[0];
  expectEq('policy apiVersion', p.apiVersion, 'admissionregistration.k8s.io/v1');
  expectEq('policy failurePolicy', p.spec.failurePolicy, 'Fail');
  expectEq('policy resourceRules', p.spec.matchConstraints.resourceRules, [{
    apiGroups: ['resource.k8s.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: ['resourceslices'],
  }]);
  const user = `system:serviceaccount:${ds.metadata.namespace}:${pod.serviceAccountName}`;
  expectEq('policy matchConditions', (p.spec.matchConditions || []).map((m) => m.expression),
           [`request.userInfo.username == "${user}"`]);
  const cel = JSON.stringify([p.spec.variables, p.spec.validations]);
  if (!cel.includes("request.userInfo.extra[?'authentication.kubernetes.io/node-name'][0]")) {
    fail('the policy does not read the node from the token (authentication.kubernetes.io/node-name)');
  }
  for (const op of ['CREATE', 'DELETE']) {
    if (!cel.includes(`request.operation == '${op}'`)) fail(`the policy does not tell ${op} apart`);
  }
  if (!cel.includes('oldObject')) fail('a delete or update is not checked on the stored slice');
  if (!cel.includes('spec.?nodeName')) fail('the policy does not compare spec.nodeName');
  const pinned = JSON.stringify(`s.spec.driver == "${driver}"`).slice(1, -1);  // as in `cel`
  if (!cel.includes(pinned)) fail(`the policy does not pin the driver to ${driver}`);
  for (const v of p.spec.validations || []) {
    if (!v.message && !v.messageExpression) fail(`validation ${v.expression} has no message`);
  }
  const b = bindings.find((x) => x.spec.policyName === p.metadata.name);
  if (!b) return fail(`no binding of policy ${p.metadata.name}`);
  expectEq('binding validationActions', b.spec.validationActions, ['Deny']);
}

function checkRbac(docs, pod, driver, lldp, fail, expectEq) {
  for (const k of ['Role', 'RoleBinding']) if (ofKind(docs, k).length) fail(`a ${k} is rendered`);
  const roles = ofKind(docs, 'ClusterRole');
  const bindings = ofKind(docs, 'ClusterRoleBinding');
  if (roles.length !== 1 || bindings.length !== 1) {
    fail(`expected one ClusterRole and one ClusterRoleBinding, got ${roles.length} and ${bindings.length}`);
    return;
  }
  const got = [];
  let driverRules = 0;
  for (const r of roles[0].rules || []) {
    if ((r.resources || []).includes('resourceclaims/driver')) {
      driverRules++;
      expectEq('the resourceclaims/driver rule', r, {apiGroups: ['resource.k8s.io'],
        resources: ['resourceclaims/driver'], resourceNames: [driver], verbs: ['associated-node:update']});
      continue;
    }
    if (r.resourceNames || r.nonResourceURLs) fail(`ClusterRole rule ${JSON.stringify(r)} is not plain`);
    for (const g of r.apiGroups || []) {
      for (const res of r.resources || []) for (const v of r.verbs || []) got.push(`${g} ${res} ${v}`);
    }
  }
  expectEq('ClusterRole rules (group resource verb)', got.sort(),
           (lldp ? [...kDraRules, ' nodes update'] : kDraRules).sort());
  expectEq('resourceclaims/driver rules', driverRules, 1);
  const b = bindings[0];
  const ds = ofKind(docs, 'DaemonSet')[0];
  expectEq('ClusterRoleBinding roleRef', b.roleRef,
           {apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roles[0].metadata.name});
  expectEq('ClusterRoleBinding subjects', b.subjects, [
    {kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: ds.metadata.namespace},
  ]);
}

function checkDeviceClasses(docs, driver, dpConfig, fail, expectEq) {
  if (!dpConfig) return;
  const classes = ofKind(docs, 'DeviceClass');
  const pools = dpConfig.resourceList || [];
  if (classes.length !== pools.length) fail(`${classes.length} DeviceClasses for ${pools.length} pools`);
  for (const p of pools) {
    // The driver publishes each device's pool as rdmanet.io/pool = <prefix>/<resourceName>
    // (deviceplugin/dra/apiserver/slice_devices.cc), the name a pod's extended resource request
    // uses.
    const resource = `${dpConfig.resourcePrefix}/${p.resourceName}`;
    const dc = classes.find((d) => d.spec.extendedResourceName === resource);
    if (!dc) {
      fail(`no DeviceClass with extendedResourceName ${resource}`);
      continue;
    }
    const id = `DeviceClass ${dc.metadata.name}`;
    if (!dc.metadata.name.endsWith(`.${driver}`)) fail(`${id} is not named <pool>.${driver}`);
    expectEq(`${id} selectors`, dc.spec.selectors, [{
      cel: {expression: `device.driver == "${driver}" && device.attributes["rdmanet.io"].pool == "${resource}"`},
    }]);
  }
}

module.exports = {checkDra, checkNoDra};
