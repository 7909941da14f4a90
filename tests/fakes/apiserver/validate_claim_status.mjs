// ResourceClaim status.devices validation as the real API server does it for resource.k8s.io/v1
// (what a driver's status write must pass; the daemon's networkData, issue 32).
//
// Two layers, as validate_slice.mjs:
//  1. the OpenAPI schema of kubernetes-models 5.1.0 for AllocatedDeviceStatus (its required
//     driver, pool and device; metav1.Condition's required type, status, reason, message and
//     lastTransitionTime; NetworkDeviceData's types);
//  2. the rules that schema lacks, from kubernetes v1.37.2
//     pkg/apis/resource/validation/validation.go (validateDeviceStatus,
//     validateNetworkDeviceData) and apimachinery's ValidateConditions, with the limits of
//     k8s.io/api/resource/v1/types.go: AllocatedDeviceStatusMaxConditions = 8,
//     NetworkDeviceDataMaxIPs = 16, NetworkDeviceDataInterfaceNameMaxLength = 256,
//     NetworkDeviceDataHardwareAddressMaxLength = 128; each entry must be an allocated device
//     of the claim (driver, pool, device, shareID), once; ips are canonical interface
//     addresses (IsValidInterfaceAddress), unique; condition types unique, status
//     True/False/Unknown, reason CamelCase of at most 1024, message at most 32768.
// Each failure is a cause {field, message}, like metav1.StatusCause.
import net from 'node:net';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const toolsDir = process.env.RDMANET_TOOLS_DIR || '/opt/rdmanet-tools';
const modelsDir = path.join(toolsDir, 'node/node_modules/kubernetes-models-5');

let schema = null;
export async function loadClaimStatusSchema() {
  const url = pathToFileURL(path.join(modelsDir, 'resource.k8s.io/v1/AllocatedDeviceStatus.js')).href;
  schema = (await import(url)).AllocatedDeviceStatus;
}

const kMaxConditions = 8;
const kMaxIps = 16;
const kMaxIfname = 256;
const kMaxHwAddr = 128;
const reason = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

// "10.0.0.5/24" or "fd00::5/64", the address in canonical form (what Go's netip prints).
function canonicalInterfaceAddress(s) {
  const m = typeof s === 'string' ? s.match(/^([^/]+)\/(\d{1,3})$/) : null;
  if (!m) return false;
  const fam = net.isIP(m[1]);
  if (!fam || Number(m[2]) > (fam === 4 ? 32 : 128)) return false;
  if (fam === 4) return m[1].split('.').every((o) => String(Number(o)) === o);
  // Node's URL parser prints IPv6 in RFC 5952 form, as Go does.
  return new URL(`http://[${m[1]}]/`).hostname === `[${m[1]}]`;
}

function key(d) { return `${d.driver}/${d.pool}/${d.device}/${d.shareID || ''}`; }

// `claim` is the object as it would be stored.
export function validateClaimStatus(claim) {
  const causes = [];
  const devices = (claim.status && claim.status.devices) || [];
  if (!Array.isArray(devices)) return [{field: 'status.devices', message: 'must be an array'}];
  const results = (((claim.status || {}).allocation || {}).devices || {}).results || [];
  const allocated = new Set(results.map(key));
  const seen = new Set();
  devices.forEach((d, i) => {
    const f = `status.devices[${i}]`;
    try {
      new schema(d).validate();
    } catch (e) {
      causes.push({field: f, message: `schema: ${e.message}`});
      return;
    }
    if (!allocated.has(key(d))) causes.push({field: f, message: `${key(d)}: must be an allocated device in the claim`});
    if (seen.has(key(d))) causes.push({field: f, message: `Duplicate value: ${key(d)}`});
    seen.add(key(d));
    const conds = d.conditions || [];
    if (conds.length > kMaxConditions) causes.push({field: `${f}.conditions`, message: `must have at most ${kMaxConditions} items`});
    const types = new Set();
    conds.forEach((c, j) => {
      const cf = `${f}.conditions[${j}]`;
      if (types.has(c.type)) causes.push({field: `${cf}.type`, message: 'Duplicate value'});
      types.add(c.type);
      if (!['True', 'False', 'Unknown'].includes(c.status)) causes.push({field: `${cf}.status`, message: 'Unsupported value'});
      if (!reason.test(c.reason || '') || c.reason.length > 1024) causes.push({field: `${cf}.reason`, message: 'must be CamelCase'});
      if ((c.message || '').length > 32768) causes.push({field: `${cf}.message`, message: 'too long'});
      if (!c.lastTransitionTime || Number.isNaN(Date.parse(c.lastTransitionTime))) {
        causes.push({field: `${cf}.lastTransitionTime`, message: 'Required value'});
      }
    });
    const nd = d.networkData;
    if (nd) {
      if ((nd.interfaceName || '').length > kMaxIfname) causes.push({field: `${f}.networkData.interfaceName`, message: 'Too long'});
      if ((nd.hardwareAddress || '').length > kMaxHwAddr) causes.push({field: `${f}.networkData.hardwareAddress`, message: 'Too long'});
      const ips = nd.ips || [];
      if (ips.length > kMaxIps) causes.push({field: `${f}.networkData.ips`, message: `must have at most ${kMaxIps} items`});
      if (new Set(ips).size !== ips.length) causes.push({field: `${f}.networkData.ips`, message: 'Duplicate value'});
      ips.forEach((ip, k) => {
        if (!canonicalInterfaceAddress(ip)) {
          causes.push({field: `${f}.networkData.ips[${k}]`, message: `${ip}: must be a canonical interface address`});
        }
      });
    }
  });
  if (devices.length && !results.length) causes.push({field: 'status.devices', message: 'the claim is not allocated'});
  return causes;
}
