// Offline checks of Kubernetes objects, shared by the manifest tests.
//
// - Built-in kinds are validated with kubernetes-models (types, required fields, formats).
// - kubernetes-models does not catch misspelled fields, so every key of an object (outside
//   free-form maps such as labels) must also be a field name that some Kubernetes type has.
// - CRD kinds the chart renders (NetworkAttachmentDefinition, ServiceMonitor) have no schema in
//   kubernetes-models; their shape is checked here by hand.
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');

// Parses a multi-document YAML stream. Kubernetes reads YAML 1.1 (sigs.k8s.io/yaml), where
// `on`, `off`, `yes` and `no` are booleans, so parse it that way too.
function parseDocs(text, where) {
  const docs = [];
  for (const doc of YAML.parseAllDocuments(text, {version: '1.1'})) {
    if (doc.errors.length) throw new Error(`${where}: YAML error: ${doc.errors[0].message}`);
    const obj = doc.toJS();
    if (obj !== null && obj !== undefined) docs.push(obj);
  }
  return docs;
}

function modelsDir() {
  return path.dirname(require.resolve('kubernetes-models/package.json'));
}

// Every property name the Kubernetes types declare, read from kubernetes-models' compiled
// validators (each checked property appears as parentDataProperty:"name").
let knownFields = null;
function knownFieldNames() {
  if (knownFields) return knownFields;
  knownFields = new Set();
  const dirs = [
    path.join(modelsDir(), '_schemas'),
    path.join(path.dirname(require.resolve('@kubernetes-models/apimachinery/package.json')),
              '_schemas'),
  ];
  for (const dir of dirs) {
    for (const f of fs.readdirSync(dir)) {
      if (!f.endsWith('.js')) continue;
      const src = fs.readFileSync(path.join(dir, f), 'utf8');
      for (const m of src.matchAll(/parentDataProperty:"([^"]+)"/g)) knownFields.add(m[1]);
    }
  }
  if (knownFields.size < 500) throw new Error('could not read field names from kubernetes-models');
  return knownFields;
}

// Keys whose value is a map with user-chosen keys, not a typed object.
const kFreeFormMaps = new Set([
  'labels', 'annotations', 'data', 'stringData', 'binaryData', 'nodeSelector', 'matchLabels',
  'requests', 'limits', 'capacity', 'allocatable', 'hard', 'parameters',
]);

function unknownFields(obj, kind, where, out) {
  const known = knownFieldNames();
  const walk = (v, p) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${p}[${i}]`));
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      const kp = p ? `${p}.${k}` : k;
      if (!known.has(k)) out.push(`${where}: ${kind} has unknown field ${kp}`);
      if (kFreeFormMaps.has(k)) continue;
      // A Service's spec.selector is a plain label map (workloads' is a LabelSelector).
      if (kind === 'Service' && kp === 'spec.selector') continue;
      walk(x, kp);
    }
  };
  walk(obj, '');
}

// The kubernetes-models class for apiVersion/kind, or null for kinds it does not know (CRDs).
function modelFor(apiVersion, kind) {
  // Laid out as <group>/<version>/<Kind>.js, with the core group as plain v1/.
  const file = path.join(modelsDir(), apiVersion, `${kind}.js`);
  if (!fs.existsSync(file)) return null;
  const mod = require(file);
  return mod[kind] || null;
}

// Validates one object; returns a list of error strings (empty when valid).
function checkObject(obj, where) {
  const errors = [];
  const kind = obj && obj.kind;
  const name = obj && obj.metadata && obj.metadata.name;
  const id = `${where}: ${kind || '?'}/${name || '?'}`;
  if (!obj || typeof obj.apiVersion !== 'string' || typeof kind !== 'string') {
    return [`${where}: object without apiVersion/kind`];
  }
  if (typeof name !== 'string' || !name) errors.push(`${id}: metadata.name missing`);
  const Model = modelFor(obj.apiVersion, kind);
  if (Model) {
    try {
      new Model(obj).validate();
    } catch (e) {
      const details = (e.errors || []).map((x) => `${x.instancePath} ${x.message}`);
      errors.push(`${id}: ${details.length ? details.join('; ') : e.message}`);
    }
    unknownFields(obj, kind, id, errors);
    return errors;
  }
  const crd = kCrdChecks[`${obj.apiVersion}/${kind}`];
  if (!crd) return [`${id}: ${obj.apiVersion} ${kind} is neither built in nor a known CRD`];
  return errors.concat(crd(obj, id));
}

const kCrdChecks = {
  'k8s.cni.cncf.io/v1/NetworkAttachmentDefinition': (obj, id) => {
    const errors = [];
    const extra = Object.keys(obj).filter((k) => !['apiVersion', 'kind', 'metadata', 'spec'].includes(k));
    if (extra.length) errors.push(`${id}: unknown top-level fields ${extra}`);
    if (!obj.spec || typeof obj.spec.config !== 'string') {
      errors.push(`${id}: spec.config must be a string holding the netconf JSON`);
    }
    return errors;
  },
  'monitoring.coreos.com/v1/ServiceMonitor': (obj, id) => {
    const errors = [];
    const spec = obj.spec || {};
    if (!spec.selector || typeof spec.selector.matchLabels !== 'object') {
      errors.push(`${id}: spec.selector.matchLabels missing`);
    }
    if (!Array.isArray(spec.endpoints) || !spec.endpoints.length) {
      errors.push(`${id}: spec.endpoints must be a non-empty list`);
    }
    for (const [i, ep] of (spec.endpoints || []).entries()) {
      if (typeof ep.port !== 'string') errors.push(`${id}: endpoints[${i}].port must name a port`);
      for (const k of ['interval', 'scrapeTimeout']) {
        if (ep[k] !== undefined && !/^[0-9]+(ms|s|m|h)$/.test(ep[k])) {
          errors.push(`${id}: endpoints[${i}].${k} ${ep[k]} is not a duration`);
        }
      }
    }
    return errors;
  },
};

module.exports = {parseDocs, checkObject, knownFieldNames};
