#!/usr/bin/env node
// Checks manifests/examples against the chart's renders:
//   node check_examples.js --scripts-out DIR --renders R.yaml... --examples E.yaml...
// - every object validates offline (k8s_check.js);
// - every pod's k8s.v1.cni.cncf.io/networks names a network some per-mode values file renders,
//   and the pod requests that network's resource (rdma/vf, rdma/shared) and nvidia.com/gpu;
// - scripts carried in ConfigMaps are written to DIR for a syntax check by the caller.
'use strict';

const fs = require('fs');
const path = require('path');
const {parseDocs, checkObject} = require('./k8s_check.js');
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
for (const f of lists.renders || []) {
  for (const d of parseDocs(fs.readFileSync(f, 'utf8'), f)) {
    if (d.kind !== 'NetworkAttachmentDefinition') continue;
    const res = (d.metadata.annotations || {})[kResourceAnnotation] || null;
    networks.set(`${d.metadata.namespace}/${d.metadata.name}`, res);
  }
}
if (!networks.size) errors.push('the renders hold no NetworkAttachmentDefinition');

let pods = 0;
for (const f of lists.examples || []) {
  const where = path.basename(f);
  const docs = parseDocs(fs.readFileSync(f, 'utf8'), where);
  if (!docs.length) errors.push(`${where}: no objects`);
  for (const d of docs) {
    errors.push(...checkObject(d, where));
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

if (errors.length) {
  for (const e of errors) console.error(`FAIL: ${e}`);
  process.exit(1);
}
console.log(`examples: ${pods} pod templates valid against ${networks.size} rendered networks`);
