// Checks the rdmanet netconf inside a rendered NetworkAttachmentDefinition: it parses as JSON,
// carries only keys the CNI knows (issue 4's list), with the CNI's types and ranges, and the
// mode's required keys.
'use strict';

const kKeys = new Set([
  'cniVersion', 'name', 'type', 'mode', 'deviceID', 'pciBusID', 'device', 'master',
  'macvlanMode', 'mtu', 'mac', 'vlan', 'vlanQoS', 'vlanProto', 'spoofchk', 'trust', 'link_state',
  'min_tx_rate', 'max_tx_rate', 'ipam', 'logLevel', 'logFile', 'rdma', 'lossless', 'capabilities',
  'podInfoDir', 'draDevicesDir', 'resourceName', 'allowPodMac', 'allowPodIPs',
]);
// The runtimeConfig keys rdmanet reads, which a netconf may declare as capabilities.
const kCapabilities = ['CNIDeviceInfoFile', 'deviceID', 'mac', 'ips'];
const kVersions = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];
const kModes = ['sriov', 'macvlan', 'host-device'];
const kResourceAnnotation = 'k8s.v1.cni.cncf.io/resourceName';

const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;

// Returns {conf, errors}. `nad` is the parsed NetworkAttachmentDefinition.
function checkNetconf(nad, id) {
  const errors = [];
  let conf;
  try {
    conf = JSON.parse(nad.spec.config);
  } catch (e) {
    return {conf: null, errors: [`${id}: spec.config is not JSON: ${e.message}`]};
  }
  const bad = (msg) => errors.push(`${id}: netconf ${msg}`);
  if (conf === null || typeof conf !== 'object' || Array.isArray(conf)) {
    return {conf: null, errors: [`${id}: netconf is not a JSON object`]};
  }
  for (const k of Object.keys(conf)) if (!kKeys.has(k)) bad(`has key ${k} the CNI does not know`);
  if (conf.type !== 'rdmanet') bad(`type is ${conf.type}, not rdmanet`);
  if (conf.name !== nad.metadata.name) bad(`name ${conf.name} != metadata.name ${nad.metadata.name}`);
  if (!kVersions.includes(conf.cniVersion)) bad(`cniVersion ${conf.cniVersion} is not supported`);
  if (!kModes.includes(conf.mode)) bad(`mode ${conf.mode} is not one of ${kModes}`);
  if ('mtu' in conf && !isInt(conf.mtu, 68, 65535)) bad(`mtu ${conf.mtu} out of range`);
  if ('vlan' in conf && !isInt(conf.vlan, 0, 4094)) bad(`vlan ${conf.vlan} out of range`);
  if ('vlanQoS' in conf && !isInt(conf.vlanQoS, 0, 7)) bad(`vlanQoS ${conf.vlanQoS} out of range`);
  for (const k of ['min_tx_rate', 'max_tx_rate']) {
    if (k in conf && !isInt(conf[k], 0, 2 ** 32 - 1)) bad(`${k} ${conf[k]} out of range`);
  }
  for (const k of ['spoofchk', 'trust']) {
    if (k in conf && !['on', 'off'].includes(conf[k])) bad(`${k} must be "on" or "off"`);
  }
  if ('rdma' in conf && typeof conf.rdma !== 'boolean') bad('rdma must be a boolean');
  if (conf.lossless !== undefined) {
    const l = conf.lossless;
    if (!l || !isInt(l.priority, 0, 7)) bad('lossless.priority must be 0-7');
    if (l && 'check' in l && !['enforce', 'warn', 'off'].includes(l.check)) {
      bad(`lossless.check ${l.check} is not enforce|warn|off`);
    }
    if ('vlanQoS' in conf && l && conf.vlanQoS !== l.priority) {
      bad('vlanQoS differs from lossless.priority (the CNI rejects it with code 7)');
    }
  }
  if (conf.ipam !== undefined) {
    const t = conf.ipam && conf.ipam.type;
    if (typeof t !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(t) || t === '..') {
      bad(`ipam.type ${t} is not a plain plugin file name`);
    }
  }
  // Multus passes runtimeConfig only for declared capabilities: without CNIDeviceInfoFile rdmanet
  // never writes its device-info file. The allocated device comes in the netconf's own deviceID
  // (Multus writes it there), so the chart declares no deviceID capability: it would only carry
  // the device a pod names itself. Least privilege: nothing else by default, and mac/ips only
  // with the network's opt-in (rdmanet refuses them otherwise).
  const caps = conf.capabilities;
  if (!caps || typeof caps !== 'object' || Array.isArray(caps)) {
    bad('declares no capabilities object (Multus would pass no runtimeConfig)');
  } else {
    for (const [k, v] of Object.entries(caps)) {
      if (!kCapabilities.includes(k)) bad(`capability ${k} is not a runtimeConfig key rdmanet reads`);
      if (typeof v !== 'boolean') bad(`capability ${k} must be a boolean`);
    }
    if (caps.CNIDeviceInfoFile !== true) bad('does not declare the CNIDeviceInfoFile capability');
    if (caps.deviceID === true) {
      bad('declares the deviceID capability, which only carries a device the pod names itself');
    }
    if (caps.mac === true && conf.allowPodMac !== true) bad('declares mac without allowPodMac');
    if (caps.ips === true && conf.allowPodIPs !== true) bad('declares ips without allowPodIPs');
  }
  for (const k of ['allowPodMac', 'allowPodIPs']) {
    if (k in conf && typeof conf[k] !== 'boolean') bad(`${k} must be a boolean`);
  }
  if ('podInfoDir' in conf && !/^\/[^.]/.test(String(conf.podInfoDir))) {
    bad(`podInfoDir ${conf.podInfoDir} is not an absolute path`);
  }
  const resource = (nad.metadata.annotations || {})[kResourceAnnotation];
  if (conf.mode === 'sriov' && !resource) bad(`mode sriov without the ${kResourceAnnotation} annotation`);
  if (conf.mode === 'macvlan' && !conf.master) bad('mode macvlan without master');
  if (conf.mode === 'host-device') {
    const sources = ['device', 'pciBusID', 'deviceID'].filter((k) => k in conf).length +
        (resource ? 1 : 0);
    if (sources !== 1) bad('mode host-device needs exactly one of device, pciBusID, deviceID, resource');
  }
  if (resource !== undefined && !/^[a-z0-9.-]+\/[A-Za-z0-9_]+$/.test(resource)) {
    errors.push(`${id}: ${kResourceAnnotation} ${resource} is not <prefix>/<name>`);
  }
  return {conf, errors};
}

module.exports = {checkNetconf, kResourceAnnotation};
