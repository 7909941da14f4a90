#!/usr/bin/env node
// Turns a rendered network (check_chart.js --netconf-out record) into the stdin the runtime would
// give rdmanet on the simulated node:
//   node feed_netconf.js RECORD.json --master IF --device-id BDF --ipam-dir DIR --subnet CIDR
//                        [--keep-check] [--devinfo FILE] [--pod-info-dir DIR]
// Only what cannot hold on this host is substituted, and each substitution is printed to stderr:
// - master: the cluster's PF name (ens1f0) -> the simulated node's PF netdev;
// - ipam: the cluster-wide IPAM (whereabouts, not installed here) -> Debian's host-local;
// - vlan: dropped, the host kernel has no 8021q (the VLAN paths run in the vm-labelled tests);
// - lossless.check enforce -> warn, the host kernel has no DCB (unless --keep-check, which the
//   test uses to see enforce refuse the port with code 7).
// The allocated device goes into deviceID/pciBusID (networks with a resource), and runtimeConfig
// carries what Multus passes for the declared capabilities: with --devinfo FILE,
// CNIDeviceInfoFile.
'use strict';

const fs = require('fs');

const argv = process.argv.slice(2);
const opt = (n) => {
  const i = argv.indexOf(n);
  return i >= 0 ? argv[i + 1] : undefined;
};
const record = JSON.parse(fs.readFileSync(argv[0], 'utf8'));
const conf = JSON.parse(JSON.stringify(record.netconf));
const note = (msg) => process.stderr.write(`  substitute ${conf.name}: ${msg}\n`);

if (conf.master !== undefined) {
  note(`master ${conf.master} -> ${opt('--master')}`);
  conf.master = opt('--master');
}
if (conf.ipam !== undefined) {
  note(`ipam ${conf.ipam.type} -> host-local ${opt('--subnet')}`);
  conf.ipam = {
    type: 'host-local',
    dataDir: opt('--ipam-dir'),
    ranges: [[{subnet: opt('--subnet')}]],
  };
}
if (conf.vlan !== undefined) {
  note(`vlan ${conf.vlan} dropped (no 8021q in the host kernel)`);
  delete conf.vlan;
  delete conf.vlanQoS;
  delete conf.vlanProto;
}
if (conf.podInfoDir !== undefined && opt('--pod-info-dir')) {
  note(`podInfoDir ${conf.podInfoDir} -> ${opt('--pod-info-dir')} (the test's own directory)`);
  conf.podInfoDir = opt('--pod-info-dir');
}
if (conf.draDevicesDir !== undefined) {
  // The device comes from --device-id here, as Multus v4.3.1 passes a claim's; the records the
  // daemon writes for older Multus are tested with the CNI (tests/cni/modes/claimed_device_test.cc).
  note(`draDevicesDir ${conf.draDevicesDir} dropped (the device is given)`);
  delete conf.draDevicesDir;
}
if (conf.lossless && conf.lossless.check !== 'off' && !argv.includes('--keep-check')) {
  note(`lossless.check ${conf.lossless.check || 'warn'} -> warn (no DCB in the host kernel)`);
  conf.lossless.check = 'warn';
}
// The allocated device as Multus passes it: for a network with a resource, Multus writes the
// device kubelet allocated into the delegate's own deviceID and pciBusID, whatever the
// capabilities; runtimeConfig carries only what the declared capabilities ask for (a real
// runtime leaves it in the delegate's config; so does this), deviceID among them.
const caps = conf.capabilities || {};
const rc = {};
if (record.resourceName && opt('--device-id')) {
  conf.deviceID = conf.pciBusID = opt('--device-id');
  note(`deviceID/pciBusID ${conf.deviceID} (from ${record.resourceName}, as Multus does)`);
  if (caps.deviceID) {
    rc.deviceID = conf.deviceID;
    note(`runtimeConfig.deviceID ${rc.deviceID} (the deviceID capability)`);
  }
}
if (caps.CNIDeviceInfoFile && opt('--devinfo')) {
  rc.CNIDeviceInfoFile = opt('--devinfo');
  note(`runtimeConfig.CNIDeviceInfoFile ${rc.CNIDeviceInfoFile}`);
}
if (Object.keys(rc).length) conf.runtimeConfig = rc;
process.stdout.write(JSON.stringify(conf));
