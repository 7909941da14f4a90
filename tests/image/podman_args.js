#!/usr/bin/env node
// Turns one container of the rendered chart into `podman run` arguments, so the image test runs
// exactly what the chart would: its command and args, its securityContext, its volume mounts.
//
//   node podman_args.js RENDER.yaml CONTAINER [--volume NAME=HOSTDIR]... [--check-config]
//                       [--command JSON_ARRAY]
//
// Prints one argument per line: the podman options, then "--entrypoint" with the command's
// first word, the container's image, and the rest of the command and args. --check-config
// replaces the args with `--check-config <the file the chart passes to --config>`; --command
// replaces command and args (another binary of the image, run as that container). Mapped: runAsUser/runAsGroup -> --user, capabilities.drop/add -> --cap-drop/
// --cap-add, readOnlyRootFilesystem -> --read-only, allowPrivilegeEscalation false ->
// --security-opt no-new-privileges, privileged -> --privileged, hostNetwork -> --network host,
// a volumeMount of a volume named by --volume -> -v HOSTDIR:mountPath[:ro]. A volume the chart
// mounts but the test does not map is an error: every mount must be accounted for.
'use strict';

const fs = require('fs');
const path = require('path');
const {parseDocs} = require(path.join(__dirname, '../manifests/k8s_check.js'));

const [file, name, ...rest] = process.argv.slice(2);
const volumes = {};
let checkConfig = false;
let command = null;
for (let i = 0; i < rest.length; i += 2) {
  if (rest[i] === '--volume') {
    const [k, v] = rest[i + 1].split(/=(.*)/s);
    volumes[k] = v;
  } else if (rest[i] === '--check-config') {
    checkConfig = true;
    i -= 1;
  } else if (rest[i] === '--command') {
    command = JSON.parse(rest[i + 1]);
  } else {
    throw new Error(`unknown option ${rest[i]}`);
  }
}
const docs = parseDocs(fs.readFileSync(file, 'utf8'), file);
const ds = docs.find((d) => d.kind === 'DaemonSet');
if (!ds) throw new Error('no DaemonSet in the render');
const spec = ds.spec.template.spec;
const c = [...(spec.initContainers || []), ...spec.containers].find((x) => x.name === name);
if (!c) throw new Error(`no container ${name} in the DaemonSet`);

const out = [];
const sc = c.securityContext || {};
if (sc.runAsUser !== undefined) out.push('--user', `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`);
for (const cap of (sc.capabilities || {}).drop || []) out.push('--cap-drop', cap);
for (const cap of (sc.capabilities || {}).add || []) out.push('--cap-add', cap);
// Kubernetes gives a read-only root no writable /tmp, so podman must not either.
if (sc.readOnlyRootFilesystem) out.push('--read-only', '--read-only-tmpfs=false');
if (sc.allowPrivilegeEscalation === false) out.push('--security-opt', 'no-new-privileges');
if (sc.privileged) out.push('--privileged');
if (spec.hostNetwork) out.push('--network', 'host');
for (const m of c.volumeMounts || []) {
  if (!(m.name in volumes)) throw new Error(`${name} mounts volume ${m.name}, which the test does not map`);
  out.push('-v', `${volumes[m.name]}:${m.mountPath}${m.readOnly ? ':ro' : ''}`);
}
let args = c.args || [];
if (checkConfig) {
  const i = args.indexOf('--config');
  if (i < 0) throw new Error(`${name} passes no --config`);
  args = ['--check-config', args[i + 1]];
}
const argv = command || [...(c.command || []), ...args];
out.push('--entrypoint', argv[0], c.image, ...argv.slice(1));
process.stdout.write(out.join('\n') + '\n');
