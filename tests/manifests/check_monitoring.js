#!/usr/bin/env node
// Checks the chart's alerts and dashboard (issue 24) in one `helm template` render with
// metrics.prometheusRule.enabled and metrics.dashboard.enabled:
//   node check_monitoring.js rules RENDER TESTS OUTDIR
//       writes OUTDIR/rules.yaml (the PrometheusRule's spec, for `promtool check rules` and
//       `promtool test rules` on TESTS) and, per alert, OUTDIR/never-<alert>/ with that alert
//       unable to fire (the tests must then fail); fails unless TESTS has, for every alert, a
//       case where it fires and one where it does not.
//   node check_monitoring.js dashboard RENDER OUTDIR
//       the dashboard's shape (ids, datasource, variables, the job/pod/port rows) and every
//       query parsed by `promtool check rules` (OUTDIR/queries.yaml).
//   node check_monitoring.js names RENDER METRICS_TEXT
//       every metric the rules and the dashboard read is served on /metrics (METRICS_TEXT, a
//       scrape of the daemon) or listed in monitoring.js (not yet on /metrics, or external),
//       and every label they select or group by is one that metric has.
'use strict';

const {execFileSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const YAML = require('yaml');
const m = require('./monitoring.js');

const [mode, render, ...rest] = process.argv.slice(2);
const errors = [];
const fail = (msg) => errors.push(msg);

function promtool(...args) {
  try {
    return execFileSync('promtool', args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
  } catch (e) {
    fail(`promtool ${args.join(' ')} failed:\n${e.stdout}${e.stderr}`);
    return null;
  }
}

function alertsOf(spec) {
  return spec.groups.flatMap((g) => g.rules).filter((r) => r.alert);
}

function checkRules(testsFile, outDir) {
  const spec = m.renderedRules(render);
  fs.mkdirSync(outDir, {recursive: true});
  fs.writeFileSync(path.join(outDir, 'rules.yaml'), YAML.stringify(spec));
  const tests = YAML.parse(fs.readFileSync(testsFile, 'utf8'));
  const alerts = alertsOf(spec).map((r) => r.alert);
  const fires = new Set();
  const quiet = new Set();
  for (const t of tests.tests) {
    for (const a of t.alert_rule_test || []) {
      if (!alerts.includes(a.alertname)) fail(`test "${t.name}" names no rendered alert: ${a.alertname}`);
      ((a.exp_alerts || []).length ? fires : quiet).add(a.alertname);
    }
  }
  for (const a of alerts) {
    if (!fires.has(a)) fail(`${a}: no test where it fires`);
    if (!quiet.has(a)) fail(`${a}: no test where it stays quiet`);
  }
  // Controls: each alert made unable to fire, for the caller to show the tests then fail.
  for (const a of alerts) {
    const broken = JSON.parse(JSON.stringify(spec));
    for (const r of alertsOf(broken)) if (r.alert === a) r.expr = 'vector(0) > 1';
    const dir = path.join(outDir, `never-${a}`);
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, 'rules.yaml'), YAML.stringify(broken));
  }
  console.log(`${alerts.length} alerts, each with a firing and a quiet test: ${alerts.join(' ')}`);
}

function checkDashboard(outDir) {
  const dash = m.renderedDashboard(render);
  if (!dash.uid || !dash.title) fail('dashboard lacks uid or title');
  const vars = (dash.templating || {}).list || [];
  if (!vars.some((v) => v.type === 'datasource' && v.name === 'datasource')) {
    fail('no $datasource variable (a dashboard bound to one data source does not import)');
  }
  const ids = new Set();
  const all = [];
  const walk = (panels) => {
    for (const p of panels || []) {
      all.push(p);
      walk(p.panels);
    }
  };
  walk(dash.panels);
  for (const p of all) {
    if (ids.has(p.id)) fail(`panel id ${p.id} twice`);
    ids.add(p.id);
    if (!p.gridPos) fail(`panel ${p.id} "${p.title}" has no gridPos`);
    if (p.type === 'row') continue;
    if (!(p.targets || []).length) fail(`panel ${p.id} "${p.title}" has no query`);
    for (const x of [p, ...(p.targets || [])]) {
      if (!x.datasource || x.datasource.uid !== '${datasource}') {
        fail(`panel ${p.id} "${p.title}": datasource is not \${datasource}`);
      }
    }
  }
  // Per job, per pod, per port: a row for each, and queries that select by them.
  const exprs = all.flatMap((p) => (p.targets || []).map((t) => t.expr)).join('\n');
  for (const [what, re] of [['job (kube_pod_labels selector)', /kube_pod_labels\{\$job_label=~"\$job"\}/],
    ['pod', /pod=~"\$pod"/], ['port', /netdev=~"\$netdev"/]]) {
    if (!re.test(exprs)) fail(`no panel selects by ${what}`);
  }
  for (const row of ['Job', 'Pod', 'Port']) {
    if (!all.some((p) => p.type === 'row' && p.title.startsWith(row))) fail(`no "${row}" row`);
  }
  let queries = [];
  try {
    queries = m.dashboardQueries(dash);
  } catch (e) {
    fail(e.message);
  }
  fs.mkdirSync(outDir, {recursive: true});
  // Control: promtool refuses a query that does not parse, in the file shape used below.
  const bad = path.join(outDir, 'control.yaml');
  fs.writeFileSync(bad, m.asRecordingRules([{expr: 'sum by (pod) (rate(x_total[5m])'}]));
  try {
    execFileSync('promtool', ['check', 'rules', bad], {stdio: 'ignore'});
    fail('promtool check rules accepted an unbalanced query: the check below proves nothing');
  } catch (e) {
    if (e.status !== 1) fail(`promtool on the control query: ${e.message}`);
  }
  const file = path.join(outDir, 'queries.yaml');
  fs.writeFileSync(file, m.asRecordingRules(queries));
  const out = promtool('check', 'rules', file);
  if (out !== null && !out.includes(`SUCCESS: ${queries.length} rules found`)) {
    fail(`promtool did not accept all ${queries.length} queries:\n${out}`);
  }
  console.log(`dashboard: ${all.length} panels, ${queries.length} queries parsed by promtool`);
}

function checkNames(metricsFile) {
  // The reader itself, on the shapes the rules and panels use.
  const probe = m.readsOf('sum by (namespace, pod) (rate(a_total{x="b c}", y=~"$v"}[5m] offset 1m)) ' +
    'and on (pod) b or topk(10, c) > bool 1e3 unless ignoring(le) d_bucket');
  const want = {metrics: ['a_total', 'b', 'c', 'd_bucket'],
    selectors: [{metric: 'a_total', labels: ['x', 'y']}], grouping: ['namespace', 'pod', 'le']};
  if (JSON.stringify(probe) !== JSON.stringify(want)) fail(`readsOf self-test: ${JSON.stringify(probe)}`);

  const exposed = m.exposedNames(fs.readFileSync(metricsFile, 'utf8'));
  if (![...exposed.keys()].some((n) => n.startsWith('rdmanet_'))) {
    fail(`${metricsFile} has no rdmanet_ series`);
  }
  for (const n of Object.keys(m.kNotYetOnMetrics)) {
    if (exposed.has(n)) {
      fail(`${n} is on /metrics now: remove it from kNotYetOnMetrics (tests/manifests/monitoring.js)`);
    }
  }
  // A metric's labels: from its samples on /metrics, else as agreed; null when unknown (a family
  // without samples in this scrape) or another exporter's.
  const labelsOf = (n) => {
    if (exposed.has(n)) return exposed.get(n).size ? exposed.get(n) : null;
    if (n in m.kNotYetOnMetrics) return new Set(m.kNotYetOnMetrics[n]);
    if (n in m.kDraOnly) return new Set(m.kDraOnly[n]);
    return null;
  };
  const uses = [];
  for (const r of alertsOf(m.renderedRules(render))) uses.push({where: `alert ${r.alert}`, expr: r.expr});
  for (const q of m.dashboardQueries(m.renderedDashboard(render))) {
    uses.push({where: `dashboard ${q.where}`, expr: q.expr});
  }
  const used = new Set();
  let labelChecks = 0;
  for (const u of uses) {
    const reads = m.readsOf(u.expr);
    for (const n of reads.metrics) {
      used.add(n);
      if (!exposed.has(n) && !(n in m.kNotYetOnMetrics) && !(n in m.kDraOnly) &&
          !(n in m.kExternal)) {
        fail(`${u.where}: ${n} is not on the daemon's /metrics`);
        continue;
      }
      const have = labelsOf(n);
      if (!have) continue;
      // Grouping labels must be on every metric the expression reads (the rules' and panels'
      // shape: one family, or families of one label set joined on shared labels).
      for (const l of reads.grouping) {
        ++labelChecks;
        if (!have.has(l) && !m.kTargetLabels.includes(l)) {
          fail(`${u.where}: ${n} has no label ${l} to group by`);
        }
      }
    }
    for (const sel of reads.selectors) {
      const have = labelsOf(sel.metric);
      if (!have) continue;
      for (const l of sel.labels) {
        ++labelChecks;
        if (!have.has(l) && !m.kTargetLabels.includes(l)) {
          fail(`${u.where}: ${sel.metric} has no label ${l}`);
        }
      }
    }
  }
  const pending = [...used].filter((n) => n in m.kNotYetOnMetrics);
  console.log(`${used.size} metric names in ${uses.length} expressions: ` +
    `${used.size - pending.length} served on /metrics or external, ${pending.length} not yet ` +
    `served (kNotYetOnMetrics); ${labelChecks} label uses checked`);
}

try {
  if (mode === 'rules') checkRules(rest[0], rest[1]);
  else if (mode === 'dashboard') checkDashboard(rest[0]);
  else if (mode === 'names') checkNames(rest[0]);
  else throw new Error(`mode ${mode}: rules, dashboard or names`);
} catch (e) {
  fail(e.stack || e.message);
}
if (errors.length) {
  for (const e of errors) console.error(`FAIL: ${e}`);
  process.exit(1);
}
