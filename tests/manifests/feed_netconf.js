#!/usr/bin/env node
// Turns a rendered network (check_chart.js --netconf-out record) into the stdin the runtime would
// give rdmanet on the simulated node:
//   node feed_netconf.js RECORD.json --master IF --device-id BDF --ipam-dir DIR --subnet CIDR
//                        [--keep-check]
// Only what cannot hold on this host is substituted, and each substitution is printed to stderr:
// - master: the cluster's PF name (ens1f0) -> the simulated node's PF netdev;
// - ipam: the cluster-wide IPAM (whereabouts, not installed here) -> Debian's host-local;
// - vlan: dropped, the host kernel has no 8021q (the VLAN paths run in the vm-labelled tests);
// - lossless.check enforce -> warn, the host kernel has no DCB (unless --keep-check, which the
//   test uses to see enforce refuse the port with code 7).
// runtimeConfig.deviceID is added for sriov and host-device networks with a resource: Multus
// passes the allocated device's PCI address that way.
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
if (conf.lossless && conf.lossless.check !== 'off' && !argv.includes('--keep-check')) {
  note(`lossless.check ${conf.lossless.check || 'warn'} -> warn (no DCB in the host kernel)`);
  conf.lossless.check = 'warn';
}
// (Not for macvlan: a shared pool's IDs name slots on the PF, which rdmanet does not use.)
if (record.resourceName && conf.mode !== 'macvlan') {
  conf.runtimeConfig = {deviceID: opt('--device-id')};
  note(`runtimeConfig.deviceID ${opt('--device-id')} (from ${record.resourceName}, as Multus does)`);
}
process.stdout.write(JSON.stringify(conf));
