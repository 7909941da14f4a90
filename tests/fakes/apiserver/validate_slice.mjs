// ResourceSlice validation as the real API server does it for resource.k8s.io/v1.
//
// Two layers:
//  1. the OpenAPI schema of kubernetes-models 5.1.0 (types and required fields), installed by
//     hack/install-helm.sh under the alias kubernetes-models-5;
//  2. the API validation rules that schema does not carry (it has no maxItems, maxLength or
//     patterns for this group), written from the upstream sources:
//       - k8s.io/api/resource/v1/types.go: ResourceSliceMaxDevices = 128,
//         ResourceSliceMaxDevicesWithAdvancedFeatures = 64 (any device with taints or
//         consumesCounters), ResourceSliceMaxAttributesAndCapacitiesPerDevice = 32,
//         DeviceAttributeMaxValueLength = 64, DeviceMaxDomainLength = 63,
//         DeviceMaxIDLength = 32, DeviceTaintsMaxLength = 16, DriverNameMaxLength = 63,
//         PoolNameMaxLength = 253; "exactly one of NodeName, NodeSelector, AllNodes,
//         PerDeviceNodeSelection"; driver, nodeName and pool.name are immutable;
//       - kubernetes/pkg/apis/resource/validation/validation.go (validateResourceSliceSpec,
//         validateDevice, validateDeviceAttribute, validateQualifiedName, validateDeviceTaint):
//         device names are DNS labels, unique in the slice; attribute values set exactly one
//         field; versions are semver 2.0.0; taint keys are label names, values label values,
//         effects None/NoSchedule/NoExecute;
//       - KEP-4815 (partitionable devices), from the same two files at v1.37: only one of
//         devices and sharedCounters in a slice; at most 8 counter sets
//         (ResourceSliceMaxCounterSets), names DNS labels and unique; at most 32 counters per
//         set or consumption, names DNS labels; at most 2 consumptions per device
//         (ResourceSliceMaxDeviceCounterConsumptionsPerDevice), each of a distinct set;
//         capacity names are qualified names, like attribute names;
//       - KEP-5075: a capacity's requestPolicy only on a device with allowMultipleAllocations.
// Each failure is a cause {field, message} like metav1.StatusCause.
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const toolsDir = process.env.RDMANET_TOOLS_DIR || '/opt/rdmanet-tools';
const modelsDir = path.join(toolsDir, 'node/node_modules/kubernetes-models-5');

let schema = null;
export async function loadSchema() {
  const url = pathToFileURL(path.join(modelsDir, 'resource.k8s.io/v1/ResourceSlice.js')).href;
  const mod = await import(url);
  schema = mod.ResourceSlice;
  return modelsDir;
}

const kMaxDevices = 128;
const kMaxDevicesAdvanced = 64;
const kMaxAttributesAndCapacities = 32;
const kMaxValueLength = 64;
const kMaxDomainLength = 63;
const kMaxIdLength = 32;
const kMaxTaints = 16;
const kDriverMaxLength = 63;
const kPoolNameMaxLength = 253;
const kMaxCounterSets = 8;
const kMaxCounters = 32;
const kMaxConsumptions = 2;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const cIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
// semver.org 2.0.0, the regular expression it publishes.
const semver = new RegExp(
    '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)' +
    '(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?' +
    '(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$');
const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export function isDnsSubdomain(s) {
  return typeof s === 'string' && s.length > 0 && s.length <= 253 &&
      s.split('.').every((l) => dnsLabel.test(l));
}
export function isDnsLabel(s) {
  return typeof s === 'string' && s.length <= 63 && dnsLabel.test(s);
}

function qualifiedNameErrors(name) {
  const parts = name.split('/');
  if (parts.length > 2) return ['a qualified name must be <C identifier> or <domain>/<C identifier>'];
  const id = parts[parts.length - 1];
  const out = [];
  if (parts.length === 2) {
    if (!isDnsSubdomain(parts[0])) out.push('the domain must be a DNS subdomain');
    if (parts[0].length > kMaxDomainLength) {
      out.push(`the domain must be no more than ${kMaxDomainLength} characters`);
    }
  }
  if (!cIdentifier.test(id)) out.push('the name must be a C identifier');
  if (id.length > kMaxIdLength) out.push(`the name must be no more than ${kMaxIdLength} characters`);
  return out;
}

function labelKeyErrors(key) {
  const parts = key.split('/');
  const name = parts[parts.length - 1];
  if (parts.length > 2) return ['a label name has at most one "/"'];
  if (parts.length === 2 && !isDnsSubdomain(parts[0])) return ['the prefix must be a DNS subdomain'];
  if (name.length === 0 || name.length > 63 || !labelName.test(name)) {
    return ['the name part must be 63 characters or less, alphanumeric, "-", "_" or "."'];
  }
  return [];
}

function validateAttribute(a, where, causes) {
  const set = ['int', 'bool', 'string', 'version'].filter((k) => a[k] !== undefined && a[k] !== null);
  if (set.length !== 1) {
    causes.push({field: where, message: 'exactly one value must be specified'});
    return;
  }
  const k = set[0];
  if ((k === 'string' || k === 'version') && a[k].length > kMaxValueLength) {
    causes.push({field: `${where}.${k}`,
      message: `Too long: may not be more than ${kMaxValueLength} bytes`});
  }
  if (k === 'version' && !semver.test(a[k])) {
    causes.push({field: `${where}.version`, message: 'must be a string compatible with semver.org spec 2.0.0'});
  }
}

// A counters map ({name: {value}}): 1 to 32 entries named by DNS labels.
function countersErrors(counters, where, causes) {
  const names = Object.keys(counters || {});
  if (names.length === 0) causes.push({field: where, message: 'Required value'});
  if (names.length > kMaxCounters) {
    causes.push({field: where, message: `Too many: ${names.length}: must have at most ${kMaxCounters} items`});
  }
  for (const n of names) {
    if (!isDnsLabel(n)) causes.push({field: `${where}[${n}]`, message: 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\''});
  }
}

function validateDevice(d, where, causes) {
  if (!isDnsLabel(d.name)) {
    causes.push({field: `${where}.name`, message: 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\''});
  }
  const attrs = d.attributes || {};
  const caps = d.capacity || {};
  const n = Object.keys(attrs).length + Object.keys(caps).length;
  if (n > kMaxAttributesAndCapacities) {
    causes.push({field: where,
      message: `Too many: ${n}: must have at most ${kMaxAttributesAndCapacities} attributes and capacities combined`});
  }
  for (const [name, a] of Object.entries(attrs)) {
    for (const m of qualifiedNameErrors(name)) causes.push({field: `${where}.attributes[${name}]`, message: m});
    validateAttribute(a || {}, `${where}.attributes[${name}]`, causes);
  }
  for (const [name, c] of Object.entries(caps)) {
    for (const m of qualifiedNameErrors(name)) causes.push({field: `${where}.capacity[${name}]`, message: m});
    if (c && c.requestPolicy && d.allowMultipleAllocations !== true) {
      causes.push({field: `${where}.capacity[${name}].requestPolicy`,
        message: 'Forbidden: allowMultipleAllocations must be true'});
    }
  }
  const consumes = d.consumesCounters || [];
  if (consumes.length > kMaxConsumptions) {
    causes.push({field: `${where}.consumesCounters`, message: `Too many: ${consumes.length}: must have at most ${kMaxConsumptions} items`});
  }
  const consumed = new Set();
  consumes.forEach((c, i) => {
    const cw = `${where}.consumesCounters[${i}]`;
    if (!isDnsLabel(c.counterSet)) causes.push({field: `${cw}.counterSet`, message: 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\''});
    if (consumed.has(c.counterSet)) causes.push({field: `${cw}.counterSet`, message: `Duplicate value: "${c.counterSet}"`});
    consumed.add(c.counterSet);
    countersErrors(c.counters, `${cw}.counters`, causes);
  });
  const taints = d.taints || [];
  if (taints.length > kMaxTaints) {
    causes.push({field: `${where}.taints`, message: `Too many: ${taints.length}: must have at most ${kMaxTaints} items`});
  }
  taints.forEach((t, i) => {
    const tw = `${where}.taints[${i}]`;
    for (const m of labelKeyErrors(t.key || '')) causes.push({field: `${tw}.key`, message: m});
    if (t.value !== undefined && (t.value.length > 63 || (t.value !== '' && !labelName.test(t.value)))) {
      causes.push({field: `${tw}.value`, message: 'must be a valid label value'});
    }
    if (!['None', 'NoSchedule', 'NoExecute'].includes(t.effect)) {
      causes.push({field: `${tw}.effect`, message: `Unsupported value: "${t.effect}"`});
    }
  });
}

// The causes for a ResourceSlice about to be stored ([] when valid). `old` is the stored object
// on update (immutable fields).
export function validateSlice(obj, old) {
  const causes = [];
  try {
    new schema(obj).validate();
  } catch (e) {
    causes.push({field: '', message: `schema: ${e.message}`});
    return causes;
  }
  const meta = obj.metadata || {};
  if (!meta.name && !meta.generateName) {
    causes.push({field: 'metadata.name', message: 'name or generateName is required'});
  } else if (meta.name && !isDnsSubdomain(meta.name)) {
    causes.push({field: 'metadata.name', message: 'must be a DNS subdomain'});
  }
  for (const [i, o] of (meta.ownerReferences || []).entries()) {
    for (const k of ['apiVersion', 'kind', 'name', 'uid']) {
      if (!o[k]) causes.push({field: `metadata.ownerReferences[${i}].${k}`, message: 'Required value'});
    }
  }
  const spec = obj.spec || {};
  if (!isDnsSubdomain(spec.driver) || spec.driver.length > kDriverMaxLength) {
    causes.push({field: 'spec.driver', message: `must be a DNS subdomain of at most ${kDriverMaxLength} characters`});
  }
  const pool = spec.pool || {};
  if (!pool.name || pool.name.length > kPoolNameMaxLength ||
      !pool.name.split('/').every(isDnsSubdomain)) {
    causes.push({field: 'spec.pool.name', message: 'must be one or more DNS subdomains separated by "/"'});
  }
  if (!(pool.generation >= 0)) causes.push({field: 'spec.pool.generation', message: 'must be greater than or equal to 0'});
  if (!(pool.resourceSliceCount > 0)) causes.push({field: 'spec.pool.resourceSliceCount', message: 'must be greater than zero'});
  const placement = [spec.nodeName, spec.nodeSelector, spec.allNodes || undefined,
    spec.perDeviceNodeSelection || undefined].filter((x) => x !== undefined && x !== null && x !== '');
  if (placement.length !== 1) {
    causes.push({field: 'spec', message: 'exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required'});
  }
  if (spec.nodeName && !isDnsSubdomain(spec.nodeName)) {
    causes.push({field: 'spec.nodeName', message: 'must be a DNS subdomain'});
  }
  const sets = spec.sharedCounters || [];
  if (sets.length > 0 && (spec.devices || []).length > 0) {
    causes.push({field: 'spec', message: 'only one of `devices`, `sharedCounters` may be specified'});
  }
  if (sets.length > kMaxCounterSets) {
    causes.push({field: 'spec.sharedCounters', message: `Too many: ${sets.length}: must have at most ${kMaxCounterSets} items`});
  }
  const setNames = new Set();
  sets.forEach((c, i) => {
    const cw = `spec.sharedCounters[${i}]`;
    if (!isDnsLabel(c.name)) causes.push({field: `${cw}.name`, message: 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\''});
    if (setNames.has(c.name)) causes.push({field: `${cw}.name`, message: `Duplicate value: "${c.name}"`});
    setNames.add(c.name);
    countersErrors(c.counters, `${cw}.counters`, causes);
  });
  const devices = spec.devices || [];
  const advanced = devices.some((d) => (d.taints || []).length > 0 || (d.consumesCounters || []).length > 0);
  const max = advanced ? kMaxDevicesAdvanced : kMaxDevices;
  if (devices.length > max) {
    causes.push({field: 'spec.devices', message: `Too many: ${devices.length}: must have at most ${max} items`});
  }
  const seen = new Set();
  devices.forEach((d, i) => {
    if (seen.has(d.name)) causes.push({field: `spec.devices[${i}].name`, message: `Duplicate value: "${d.name}"`});
    seen.add(d.name);
    validateDevice(d, `spec.devices[${i}]`, causes);
  });
  if (old) {
    for (const [f, a, b] of [['spec.driver', spec.driver, old.spec.driver],
      ['spec.nodeName', spec.nodeName, old.spec.nodeName],
      ['spec.pool.name', pool.name, old.spec.pool.name]]) {
      if (a !== b) causes.push({field: f, message: 'field is immutable'});
    }
  }
  return causes;
}
