// Offline checks of Kubernetes objects, shared by the manifest tests.
//
// - Built-in kinds are validated with kubernetes-models (types, required fields, formats):
//   4.5.1 (Kubernetes 1.31, the plain `kubernetes-models`) by default; a caller that passes
//   kModelsDra also gets 5.1.0 (alias kubernetes-models-5), whose resource.k8s.io/v1 (DRA) kinds
//   4.5.1 lacks. An object is checked against every listed version that has its kind.
// - kubernetes-models does not catch misspelled fields, so every key of an object (outside
//   free-form maps such as labels) must also be a field name that some Kubernetes type has.
// - CRD kinds the chart renders (NetworkAttachmentDefinition, ServiceMonitor, PrometheusRule)
//   have no schema in kubernetes-models; their shape is checked here by hand.
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

// Package names under the tools' node_modules.
const kModelsDefault = ['kubernetes-models'];
const kModelsDra = ['kubernetes-models', 'kubernetes-models-5'];

// 5.x is an ES module whose package.json exports no ./package.json: found through NODE_PATH.
function modelsDir(pkg) {
  for (const base of (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean)) {
    const dir = path.join(base, pkg);
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return path.dirname(require.resolve(`${pkg}/package.json`));
}

// Every property name the Kubernetes types of one models package declare, read from its compiled
// validators (each checked property appears as parentDataProperty:"name"), with those of the
// apimachinery package it uses (its own nested copy first).
const knownFields = new Map();
function knownFieldNames(pkg = 'kubernetes-models') {
  if (knownFields.has(pkg)) return knownFields.get(pkg);
  const names = new Set();
  const dir = modelsDir(pkg);
  const nested = path.join(dir, 'node_modules/@kubernetes-models/apimachinery');
  const machinery = fs.existsSync(nested) ? nested
    : path.dirname(require.resolve('@kubernetes-models/apimachinery/package.json'));
  for (const d of [path.join(dir, '_schemas'), path.join(machinery, '_schemas')]) {
    for (const f of fs.readdirSync(d)) {
      if (!f.endsWith('.js')) continue;
      const src = fs.readFileSync(path.join(d, f), 'utf8');
      for (const m of src.matchAll(/parentDataProperty:"([^"]+)"/g)) names.add(m[1]);
    }
  }
  if (names.size < 500) throw new Error(`could not read field names from ${pkg}`);
  knownFields.set(pkg, names);
  return names;
}

// Keys whose value is a map with user-chosen keys, not a typed object.
const kFreeFormMaps = new Set([
  'labels', 'annotations', 'data', 'stringData', 'binaryData', 'nodeSelector', 'matchLabels',
  'requests', 'limits', 'capacity', 'allocatable', 'hard', 'parameters',
]);

function unknownFields(obj, kind, where, out, pkg) {
  const known = knownFieldNames(pkg);
  const walk = (v, p) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${p}[${i}]`));
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      const kp = p ? `${p}.${k}` : k;
      if (!known.has(k)) out.push(`${where}: ${kind} has unknown field ${kp}`);
      // A list under such a name is typed (a DRA claim's devices.requests), not a map.
      if (kFreeFormMaps.has(k) && !Array.isArray(x)) continue;
      // A Service's spec.selector is a plain label map (workloads' is a LabelSelector).
      if (kind === 'Service' && kp === 'spec.selector') continue;
      walk(x, kp);
    }
  };
  walk(obj, '');
}

// The kubernetes-models class for apiVersion/kind, or null for kinds it does not know (CRDs).
function modelFor(apiVersion, kind, pkg = 'kubernetes-models') {
  // Laid out as <group>/<version>/<Kind>.js, with the core group as plain v1/.
  const file = path.join(modelsDir(pkg), apiVersion, `${kind}.js`);
  if (!fs.existsSync(file)) return null;
  const mod = require(file);
  return mod[kind] || null;
}

// Validates one object against each models package in `models` that has its kind (a CRD's shape
// is checked by hand); returns a list of error strings (empty when valid).
function checkObject(obj, where, models = kModelsDefault) {
  const errors = [];
  const kind = obj && obj.kind;
  const name = obj && obj.metadata && obj.metadata.name;
  const id = `${where}: ${kind || '?'}/${name || '?'}`;
  if (!obj || typeof obj.apiVersion !== 'string' || typeof kind !== 'string') {
    return [`${where}: object without apiVersion/kind`];
  }
  if (typeof name !== 'string' || !name) errors.push(`${id}: metadata.name missing`);
  let known = false;
  for (const pkg of models) {
    const Model = modelFor(obj.apiVersion, kind, pkg);
    if (!Model) continue;
    known = true;
    const tag = models.length > 1 ? `${id} (${pkg})` : id;
    try {
      new Model(obj).validate();
    } catch (e) {
      const details = (e.errors || []).map((x) => `${x.instancePath} ${x.message}`);
      errors.push(`${tag}: ${details.length ? details.join('; ') : e.message}`);
    }
    unknownFields(obj, kind, tag, errors, pkg);
  }
  if (known) return errors;
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
  'monitoring.coreos.com/v1/PrometheusRule': (obj, id) => {
    const errors = [];
    const groups = (obj.spec || {}).groups;
    if (!Array.isArray(groups) || !groups.length) errors.push(`${id}: spec.groups must be a non-empty list`);
    for (const [i, g] of (groups || []).entries()) {
      if (typeof g.name !== 'string') errors.push(`${id}: groups[${i}].name missing`);
      if (!Array.isArray(g.rules) || !g.rules.length) errors.push(`${id}: groups[${i}].rules empty`);
      for (const [j, r] of (g.rules || []).entries()) {
        if (typeof r.expr !== 'string' || !(r.alert || r.record)) {
          errors.push(`${id}: groups[${i}].rules[${j}] needs expr and alert or record`);
        }
      }
    }
    return errors;
  },
};

module.exports = {parseDocs, checkObject, knownFieldNames, kModelsDefault, kModelsDra};
