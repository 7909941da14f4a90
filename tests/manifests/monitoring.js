// What the chart's monitoring (files/alerts.yaml, files/dashboard.json) is checked with, shared
// by check_monitoring.js' modes:
//   - the PromQL expressions of the rules and of every dashboard panel and variable, with the
//     dashboard's variables replaced by values that keep them PromQL;
//   - the metric names an expression reads (a small PromQL tokenizer; promtool parses the same
//     expressions separately, so a name is only taken from something Prometheus accepts);
//   - the one list of the names they may use: what the daemon's /metrics serves, plus
//     kNotYetOnMetrics, kDraOnly and kExternal below.
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');
const {parseDocs} = require('./k8s_check.js');

// Series the rules and the dashboard may name before the daemon serves them, with their labels:
// none now (issue 24's per-pod and per-port series are on /metrics). metric_names fails, naming
// this file, as soon as the daemon serves a name still listed, so the table cannot go stale.
const kNotYetOnMetrics = {};

// Series only a DRA node serves (--api dra), from its first claim on (deviceplugin/metrics.h),
// with their labels: the names check scrapes a device-plugin daemon, which never has them, and
// tests/cluster/dra.sh scrapes them off a real DRA node.
const kDraOnly = {
  rdmanet_dra_claim_operations_total: ['operation', 'result'],
  rdmanet_dra_claim_operation_duration_seconds_bucket: ['operation', 'le'],
  rdmanet_dra_claim_operation_duration_seconds_sum: ['operation'],
  rdmanet_dra_claim_operation_duration_seconds_count: ['operation'],
  rdmanet_dra_events_total: ['result'],
};

// Labels Prometheus adds to every series of a target.
const kTargetLabels = ['instance', 'job'];

// Names from other exporters, with the one that serves them: the dashboard's job selector joins
// kube-state-metrics' pod labels.
const kExternal = {kube_pod_labels: 'kube-state-metrics'};

// The sample names a /metrics text declares, each with the labels its samples carry (an empty
// set when the family has no sample): every `# TYPE` family (with _bucket, _sum and _count for
// histograms and summaries) and every sample line's name.
function exposedNames(text) {
  const names = new Map();
  const add = (n) => names.has(n) || names.set(n, new Set());
  for (const line of text.split('\n')) {
    const t = line.match(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)/);
    if (t) {
      add(t[1]);
      if (t[2] === 'histogram') for (const x of ['_bucket', '_sum', '_count']) add(t[1] + x);
      if (t[2] === 'summary') for (const x of ['_sum', '_count']) add(t[1] + x);
      continue;
    }
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s/);
    if (!m) continue;
    add(m[1]);
    for (const l of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) names.get(m[1]).add(l[1]);
  }
  return names;
}

const kKeywords = new Set(['and', 'or', 'unless', 'bool', 'by', 'without', 'on', 'ignoring',
  'group_left', 'group_right', 'offset', 'inf', 'nan']);

const kName = '[A-Za-z_:][A-Za-z0-9_:]*';

// What one PromQL expression reads: {metrics: [name], selectors: [{metric, labels}], grouping:
// [label]}. Strings are blanked first; a selector is a name and its {matchers}; grouping labels
// come from by, without, on, ignoring, group_left and group_right lists; what remains of
// identifiers not called as functions and not keywords are metric names.
function readsOf(expr) {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  const selectors = [];
  for (const m of s.matchAll(new RegExp(`(?<![A-Za-z0-9_:.])(${kName})\\s*\\{([^}]*)\\}`, 'g'))) {
    const labels = [...m[2].matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)/g)].map((l) => l[1]);
    selectors.push({metric: m[1], labels});
  }
  const grouping = [];
  s = s.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/gi, (all, kw, list) => {
    grouping.push(...list.split(',').map((l) => l.trim()).filter(Boolean));
    return ' ';
  });
  s = s.replace(/\boffset\s+-?[0-9a-z]+/gi, ' ');
  const metrics = new Set();
  for (const m of s.matchAll(new RegExp(`(?<![A-Za-z0-9_:.])(${kName})(\\s*\\()?`, 'g'))) {
    if (m[2] || kKeywords.has(m[1].toLowerCase())) continue;
    metrics.add(m[1]);
  }
  return {metrics: [...metrics], selectors, grouping: [...new Set(grouping)]};
}

// The metric names one PromQL expression reads.
function metricNames(expr) {
  return readsOf(expr).metrics;
}

// The rule groups of the rendered PrometheusRule in RENDER (a `helm template` output).
function renderedRules(renderFile) {
  const docs = parseDocs(fs.readFileSync(renderFile, 'utf8'), path.basename(renderFile));
  const rules = docs.filter((d) => d.kind === 'PrometheusRule');
  if (rules.length !== 1) throw new Error(`${renderFile}: ${rules.length} PrometheusRules, want 1`);
  return rules[0].spec;
}

// The dashboard JSON of the rendered ConfigMap in RENDER.
function renderedDashboard(renderFile) {
  const docs = parseDocs(fs.readFileSync(renderFile, 'utf8'), path.basename(renderFile));
  const cms = docs.filter((d) => d.kind === 'ConfigMap' && d.data && d.data['rdmanet.json']);
  if (cms.length !== 1) throw new Error(`${renderFile}: ${cms.length} dashboard ConfigMaps, want 1`);
  return JSON.parse(cms[0].data['rdmanet.json']);
}

// Values for Grafana's built-in variables and for the dashboard's own: multi-value and query
// variables become a regex matching all, a textbox or custom variable its default.
const kBuiltins = {__rate_interval: '5m', __interval: '1m', __range: '1h', __range_s: '3600',
  __range_ms: '3600000', __interval_ms: '60000'};

function variableValues(dash) {
  const values = {...kBuiltins};
  for (const v of (dash.templating || {}).list || []) {
    if (['textbox', 'custom', 'constant'].includes(v.type)) {
      values[v.name] = typeof v.query === 'string' ? v.query.split(',')[0].trim() : '';
    } else {
      values[v.name] = '.*';
    }
  }
  return values;
}

// EXPR with $var, ${var}, ${var:format} and [[var]] replaced; throws on an unknown variable.
function substitute(expr, values, where) {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)/g, (all, a, b, c) => {
    const name = a || b || c;
    if (!(name in values)) throw new Error(`${where}: unknown variable $${name} in ${expr}`);
    return values[name];
  });
}

// Every query of the dashboard as {where, expr} with variables replaced: panel targets (rows'
// nested panels too) and the PromQL inside query variables (label_values(EXPR, label),
// query_result(EXPR)).
function dashboardQueries(dash) {
  const values = variableValues(dash);
  const out = [];
  const walk = (panels) => {
    for (const p of panels || []) {
      walk(p.panels);
      for (const t of p.targets || []) {
        const where = `panel ${p.id} "${p.title}" target ${t.refId}`;
        if (typeof t.expr !== 'string' || !t.expr.trim()) throw new Error(`${where}: no expr`);
        out.push({where, expr: substitute(t.expr, values, where)});
      }
    }
  };
  walk(dash.panels);
  for (const v of (dash.templating || {}).list || []) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    const where = `variable $${v.name}`;
    const m = q.match(/^\s*(?:label_values\((.*),\s*[$\w]+\s*\)|query_result\((.*)\))\s*$/s);
    if (!m) throw new Error(`${where}: not label_values(EXPR, label) or query_result(EXPR): ${q}`);
    out.push({where, expr: substitute(m[1] || m[2], values, where)});
  }
  return out;
}

// A Prometheus rules file holding each expression as a recording rule, for `promtool check
// rules` (which parses every expr and reports the ones that do not parse).
function asRecordingRules(queries) {
  const rules = queries.map((q, i) => ({record: `rdmanet:dashboard_query:${i}`, expr: q.expr}));
  return YAML.stringify({groups: [{name: 'dashboard', rules}]});
}

module.exports = {kNotYetOnMetrics, kDraOnly, kExternal, kTargetLabels, exposedNames, readsOf, metricNames,
  renderedRules, renderedDashboard, dashboardQueries, asRecordingRules};
