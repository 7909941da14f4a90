// A stand-in Kubernetes API server for rdmanet's DRA tests: plain HTTP on loopback, a random
// port, the real REST shapes for the resources the driver touches.
//
//   node apiserver.mjs [--token T]... [--tls-dir D]   prints {"port":N} once listening
//
// Plain HTTP by default. With --tls-dir (holding server.crt, server.key and ca.crt) it serves
// HTTPS and, like the real server, authenticates a client by a certificate signed by ca.crt or by
// a bearer token.
//
// Served like the real one:
//   /api/v1/nodes[/NAME]                                         GET, list, POST, PUT, DELETE
//   /apis/resource.k8s.io/v1/resourceslices[/NAME]               the same
//   /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims[/NAME] the same
//   /apis/resource.k8s.io/v1/resourceclaims                      list, across namespaces
//   /api/v1/namespaces/NS/events[/NAME]                          core v1 Events, the same
//   /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME/status   GET, PUT (only .status
//                                                                is taken from the body)
//   /api/v1/namespaces/NS/pods[/NAME], /api/v1/pods               Pods, as nodes (the second:
//                                                                list across namespaces)
//   /api/v1/namespaces/NS/pods/NAME/status                       GET, PUT, as claims' status
//   /api/v1/namespaces/NS/configmaps[/NAME]                      ConfigMaps, as nodes
//   /apis/k8s.cni.cncf.io/v1/namespaces/NS/network-attachment-definitions[/NAME]   Multus NADs
//   /api/v1/namespaces/NS/pods/NAME[:PORT]/proxy/PATH            GET: the pod's answer, as a
//                                                                test set it (/_control/proxy,
//                                                                dropped when the pod is deleted);
//                                                                a pod that does not exist is
//                                                                404, one without an answer set
//                                                                503 (nothing listens), as the
//                                                                real proxy says
// - metadata.uid, resourceVersion (one counter for the whole store), creationTimestamp,
//   generateName; a PUT whose resourceVersion differs from the stored one is 409 Conflict, a
//   POST of an existing name 409 AlreadyExists, a missing object 404 NotFound, all as
//   metav1.Status bodies;
// - fieldSelector (=, ==, != on the fields the real server indexes: metadata.name and, for
//   ResourceSlices, spec.nodeName, spec.driver, spec.pool.name; others are 400) and
//   labelSelector (=, ==, !=, key, !key); `limit` and `continue` page a list (the token is
//   opaque to clients; here the index of the next item);
// - every ResourceSlice written is validated (validate_slice.mjs: the resource.k8s.io/v1
//   schema of kubernetes-models 5.1.0 plus the upstream API rules it lacks): 422 Invalid; so is
//   every ResourceClaim's status.devices (validate_claim_status.mjs);
// - feature gates DRADeviceTaints, DRAConsumableCapacity and DRAPartitionableDevices (on by
//   default here): when off, device taints / allowMultipleAllocations and capacities'
//   requestPolicy / sharedCounters and consumesCounters are dropped before validation and storage, as the real server drops
//   disabled fields; taints get timeAdded if unset;
// - quantities in ResourceSlices (capacity values, counters) are stored in canonical form, as
//   apimachinery's Quantity marshals them: a whole decimal-SI number with the largest suffix
//   that keeps it whole ("100000M" is stored as "100G");
// - a created Pod gets status.phase Pending (a create's status is ignored, as the real server
//   does); Pods and ConfigMaps written are validated (validate_core.mjs: kubernetes-models'
//   schema plus label, container-name and data-key rules);
// - every Event written is checked as the real server's legacy (core v1) validation does: its
//   involvedObject.namespace must be the Event's namespace, reportingComponent a qualified name,
//   and (as kubectl needs to show it) type Normal or Warning, a reason and an involved kind/name;
// - authentication: when tokens are configured, or over TLS, a request without one of the
//   tokens (or, over TLS, a verified client certificate) is 401.
// Test controls (not Kubernetes API):
//   POST /_control/faults  {"method":"PUT","path":"/apis/...","status":409|500|...,
//                           "hang_ms":N,"count":1}   the next matching requests fail with that
//                           status (a metav1.Status body), or are held hang_ms and then dropped
//                           without an answer (a time-out), or ("delay_ms":N) answered as usual
//                           only after N ms (a slow server); method and path (a prefix) optional;
//                           "agent":"X" limits it to requests whose User-Agent is X (one client
//                           meets an outage while a test's own client still reads)
//   DELETE /_control/faults                        drops every pending fault: the server answers
//                           normally again (the end of an outage)
//   POST /_control/gates   {"DRADeviceTaints":false,"DRAConsumableCapacity":false}
//   POST /_control/tokens  {"tokens":["a","b"]}   ([] turns authentication off)
//   GET  /_control/stats   {"requests":{"GET":n,...},"writes":n}   API requests served
//   POST /_control/proxy   {"namespace":"ns","pod":"p","port":"9109","path":"/metrics",
//                           "status":200,"body":"text"}   what the pod answers through the proxy
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import {loadSchema, validateSlice, isDnsSubdomain} from './validate_slice.mjs';
import {loadClaimStatusSchema, validateClaimStatus} from './validate_claim_status.mjs';
import {loadCoreSchemas, validatePod, validateConfigMap} from './validate_core.mjs';

const kinds = {
  nodes: {kind: 'Node', apiVersion: 'v1', group: '', fields: ['metadata.name']},
  resourceslices: {kind: 'ResourceSlice', apiVersion: 'resource.k8s.io/v1', group: 'resource.k8s.io',
    fields: ['metadata.name', 'spec.nodeName', 'spec.driver', 'spec.pool.name']},
  resourceclaims: {kind: 'ResourceClaim', apiVersion: 'resource.k8s.io/v1', group: 'resource.k8s.io',
    fields: ['metadata.name', 'metadata.namespace']},
  events: {kind: 'Event', apiVersion: 'v1', group: '',
    fields: ['metadata.name', 'metadata.namespace', 'involvedObject.kind', 'involvedObject.name',
      'involvedObject.uid', 'involvedObject.namespace', 'reason', 'type']},
  pods: {kind: 'Pod', apiVersion: 'v1', group: '',
    fields: ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'spec.restartPolicy',
      'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP',
      'status.nominatedNodeName']},
  configmaps: {kind: 'ConfigMap', apiVersion: 'v1', group: '', fields: ['metadata.name', 'metadata.namespace']},
  'network-attachment-definitions': {kind: 'NetworkAttachmentDefinition', apiVersion: 'k8s.cni.cncf.io/v1',
    group: 'k8s.cni.cncf.io', fields: ['metadata.name', 'metadata.namespace']},
};

const store = new Map();  // "<resource>/<ns>/<name>" -> object
let rv = 1000;
let faults = [];
const proxyAnswers = new Map();  // "<ns>/<pod>/<port>/<path>" -> {status, body}
const gates = {DRADeviceTaints: true, DRAConsumableCapacity: true, DRAPartitionableDevices: true};

// The canonical text of a whole decimal-SI quantity ("1500000k" -> "1500M"); other forms are
// returned as they are (rdmanet writes only whole decimal-SI quantities).
const kSuffixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
function canonicalQuantity(q) {
  const m = /^(-?)(\d+)(|k|M|G|T|P|E)$/.exec(typeof q === 'string' ? q : '');
  if (!m) return q;
  let v = BigInt(m[2]) * 1000n ** BigInt(kSuffixes.indexOf(m[3]));
  if (v === 0n) return '0';
  let e = 0;
  while (e + 1 < kSuffixes.length && v % 1000n === 0n) {
    v /= 1000n;
    e++;
  }
  return `${m[1]}${v}${kSuffixes[e]}`;
}
function canonicalCounters(counters) {
  for (const c of Object.values(counters || {})) {
    if (c && c.value !== undefined) c.value = canonicalQuantity(c.value);
  }
}
let tokens = [];
const stats = {requests: {}, writes: 0};
let tlsDir = '';
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--token') tokens.push(process.argv[++i]);
  if (process.argv[i] === '--tls-dir') tlsDir = process.argv[++i];
}

function status(res, code, reason, message, details) {
  const body = {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code};
  if (details) body.details = details;
  send(res, code, body);
}
function send(res, code, obj) {
  const text = JSON.stringify(obj);
  res.writeHead(code, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text)});
  res.end(text);
}

// "/api/v1/nodes/n1" -> {resource, ns, name}; null when the path is not served.
function route(pathname) {
  let m = pathname.match(/^\/api\/v1\/(nodes)(?:\/([^/]+))?$/);
  if (m) return {resource: m[1], ns: '', name: m[2] || ''};
  m = pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/(events|pods|configmaps)(?:\/([^/]+))?$/);
  if (m) return {resource: m[2], ns: m[1], name: m[3] || ''};
  m = pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/(pods)\/([^/]+)\/status$/);
  if (m) return {resource: m[2], ns: m[1], name: m[3], status: true};
  m = pathname.match(/^\/api\/v1\/(pods)$/);
  if (m) return {resource: m[1], ns: '', name: '', allNamespaces: true};
  m = pathname.match(/^\/apis\/k8s\.cni\.cncf\.io\/v1\/namespaces\/([^/]+)\/(network-attachment-definitions)(?:\/([^/]+))?$/);
  if (m) return {resource: m[2], ns: m[1], name: m[3] || ''};
  m = pathname.match(/^\/apis\/resource\.k8s\.io\/v1\/(resourceslices)(?:\/([^/]+))?$/);
  if (m) return {resource: m[1], ns: '', name: m[2] || ''};
  m = pathname.match(/^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/(resourceclaims)(?:\/([^/]+))?$/);
  if (m) return {resource: m[2], ns: m[1], name: m[3] || ''};
  m = pathname.match(/^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/(resourceclaims)\/([^/]+)\/status$/);
  if (m) return {resource: m[2], ns: m[1], name: m[3], status: true};
  m = pathname.match(/^\/apis\/resource\.k8s\.io\/v1\/(resourceclaims)$/);
  if (m) return {resource: m[1], ns: '', name: '', allNamespaces: true};
  return null;
}

function fieldValue(obj, field) {
  return field.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj) ?? '';
}

// Parses "a=b,c!=d" into [{key, op, value}]; null when malformed.
function parseSelector(text) {
  if (!text) return [];
  const out = [];
  for (const term of text.split(',')) {
    const m = term.match(/^\s*(!?)([^=!\s]+)\s*(?:(==|=|!=)\s*(\S*))?\s*$/);
    if (!m) return null;
    if (m[1]) out.push({key: m[2], op: '!exists'});
    else if (!m[3]) out.push({key: m[2], op: 'exists'});
    else out.push({key: m[2], op: m[3] === '!=' ? '!=' : '=', value: m[4]});
  }
  return out;
}
function matches(terms, get, has) {
  return terms.every((t) => {
    if (t.op === 'exists') return has(t.key);
    if (t.op === '!exists') return !has(t.key);
    return t.op === '=' ? get(t.key) === t.value : get(t.key) !== t.value;
  });
}

function qualifiedKind(r) {
  const k = kinds[r.resource];
  return k.group ? `${r.resource}.${k.group}` : r.resource;
}
function notFound(res, r, name) {
  status(res, 404, 'NotFound', `${qualifiedKind(r)} "${name}" not found`,
      {name, group: kinds[r.resource].group, kind: r.resource});
}
function invalid(res, r, name, causes) {
  const msg = `${kinds[r.resource].kind}.${kinds[r.resource].group || 'core'} "${name}" is invalid: [` +
      causes.map((c) => `${c.field}: ${c.message}`).join(', ') + ']';
  status(res, 422, 'Invalid', msg, {name, group: kinds[r.resource].group, kind: kinds[r.resource].kind,
    causes: causes.map((c) => ({reason: 'FieldValueInvalid', message: c.message, field: c.field}))});
}

// apiserver's legacyValidateEvent for a core v1 Event, plus what `kubectl get events` shows.
function validateEvent(e) {
  const causes = [];
  const io = e.involvedObject || {};
  if ((io.namespace || '') !== (e.metadata.namespace || '')) {
    causes.push({field: 'involvedObject.namespace', message: 'does not match event.namespace'});
  }
  const rc = e.reportingComponent || '';
  if (rc && !/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(rc)) {
    causes.push({field: 'reportingComponent', message: 'must be a qualified name'});
  }
  if (!['Normal', 'Warning'].includes(e.type)) causes.push({field: 'type', message: 'must be Normal or Warning'});
  if (!e.reason) causes.push({field: 'reason', message: 'Required value'});
  if (!io.kind || !io.name) causes.push({field: 'involvedObject', message: 'kind and name are required'});
  return causes;
}

// What the server does to a written object before validation and storage.
function prepare(r, obj, now) {
  if (r.resource !== 'resourceslices') return;
  if (obj.spec && !gates.DRAPartitionableDevices) delete obj.spec.sharedCounters;
  for (const set of (obj.spec && obj.spec.sharedCounters) || []) canonicalCounters(set.counters);
  for (const d of (obj.spec && obj.spec.devices) || []) {
    canonicalCounters(d.capacity);
    for (const c of Object.values(d.capacity || {})) {
      if (!c || !c.requestPolicy) continue;
      if (!gates.DRAConsumableCapacity) {
        delete c.requestPolicy;
      } else if (c.requestPolicy.default !== undefined) {
        c.requestPolicy.default = canonicalQuantity(c.requestPolicy.default);
      }
    }
    if (!gates.DRAPartitionableDevices) delete d.consumesCounters;
    for (const c of d.consumesCounters || []) canonicalCounters(c.counters);
    if (!gates.DRAConsumableCapacity) delete d.allowMultipleAllocations;
    if (!gates.DRADeviceTaints) {
      delete d.taints;
    } else {
      for (const t of d.taints || []) if (!t.timeAdded) t.timeAdded = now;
    }
  }
}

// GET /api/v1/namespaces/NS/pods/NAME[:PORT]/proxy/PATH: what the test said the pod answers.
function handleProxy(req, res, m) {
  const [, ns, pod, port = '', rest = '/'] = m;
  if (req.method !== 'GET') return status(res, 405, 'MethodNotAllowed', `${req.method} is not served by the proxy here`);
  if (!store.has(`pods/${ns}/${pod}`)) return notFound(res, {resource: 'pods'}, pod);
  const a = proxyAnswers.get(`${ns}/${pod}/${port}/${rest}`);
  if (!a) {
    return status(res, 503, 'ServiceUnavailable',
        `error trying to reach service: dial tcp 10.0.0.1:${port || 80}: connect: connection refused`);
  }
  res.writeHead(a.status, {'Content-Type': 'text/plain; version=0.0.4', 'Content-Length': Buffer.byteLength(a.body)});
  res.end(a.body);
}

function handleApi(req, res, url, body) {
  const pm = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/:]+)(?::([^/]+))?\/proxy(\/.*)?$/);
  if (pm) return handleProxy(req, res, pm);
  const r = route(url.pathname);
  if (!r) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
  const k = kinds[r.resource];
  const key = (name) => `${r.resource}/${r.ns}/${name}`;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  if (req.method === 'GET' && !r.name) {
    const fs = parseSelector(url.searchParams.get('fieldSelector'));
    const ls = parseSelector(url.searchParams.get('labelSelector'));
    if (fs === null || ls === null) return status(res, 400, 'BadRequest', 'unable to parse selector');
    const bad = fs.find((t) => !k.fields.includes(t.key) || t.op.includes('exists'));
    if (bad) return status(res, 400, 'BadRequest', `field label not supported: ${bad.key}`);
    const items = [];
    for (const [sk, o] of store) {
      if (!sk.startsWith(r.allNamespaces ? `${r.resource}/` : `${r.resource}/${r.ns}/`)) continue;
      const labels = o.metadata.labels || {};
      if (!matches(fs, (f) => String(fieldValue(o, f)), () => true)) continue;
      if (!matches(ls, (l) => labels[l], (l) => l in labels)) continue;
      const {kind, apiVersion, ...rest} = o;  // list items carry no TypeMeta
      items.push(rest);
    }
    items.sort((a, b) => (a.metadata.namespace || '').localeCompare(b.metadata.namespace || '') ||
        a.metadata.name.localeCompare(b.metadata.name));
    const limit = Number(url.searchParams.get('limit') || 0);
    const from = Number(url.searchParams.get('continue') || 0);
    const page = limit > 0 ? items.slice(from, from + limit) : items.slice(from);
    const metadata = {resourceVersion: String(rv)};
    if (limit > 0 && from + limit < items.length) metadata.continue = String(from + limit);
    return send(res, 200, {kind: `${k.kind}List`, apiVersion: k.apiVersion, metadata, items: page});
  }
  if (r.allNamespaces) return status(res, 405, 'MethodNotAllowed', `${req.method} is not allowed on ${url.pathname}`);
  if (req.method === 'GET') {
    const o = store.get(key(r.name));
    return o ? send(res, 200, o) : notFound(res, r, r.name);
  }
  if (req.method === 'DELETE') {
    if (!r.name) return status(res, 405, 'MethodNotAllowed', 'collection delete is not served here');
    const o = store.get(key(r.name));
    if (!o) return notFound(res, r, r.name);
    store.delete(key(r.name));
    if (r.resource === 'pods') {  // a pod made again under this name is a new one: nothing listens
      for (const k of proxyAnswers.keys()) if (k.startsWith(`${r.ns}/${r.name}/`)) proxyAnswers.delete(k);
    }
    stats.writes++;
    return send(res, 200, o);
  }
  let obj;
  try {
    obj = JSON.parse(body);
  } catch (e) {
    return status(res, 400, 'BadRequest', `the body is not JSON: ${e.message}`);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return status(res, 400, 'BadRequest', 'the body is not an object');
  }
  obj.metadata = obj.metadata || {};
  // Like the real decoder, a body without TypeMeta takes the endpoint's; a different one is refused.
  obj.kind = obj.kind || k.kind;
  obj.apiVersion = obj.apiVersion || k.apiVersion;
  if (obj.kind !== k.kind || obj.apiVersion !== k.apiVersion) {
    return status(res, 400, 'BadRequest', `expected ${k.apiVersion} ${k.kind}, got ${obj.apiVersion} ${obj.kind}`);
  }
  if (r.ns) obj.metadata.namespace = r.ns;
  if (req.method === 'POST' && !r.name && r.resource === 'pods') obj.status = {phase: 'Pending'};
  if (req.method === 'POST' && !r.name) {
    if (!obj.metadata.name && obj.metadata.generateName) {
      // As apiserver's SimpleNameGenerator: the base is cut to 58, then 5 random characters.
      obj.metadata.name = obj.metadata.generateName.slice(0, 58) +
          crypto.randomBytes(3).toString('hex').slice(0, 5);
    }
    const name = obj.metadata.name || '';
    if (r.resource !== 'resourceslices' && !isDnsSubdomain(name)) {
      return invalid(res, r, name, [{field: 'metadata.name', message: 'must be a DNS subdomain'}]);
    }
    if (store.has(key(name))) {
      return status(res, 409, 'AlreadyExists', `${qualifiedKind(r)} "${name}" already exists`,
          {name, group: k.group, kind: r.resource});
    }
    prepare(r, obj, now);
    const causes = r.resource === 'resourceslices' ? validateSlice(obj, null) :
      r.resource === 'events' ? validateEvent(obj) : r.resource === 'pods' ? validatePod(obj) :
      r.resource === 'configmaps' ? validateConfigMap(obj) : [];
    if (causes.length) return invalid(res, r, name, causes);
    obj.metadata.uid = crypto.randomUUID();
    obj.metadata.resourceVersion = String(++rv);
    obj.metadata.creationTimestamp = now;
    store.set(key(name), obj);
    stats.writes++;
    return send(res, 201, obj);
  }
  if (req.method === 'PUT' && r.name) {
    const old = store.get(key(r.name));
    if (!old) return notFound(res, r, r.name);
    // The status subresource: only .status is taken from the body, the rest stays as stored.
    if (r.status) {
      const sent = obj;
      obj = structuredClone(old);
      obj.status = sent.status || {};
      obj.metadata.resourceVersion = sent.metadata.resourceVersion;
    } else if (r.resource === 'pods') {
      obj.status = old.status;  // a Pod's status is written through /status only
    }
    if (obj.metadata.name !== r.name) {
      return status(res, 400, 'BadRequest', 'the name of the object does not match the name on the URL');
    }
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
      return status(res, 409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedKind(r)} "${r.name}": ` +
          'the object has been modified; please apply your changes to the latest version and try again',
      {name: r.name, group: k.group, kind: r.resource});
    }
    prepare(r, obj, now);
    const causes = r.resource === 'resourceslices' ? validateSlice(obj, old) :
        r.resource === 'resourceclaims' ? validateClaimStatus(obj) : r.resource === 'pods' ? validatePod(obj) :
        r.resource === 'configmaps' ? validateConfigMap(obj) : [];
    if (causes.length) return invalid(res, r, r.name, causes);
    obj.metadata.uid = old.metadata.uid;
    obj.metadata.creationTimestamp = old.metadata.creationTimestamp;
    obj.metadata.resourceVersion = String(++rv);
    store.set(key(r.name), obj);
    stats.writes++;
    return send(res, 200, obj);
  }
  return status(res, 405, 'MethodNotAllowed', `${req.method} is not allowed on ${url.pathname}`);
}

function handleControl(req, res, url, body) {
  let j = {};
  try {
    j = body ? JSON.parse(body) : {};
  } catch (e) {
    return send(res, 400, {error: e.message});
  }
  if (url.pathname === '/_control/faults' && req.method === 'POST') {
    faults.push({method: j.method, path: j.path, status: j.status, hang_ms: j.hang_ms,
      delay_ms: j.delay_ms, agent: j.agent, count: j.count || 1});
    return send(res, 200, {faults: faults.length});
  }
  if (url.pathname === '/_control/faults' && req.method === 'DELETE') {
    faults = [];
    return send(res, 200, {faults: 0});
  }
  if (url.pathname === '/_control/gates' && req.method === 'POST') {
    Object.assign(gates, j);
    return send(res, 200, gates);
  }
  if (url.pathname === '/_control/tokens' && req.method === 'POST') {
    tokens = j.tokens || [];
    return send(res, 200, {tokens: tokens.length});
  }
  if (url.pathname === '/_control/stats' && req.method === 'GET') return send(res, 200, stats);
  if (url.pathname === '/_control/proxy' && req.method === 'POST') {
    proxyAnswers.set(`${j.namespace}/${j.pod}/${j.port || ''}/${j.path || '/'}`,
        {status: j.status || 200, body: j.body || ''});
    return send(res, 200, {answers: proxyAnswers.size});
  }
  return send(res, 404, {error: `no control ${req.method} ${url.pathname}`});
}

function takeFault(req, url) {
  const i = faults.findIndex((f) => (!f.method || f.method === req.method) &&
      (!f.path || url.pathname.startsWith(f.path)) &&
      (!f.agent || f.agent === req.headers['user-agent']));
  if (i < 0) return null;
  const f = faults[i];
  if (--f.count <= 0) faults.splice(i, 1);
  return f;
}

const kReasons = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound',
  409: 'Conflict', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable',
  504: 'Timeout'};

await loadSchema();
await loadClaimStatusSchema();
await loadCoreSchemas();
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname.startsWith('/_control/')) return handleControl(req, res, url, body);
    stats.requests[req.method] = (stats.requests[req.method] || 0) + 1;
    if (tokens.length || tlsDir) {
      const auth = req.headers.authorization || '';
      const byCert = tlsDir !== '' && req.socket.authorized === true;
      if (!byCert && !tokens.some((t) => auth === `Bearer ${t}`)) {
        return status(res, 401, 'Unauthorized', 'Unauthorized');
      }
    }
    const f = takeFault(req, url);
    if (f && f.hang_ms) {
      setTimeout(() => req.socket.destroy(), f.hang_ms);
      return;
    }
    if (f && f.delay_ms) {
      setTimeout(() => {
        try {
          handleApi(req, res, url, body);
        } catch (e) {
          status(res, 500, 'InternalError', `stand-in API server bug: ${e.stack}`);
        }
      }, f.delay_ms);
      return;
    }
    if (f) {
      const extra = f.status === 429 ? {retryAfterSeconds: 0} : undefined;
      return status(res, f.status, kReasons[f.status] || 'Unknown', `injected ${f.status}`, extra);
    }
    try {
      handleApi(req, res, url, body);
    } catch (e) {
      status(res, 500, 'InternalError', `stand-in API server bug: ${e.stack}`);
    }
  });
};
const server = tlsDir ?
  https.createServer({
    key: fs.readFileSync(`${tlsDir}/server.key`),
    cert: fs.readFileSync(`${tlsDir}/server.crt`),
    ca: fs.readFileSync(`${tlsDir}/ca.crt`),
    requestCert: true,
    rejectUnauthorized: false,  // a client without a certificate may still use a token
  }, handler) :
  http.createServer(handler);
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({port: server.address().port}) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
