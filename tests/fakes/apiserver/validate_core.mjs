// Pod and ConfigMap validation as the real API server does it for core v1 (what the pre-flight
// writes: its probe pods and its baseline ConfigMap).
//
// Two layers, as validate_slice.mjs:
//  1. the OpenAPI schema of kubernetes-models 5.1.0 for Pod and ConfigMap (types, required
//     fields: a container's name, a volume's name, ...);
//  2. the rules that schema lacks, from kubernetes v1.37.2 pkg/apis/core/validation and
//     apimachinery's ValidateLabels: label keys are qualified names and label values at most 63
//     characters of [A-Za-z0-9_.-] starting and ending with an alphanumeric (so a node name
//     longer than 63 cannot be a label value); container names are DNS labels, unique; a pod has
//     at least one container; restartPolicy Always/OnFailure/Never; ConfigMap data keys are
//     [-._a-zA-Z0-9]+ of at most 253.
// Each failure is a cause {field, message}, like metav1.StatusCause.
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const toolsDir = process.env.RDMANET_TOOLS_DIR || '/opt/rdmanet-tools';
const modelsDir = path.join(toolsDir, 'node/node_modules/kubernetes-models-5');

let models = null;
export async function loadCoreSchemas() {
  const load = async (file) => (await import(pathToFileURL(path.join(modelsDir, file)).href));
  models = {Pod: (await load('v1/Pod.js')).Pod, ConfigMap: (await load('v1/ConfigMap.js')).ConfigMap};
}

const kLabelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const kLabelName = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const kDnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const kConfigMapKey = /^[-._a-zA-Z0-9]+$/;

function schemaCauses(model, obj) {
  try {
    new model(obj).validate();
    return [];
  } catch (e) {
    return [{field: '', message: `schema: ${e.message}`}];
  }
}

function labelCauses(meta) {
  const causes = [];
  for (const [k, v] of Object.entries((meta && meta.labels) || {})) {
    if (!kLabelName.test(k)) causes.push({field: `metadata.labels`, message: `Invalid value: "${k}": name part must be a qualified name`});
    if (typeof v !== 'string' || v.length > 63 || !kLabelValue.test(v)) {
      causes.push({field: `metadata.labels`, message: `Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63`});
    }
  }
  return causes;
}

// The causes for a Pod about to be created ([] when valid).
export function validatePod(obj) {
  const causes = schemaCauses(models.Pod, obj);
  if (causes.length) return causes;
  causes.push(...labelCauses(obj.metadata));
  const spec = obj.spec || {};
  const containers = spec.containers || [];
  if (!containers.length) causes.push({field: 'spec.containers', message: 'Required value'});
  const names = new Set();
  containers.forEach((c, i) => {
    if (!kDnsLabel.test(c.name || '')) causes.push({field: `spec.containers[${i}].name`, message: 'must be a DNS label'});
    if (names.has(c.name)) causes.push({field: `spec.containers[${i}].name`, message: `Duplicate value: "${c.name}"`});
    names.add(c.name);
  });
  if (spec.restartPolicy && !['Always', 'OnFailure', 'Never'].includes(spec.restartPolicy)) {
    causes.push({field: 'spec.restartPolicy', message: `Unsupported value: "${spec.restartPolicy}"`});
  }
  return causes;
}

// The causes for a ConfigMap about to be stored ([] when valid).
export function validateConfigMap(obj) {
  const causes = schemaCauses(models.ConfigMap, obj);
  if (causes.length) return causes;
  causes.push(...labelCauses(obj.metadata));
  for (const k of Object.keys(obj.data || {})) {
    if (k.length > 253 || !kConfigMapKey.test(k)) {
      causes.push({field: 'data', message: `Invalid value: "${k}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`});
    }
  }
  return causes;
}
