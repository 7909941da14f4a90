#!/usr/bin/env node
// Checks manifests/examples against the chart's renders:
//   node check_examples.js --scripts-out DIR --renders R.yaml... --examples E.yaml...
// - every object validates offline (k8s_check.js), against kubernetes-models 4.5.1 and, for the
//   DRA examples' resource.k8s.io/v1 kinds and fields, 5.1.0;
// - every pod's k8s.v1.cni.cncf.io/networks names a network some per-mode values file renders,
//   and the pod requests that network's resource (rdma/vf, rdma/shared) and nvidia.com/gpu;
// - a pod with resourceClaims (DRA) gets both from a claim instead: a request of the DeviceClass
//   a render gives that resource (extendedResourceName), a gpu.nvidia.com request, a
//   matchAttribute resource.kubernetes.io/pcieRoot constraint over the two, and its container
//   names both requests (and asks for neither as an extended resource: that would be a second
//   device, KEP-5004);
// - scripts carried in ConfigMaps are written to DIR for a syntax check by the caller.
'use strict';

const fs = require('fs');
const path = require('path');
const {parseDocs, checkObject, kModelsDra} = require('./k8s_check.js');
const {kResourceAnnotation} = require('./netconf_check.js');

const lists = {};
let cur = null;
let scriptsOut = null;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--scripts-out') scriptsOut = argv[++i];
  else if (argv[i].startsWith('--')) lists[(cur = argv[i].slice(2))] = [];
  else lists[cur].push(argv[i]);
}

const errors = [];
const networks = new Map();  // "namespace/name" -> resourceName or null
const classes = new Map();   // DeviceClass name -> its extendedResourceName
for (const f of lists.renders || []) {
  for (const d of parseDocs(fs.readFileSync(f, 'utf8'), f)) {
    if (d.kind === 'DeviceClass') classes.set(d.metadata.name, d.spec.extendedResourceName);
    if (d.kind !== 'NetworkAttachmentDefinition') continue;
    const res = (d.metadata.annotations || {})[kResourceAnnotation] || null;
    networks.set(`${d.metadata.namespace}/${d.metadata.name}`, res);
  }
}
if (!networks.size) errors.push('the renders hold no NetworkAttachmentDefinition');
if (!classes.size) errors.push('the renders hold no DeviceClass (no api: dra values file)');
const kGpuClass = 'gpu.nvidia.com';
const kPcieRoot = 'resource.kubernetes.io/pcieRoot';

// Every example file parsed up front: a pod's claim template may live in another file.
const files = (lists.examples || []).map((f) => {
  const where = path.basename(f);
  return {where, docs: parseDocs(fs.readFileSync(f, 'utf8'), where)};
});
const templates = new Map();  // "namespace/name" -> ResourceClaimTemplate
for (const {docs} of files) {
  for (const d of docs) {
    if (d.kind === 'ResourceClaimTemplate') {
      templates.set(`${d.metadata.namespace || 'default'}/${d.metadata.name}`, d);
    }
  }
}
let draPods = 0;

// A DRA pod: the network's device and a GPU, from one claim, under one PCIe root.
function checkDraPod(id, ns, spec, res, key) {
  draPods++;
  const c = spec.containers[0];
  for (const r of ['requests', 'limits']) {
    const got = (c.resources || {})[r] || {};
    for (const k of [res, 'nvidia.com/gpu']) {
      if (k && got[k]) errors.push(`${id}: asks for ${k} in ${r} besides its claim: a second device`);
    }
  }
  let found = false;
  for (const pc of spec.resourceClaims) {
    const t = templates.get(`${ns}/${pc.resourceClaimTemplateName}`);
    if (!t) continue;
    const dev = t.spec.spec.devices;
    const reqs = dev.requests || [];
    const nic = reqs.find((q) => q.exactly && classes.get(q.exactly.deviceClassName) === res);
    const gpu = reqs.find((q) => q.exactly && q.exactly.deviceClassName === kGpuClass);
    if (!nic) continue;
    found = true;
    const cid = `${id}: claim ${pc.name}`;
    if (!gpu) errors.push(`${cid}: no ${kGpuClass} request`);
    const both = [nic.name, gpu && gpu.name];
    if (!(dev.constraints || []).some((k) => k.matchAttribute === kPcieRoot &&
                                            both.every((n) => (k.requests || []).includes(n)))) {
      errors.push(`${cid}: no ${kPcieRoot} constraint over requests ${both}`);
    }
    // What the container gets: kubelet gives it a device only for the requests it names.
    const named = ((c.resources || {}).claims || []).filter((x) => x.name === pc.name);
    for (const n of both) {
      if (!named.some((x) => !x.request || x.request === n)) {
        errors.push(`${cid}: container ${c.name} does not name request ${n}`);
      }
    }
  }
  if (!found) errors.push(`${id}: no claim with a request of the DeviceClass for ${res} (network ${key})`);
}

let pods = 0;
for (const {where, docs} of files) {
  if (!docs.length) errors.push(`${where}: no objects`);
  for (const d of docs) {
    errors.push(...checkObject(d, where, kModelsDra));
    if (d.kind === 'ConfigMap' && scriptsOut) {
      for (const [k, v] of Object.entries(d.data || {})) {
        fs.mkdirSync(scriptsOut, {recursive: true});
        fs.writeFileSync(path.join(scriptsOut, `${where}--${k}`), v);
      }
    }
    const tmpl = d.kind === 'Pod' ? d : d.spec && d.spec.template;
    if (!tmpl || !tmpl.spec || !tmpl.spec.containers) continue;
    pods++;
    const id = `${where}: ${d.kind}/${d.metadata.name}`;
    const ns = d.metadata.namespace || 'default';
    const ann = ((tmpl.metadata || {}).annotations || {})['k8s.v1.cni.cncf.io/networks'];
    if (!ann) {
      errors.push(`${id}: no k8s.v1.cni.cncf.io/networks annotation`);
      continue;
    }
    for (let ref of ann.split(',').map((s) => s.trim())) {
      ref = ref.split('@')[0];  // name@ifname
      const key = ref.includes('/') ? ref : `${ns}/${ref}`;
      if (!networks.has(key)) {
        errors.push(`${id}: network ${key} is rendered by no values file (have ${[...networks.keys()]})`);
        continue;
      }
      const res = networks.get(key);
      if (tmpl.spec.resourceClaims) {
        checkDraPod(id, ns, tmpl.spec, res, key);
        continue;
      }
      const c = tmpl.spec.containers[0];
      for (const r of ['requests', 'limits']) {
        const got = (c.resources || {})[r] || {};
        if (res && !got[res]) errors.push(`${id}: ${r} lacks ${res}, the resource of network ${key}`);
        if (!got['nvidia.com/gpu']) errors.push(`${id}: ${r} lacks nvidia.com/gpu`);
      }
    }
  }
}
if (!pods) errors.push('no pod templates in the examples');
if (!draPods) errors.push('no DRA pod (resourceClaims) in the examples');

if (errors.length) {
  for (const e of errors) console.error(`FAIL: ${e}`);
  process.exit(1);
}
console.log(`examples: ${pods} pod templates (${draPods} with DRA claims) valid against ` +
            `${networks.size} rendered networks and ${classes.size} DeviceClasses`);
