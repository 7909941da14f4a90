#!/usr/bin/env node
// Checks one `helm template` render of the rdmanet chart:
//   node check_chart.js RENDER.yaml [--netconf-out DIR] [--min-networks N] [--install-cni false]
//                       [--api deviceplugin|dra] [--admission-policy false]
// 1. every object validates offline (k8s_check.js; with --api dra against kubernetes-models
//    5.1.0 too, which has resource.k8s.io/v1), every netconf too (netconf_check.js);
// 2. the DaemonSet is what issue 6 asks for, and its parts refer to each other consistently
//    (flags vs mounts, probes vs ports, checksum vs config, Service vs pods); with --api dra,
//    the DRA wiring, RBAC and DeviceClasses of issue 12 (check_dra.js);
// 3. with --netconf-out, each NAD's netconf is written to DIR/<name>.json, the device plugin
//    config to DIR/device-plugin-config.json and its container args (a JSON array) to
//    DIR/device-plugin-args.json, for render_feeds_binaries.sh.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const {parseDocs, checkObject, kModelsDefault, kModelsDra} = require('./k8s_check.js');
const {checkDra, checkNoDra} = require('./check_dra.js');
const {checkNetconf, kResourceAnnotation} = require('./netconf_check.js');

const args = process.argv.slice(2);
// checkDevicePlugin's finding, for the NADs' check.
let daemonDraDevicesDir;
const file = args[0];
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const netconfOut = opt('--netconf-out');
const minNetworks = Number(opt('--min-networks') || 0);
const expectInstall = opt('--install-cni') !== 'false';
const api = opt('--api') || 'deviceplugin';
if (!['deviceplugin', 'dra'].includes(api)) throw new Error(`--api ${api}: deviceplugin or dra`);
const dra = api === 'dra';
const noPolicy = opt('--admission-policy') === 'false';

const errors = [];
const fail = (msg) => errors.push(msg);
const docs = parseDocs(fs.readFileSync(file, 'utf8'), path.basename(file));
const models = dra ? kModelsDra : kModelsDefault;
for (const d of docs) errors.push(...checkObject(d, path.basename(file), models));

const ofKind = (k) => docs.filter((d) => d.kind === k);
const one = (k) => {
  const l = ofKind(k);
  if (l.length !== 1) fail(`expected one ${k}, got ${l.length}`);
  return l[0];
};

// --- The device plugin config (the one ConfigMap with config.json; the dashboard's is another).
const configMaps = ofKind('ConfigMap').filter((c) => c.data && 'config.json' in c.data);
if (configMaps.length !== 1) fail(`expected one ConfigMap with config.json, got ${configMaps.length}`);
const cm = configMaps[0];
let dpConfig = null;
let dpArgs = null;  // the device plugin container's args, for render_feeds_binaries.sh
const configText = cm && cm.data && cm.data['config.json'];
try {
  dpConfig = JSON.parse(configText);
} catch (e) {
  fail(`ConfigMap config.json is not JSON: ${e.message}`);
}
const poolNames = new Set();
if (dpConfig) {
  if (typeof dpConfig.resourcePrefix !== 'string') fail('config.json lacks resourcePrefix');
  if (!Array.isArray(dpConfig.resourceList) || !dpConfig.resourceList.length) {
    fail('config.json has no resourceList');
  }
  for (const p of dpConfig.resourceList || []) {
    if (!p.resourceName || !Array.isArray(p.selectors)) fail(`pool without resourceName/selectors`);
    poolNames.add(p.resourceName);
  }
}

// --- The DaemonSet.
const ds = one('DaemonSet');
const pod = ds ? ds.spec.template.spec : {};
const expectEq = (what, got, want) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    fail(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
};
if (ds) {
  expectEq('hostNetwork', pod.hostNetwork, true);
  expectEq('priorityClassName', pod.priorityClassName, 'system-node-critical');
  // Only the DRA driver calls the API server.
  expectEq('automountServiceAccountToken', pod.automountServiceAccountToken, dra);
  expectEq('updateStrategy.type', ds.spec.updateStrategy.type, 'RollingUpdate');
  expectEq('rollingUpdate.maxSurge (host port)', ds.spec.updateStrategy.rollingUpdate.maxSurge, 0);
  if (!pod.tolerations || !pod.tolerations.length) fail('DaemonSet has no tolerations');
  if (!pod.nodeSelector || !Object.keys(pod.nodeSelector).length) fail('no nodeSelector');

  const sa = ofKind('ServiceAccount');
  if (sa.length && sa[0].metadata.name !== pod.serviceAccountName) {
    fail(`serviceAccountName ${pod.serviceAccountName} is not the rendered ServiceAccount`);
  }

  // Least privilege: no container is privileged; capabilities are all dropped and none added,
  // except for the device plugin NET_RAW while it listens for LLDP (no --no-lldp): its
  // receive-only AF_PACKET socket; and SYS_ADMIN while it reads the pods' namespaces (it mounts
  // the runtime's netns dir, volume pod-netns).
  const all = [...(pod.initContainers || []), ...pod.containers];
  for (const c of all) {
    const sc = c.securityContext || {};
    const where = `container ${c.name}`;
    expectEq(`${where} privileged`, sc.privileged, false);
    expectEq(`${where} allowPrivilegeEscalation`, sc.allowPrivilegeEscalation, false);
    expectEq(`${where} readOnlyRootFilesystem`, sc.readOnlyRootFilesystem, true);
    expectEq(`${where} capabilities.drop`, (sc.capabilities || {}).drop, ['ALL']);
    const lldp = (pod.containers || []).includes(c) && (c.args || []).includes('--config') &&
        !(c.args || []).includes('--no-lldp');
    const podNetns = (pod.containers || []).includes(c) &&
        (c.volumeMounts || []).some((m) => m.name === 'pod-netns');
    const want = [...(lldp ? ['NET_RAW'] : []), ...(podNetns ? ['SYS_ADMIN'] : [])];
    expectEq(`${where} capabilities.add`, (sc.capabilities || {}).add, want.length ? want : undefined);
    for (const r of ['requests', 'limits']) {
      for (const k of ['cpu', 'memory']) {
        if (!(c.resources && c.resources[r] && c.resources[r][k])) fail(`${where} lacks ${r}.${k}`);
      }
    }
    for (const m of c.volumeMounts || []) {
      if (!pod.volumes.some((v) => v.name === m.name)) fail(`${where} mounts unknown volume ${m.name}`);
    }
  }
  for (const v of pod.volumes) {
    if (!all.some((c) => (c.volumeMounts || []).some((m) => m.name === v.name))) {
      fail(`volume ${v.name} is mounted by no container`);
    }
  }

  const dp = pod.containers.find((c) => c.name === 'device-plugin');
  if (!dp) fail('no device-plugin container');
  else {
    checkDevicePlugin(dp);
    dpArgs = dp.args || [];
    const ctx = {docs, pod, container: dp, dpConfig, fail, expectEq, mountFor, hostPathOf, flag,
      noPolicy};
    if (dra) checkDra(ctx);
    else checkNoDra(ctx);
  }
  checkInstallCni((pod.initContainers || []).find((c) => c.name === 'install-cni'));

  const sum = crypto.createHash('sha256').update((configText || '').replace(/\n$/, '')).digest('hex');
  expectEq('checksum/config annotation', ds.spec.template.metadata.annotations['checksum/config'], sum);
}

// Host dir mounted at `containerPath` (exactly or as a parent), or undefined.
function mountFor(c, containerPath) {
  return (c.volumeMounts || []).find((m) => m.mountPath === containerPath);
}
function hostPathOf(volName) {
  const v = pod.volumes.find((x) => x.name === volName);
  return v && v.hostPath ? v.hostPath.path : undefined;
}
function flag(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

function checkDevicePlugin(c) {
  const argv = [...(c.command || []), ...(c.args || [])];
  const cfg = flag(argv, '--config');
  const cfgMount = (c.volumeMounts || []).find((m) => cfg && cfg.startsWith(m.mountPath + '/'));
  if (!cfgMount) fail(`--config ${cfg} is not inside a mounted volume`);
  else if (!pod.volumes.find((v) => v.name === cfgMount.name).configMap) fail('--config not from the ConfigMap');
  else if (cfgMount.subPath) fail('config mounted with subPath: hot reload would never see changes');
  // The kubelet dirs depend on the API: check_dra.js.
  const root = flag(argv, '--sysfs-root');
  const sys = mountFor(c, `${root === '/' ? '' : root}/sys`);
  if (!sys || !sys.readOnly || hostPathOf(sys.name) !== '/sys') fail(`--sysfs-root ${root}: no read-only hostPath /sys at ${root}/sys`);
  const written = dra ? ['--cdi-dir'] : ['--devinfo-dir', '--cdi-dir'];
  // api: dra: the pod device records the CNI reads (a NAD's draDevicesDir), where set.
  if (dra && flag(argv, '--dra-pod-devices-dir')) written.push('--dra-pod-devices-dir');
  for (const f of written) {
    const m = mountFor(c, flag(argv, f));
    if (!m || m.readOnly || hostPathOf(m.name) !== flag(argv, f)) {
      fail(`${f} ${flag(argv, f)} is not a writable hostPath mount of the same host path`);
    }
  }
  daemonDraDevicesDir = dra ? flag(argv, '--dra-pod-devices-dir') : undefined;
  const cniState = flag(argv, '--cni-state-dir');
  const stateMount = mountFor(c, cniState);
  if (!stateMount || hostPathOf(stateMount.name) !== cniState) {
    fail(`--cni-state-dir ${cniState} is not the host's CNI state dir mounted at the same path`);
  }
  if (!(c.volumeMounts || []).some((m) => /\/cni\//.test(m.mountPath) && hostPathOf(m.name))) {
    fail('the CNI state dir is not mounted');
  }
  const port = (c.ports || []).find((p) => p.name === 'metrics');
  if (!port) fail('no metrics port');
  const addr = flag(argv, '--metrics-addr') || '';
  if (addr.startsWith('$(NODE_IP):')) {
    // Bound to the node's InternalIP: kubelet expands $(NODE_IP) from the pod's env.
    const ip = (c.env || []).find((e) => e.name === 'NODE_IP');
    const ref = ip && ip.valueFrom && ip.valueFrom.fieldRef;
    if (!ref || ref.fieldPath !== 'status.hostIP') fail('--metrics-addr $(NODE_IP) without NODE_IP from status.hostIP');
  }
  if (port && addr.replace(/^\$\(NODE_IP\)/, '') !== `:${port.containerPort}`) {
    fail(`--metrics-addr ${addr} != port ${port.containerPort}`);
  }
  for (const [probe, p] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz']]) {
    const h = c[probe] && c[probe].httpGet;
    if (!h || h.path !== p || h.port !== 'metrics') fail(`${probe} is not httpGet ${p} on the metrics port`);
  }
  for (const f of ['--log-level', '--doctor-interval']) if (!flag(argv, f)) fail(`device plugin lacks ${f}`);
}

function checkInstallCni(c) {
  if (!c) {
    if (expectInstall) fail('no install-cni init container');
    return;
  }
  if (!expectInstall) fail('install-cni rendered with cni.install=false');
  const argv = [...(c.command || []), ...(c.args || [])];
  const dir = flag(argv, '--install-cni');
  const m = dir && mountFor(c, dir);
  if (!m || m.readOnly || !hostPathOf(m.name)) fail(`--install-cni ${dir} is not a writable hostPath mount`);
}

// --- Metrics Service and ServiceMonitor.
for (const svc of ofKind('Service')) {
  const labels = ds ? ds.spec.template.metadata.labels : {};
  for (const [k, v] of Object.entries(svc.spec.selector || {})) {
    if (labels[k] !== v) fail(`Service ${svc.metadata.name} selector ${k}=${v} misses the pods`);
  }
  const names = ds ? ds.spec.template.spec.containers.flatMap((c) => (c.ports || []).map((p) => p.name)) : [];
  for (const p of svc.spec.ports) {
    if (!names.includes(p.targetPort)) fail(`Service targetPort ${p.targetPort} is no container port`);
  }
}
for (const sm of ofKind('ServiceMonitor')) {
  const svc = ofKind('Service').find((s) => Object.entries(sm.spec.selector.matchLabels)
      .every(([k, v]) => (s.metadata.labels || {})[k] === v));
  if (!svc) fail('ServiceMonitor selects no rendered Service');
  else {
    for (const ep of sm.spec.endpoints) {
      if (!svc.spec.ports.some((p) => p.name === ep.port)) fail(`ServiceMonitor port ${ep.port} not on the Service`);
    }
  }
}

// --- NetworkAttachmentDefinitions.
const nads = ofKind('NetworkAttachmentDefinition');
if (nads.length < minNetworks) fail(`expected at least ${minNetworks} networks, got ${nads.length}`);
if (netconfOut) {
  fs.mkdirSync(netconfOut, {recursive: true});
  if (configText) fs.writeFileSync(path.join(netconfOut, 'device-plugin-config.json'), configText);
  if (dpArgs) fs.writeFileSync(path.join(netconfOut, 'device-plugin-args.json'), JSON.stringify(dpArgs));
}
for (const nad of nads) {
  const id = `NetworkAttachmentDefinition/${nad.metadata.name}`;
  const {conf, errors: e} = checkNetconf(nad, id);
  errors.push(...e);
  const res = (nad.metadata.annotations || {})[kResourceAnnotation];
  if (res && dpConfig) {
    const [prefix, name] = res.split('/');
    if (prefix !== dpConfig.resourcePrefix || !poolNames.has(name)) {
      fail(`${id}: resource ${res} is not a pool of the device plugin config`);
    }
    // The pod info directory: the CNI fills what the pool's Allocate mounts, so both must agree.
    const pool = (dpConfig.resourceList || []).find((p) => p.resourceName === name) || {};
    if (conf && (conf.podInfoDir || pool.podInfoDir) && conf.podInfoDir !== pool.podInfoDir) {
      fail(`${id}: podInfoDir ${conf.podInfoDir} differs from pool ${name}'s ${pool.podInfoDir}`);
    }
    // The records the daemon writes for claims are where the CNI reads them.
    if (conf && conf.draDevicesDir !== daemonDraDevicesDir) {
      fail(`${id}: draDevicesDir ${conf.draDevicesDir} differs from the daemon's ${daemonDraDevicesDir}`);
    }
    if (conf && conf.draDevicesDir && conf.resourceName !== res) {
      fail(`${id}: resourceName ${conf.resourceName} is not its resource ${res}`);
    }
  }
  if (conf && netconfOut) {
    const record = {netconf: conf, resourceName: res || null};
    fs.writeFileSync(path.join(netconfOut, `${nad.metadata.name}.json`), JSON.stringify(record, null, 2));
  }
}

if (errors.length) {
  for (const e of errors) console.error(`FAIL: ${e}`);
  process.exit(1);
}
console.log(`${path.basename(file)}: ${docs.length} objects valid ` +
            `(${docs.map((d) => d.kind).join(', ')})`);
