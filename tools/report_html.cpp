#include "report_html.h"

namespace isatune::cli {

namespace {

const char* kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>isatune tuning report</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1em; margin: 0.2em 0; }
.cards { display: flex; flex-wrap: wrap; gap: 1em; }
.card { border: 1px solid #ddd; border-radius: 4px; padding: 0.6em; width: 460px; }
.chart { position: relative; height: 260px; width: 440px; }
.kind { font-size: 0.8em; padding: 0 0.4em; border-radius: 3px; color: #fff; }
.kind-emulated { background: #b35c00; } .kind-real { background: #1b6e2a; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
.note { color: #666; font-size: 0.85em; }
</style>
<script>
// Script errors are kept for #render-summary before anything else runs.
window.isatuneErrors = [];
window.addEventListener('error', function (e) { window.isatuneErrors.push(String(e.message)); });
</script>
<script>
)html";

// The page's own script: data in, charts and tables out. No plotting of its own: Chart.js draws everything.
const char* kBody = R"html(
</script>
</head>
<body>
<h1>isatune tuning report</h1>
<p class="note" id="source"></p>
<p class="note">Emulated times are the CDNA/PTX emulators' instruction-cost estimates, not measurements; they are
never drawn on an axis with real measurements, and each chart is labelled with its device kind.</p>
<h2>Runs</h2><div id="runs" class="cards"></div>
<h2>Best variant per problem</h2><div id="best"></div>
<h2>Roofline</h2><div id="rooflines" class="cards"></div>
<h2>Parameter importance</h2>
<p class="note">Share of the variance of log(time) each parameter explains on its own (between-value sum of squares
over the total), from the ok measurements of one problem.</p>
<div id="importance" class="cards"></div>
<div id="render-summary" hidden></div>
<script type="application/json" id="isatune-data">)html";

const char* kTail = R"html(</script>
<script>
(function () {
  const data = JSON.parse(document.getElementById('isatune-data').textContent);
  const charts = [];
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const kv = (o) => Object.entries(o || {}).map(([k, v]) => k + '=' + (typeof v === 'object' ? JSON.stringify(v) : v)).join(', ');
  const kindBadge = (kind) => el('span', {class: 'kind kind-' + kind}, kind);
  const deviceText = (d) => d.name + ' (' + d.isa + ')';

  function card(parent, title, device, id) {
    const c = el('div', {class: 'card'});
    const h = el('h3', {}, title + ' ');
    h.appendChild(kindBadge(device.kind));
    c.appendChild(h);
    c.appendChild(el('div', {class: 'note'}, deviceText(device)));
    const box = el('div', {class: 'chart'});
    const canvas = el('canvas', {id: id});
    box.appendChild(canvas);
    c.appendChild(box);
    parent.appendChild(c);
    return {card: c, canvas: canvas};
  }
  function chart(id, kind, canvas, config) {
    config.options = Object.assign({animation: false, responsive: true, maintainAspectRatio: false}, config.options || {});
    const ch = new Chart(canvas, config);
    charts.push({id: id, kind: kind, chart: ch});
    return ch;
  }
  const axis = (title, type) => ({type: type || 'linear', title: {display: true, text: title}});
  const timeAxis = (kind) => kind === 'emulated' ? 'emulated ms (estimate)' : 'measured ms';

  document.getElementById('source').textContent = 'Database ' + data.database + ', ' + data.measurements +
      ' measurements; generated ' + data.generated_at + '.';

  // Runs: best so far over evaluations and over time, the distribution of times, failures by status.
  const runs = document.getElementById('runs');
  data.runs.forEach((r, i) => {
    const what = r.generator + ' ' + kv(r.problem) + ' — run ' + (r.guid ? r.guid.slice(0, 8) : '(none)') +
        ' (' + r.strategy + ')';
    const okCurve = r.best_so_far.filter(p => p.best_ms !== null);
    let c = card(runs, 'Best so far by evaluation: ' + what, r.device, 'run' + i + '-evals');
    chart(c.canvas.id, 'best-so-far-evaluations', c.canvas, {type: 'line',
      data: {datasets: [{label: 'best ' + r.time_label, data: okCurve.map(p => ({x: p.evaluation, y: p.best_ms})),
                         stepped: true, borderColor: palette[0], pointRadius: 2}]},
      options: {parsing: false, scales: {x: axis('evaluation'), y: axis(timeAxis(r.device.kind), 'logarithmic')}}});
    c = card(runs, 'Best so far over time: ' + what, r.device, 'run' + i + '-time');
    chart(c.canvas.id, 'best-so-far-time', c.canvas, {type: 'line',
      data: {datasets: [{label: 'best ' + r.time_label,
                         data: okCurve.filter(p => p.seconds !== null).map(p => ({x: p.seconds, y: p.best_ms})),
                         stepped: true, borderColor: palette[1], pointRadius: 2}]},
      options: {parsing: false, scales: {x: axis('seconds since the run started'),
                                         y: axis(timeAxis(r.device.kind), 'logarithmic')}}});
    c = card(runs, 'Distribution of times: ' + what, r.device, 'run' + i + '-hist');
    const h = r.histogram;
    chart(c.canvas.id, 'distribution', c.canvas, {type: 'bar',
      data: {labels: h.lo_ms.map((lo, b) => lo.toPrecision(3) + '–' + h.hi_ms[b].toPrecision(3)),
             datasets: [{label: 'ok variants', data: h.counts, backgroundColor: palette[2]}]},
      options: {scales: {x: axis(timeAxis(r.device.kind), 'category'), y: axis('variants')}}});
    c = card(runs, 'Evaluations by status: ' + what, r.device, 'run' + i + '-status');
    chart(c.canvas.id, 'status', c.canvas, {type: 'bar',
      data: {labels: data.statuses, datasets: [{label: 'evaluations', data: data.statuses.map(s => r.by_status[s] || 0),
             backgroundColor: data.statuses.map(s => s === 'ok' ? palette[2] : palette[1])}]},
      options: {scales: {x: axis('status', 'category'), y: axis('evaluations')}}});
  });

  // Best variants: one table per generator, device and device kind.
  const bestDiv = document.getElementById('best');
  const groups = {};
  data.best.forEach(b => {
    const key = b.generator + '|' + deviceText(b.device) + '|' + b.device.kind;
    (groups[key] = groups[key] || []).push(b);
  });
  Object.values(groups).forEach(rows => {
    const h = el('h3', {}, rows[0].generator + ' on ' + deviceText(rows[0].device) + ' ');
    h.appendChild(kindBadge(rows[0].device.kind));
    bestDiv.appendChild(h);
    const t = el('table', {class: 'best-table'});
    const head = el('tr');
    ['signature', 'problem', rows[0].time_label, 'parameters', 'resources', 'occupancy', 'TFLOP/s', 'kernel'].forEach(
        x => head.appendChild(el('th', {}, x)));
    t.appendChild(head);
    rows.forEach(b => {
      const tr = el('tr');
      [kv(b.signature), kv(b.problem), b.median_ms.toPrecision(4), kv(b.parameters), kv(b.resources),
       kv(b.occupancy), b.tflops !== undefined ? b.tflops.toPrecision(3) : '', b.kernel + (b.note ? ' (' + b.note + ')' : '')]
          .forEach(x => tr.appendChild(el('td', {}, x)));
      t.appendChild(tr);
    });
    bestDiv.appendChild(t);
  });

  // Rooflines: each variant's FLOP/s against its intensity, under the device's compute and memory peaks.
  const roofDiv = document.getElementById('rooflines');
  data.rooflines.forEach((r, i) => {
    const label = r.device.kind === 'emulated' ? 'TFLOP/s (from emulated times)' : 'TFLOP/s (measured)';
    const c = card(roofDiv, 'Roofline: ' + r.generator + ' ' + kv(r.signature), r.device, 'roofline' + i);
    const xs = r.points.map(p => p.intensity);
    // Wide enough to show the ridge point, where the memory roof meets the compute roof.
    const ridgeAt = r.peak_tflops && r.peak_tbps ? r.peak_tflops / r.peak_tbps : 0;
    const lo = Math.min(...xs) / 10, hi = Math.max(Math.max(...xs) * 10, ridgeAt * 4);
    const datasets = [
      {label: 'variants', data: r.points.filter(p => !p.best).map(p => ({x: p.intensity, y: p.tflops})),
       backgroundColor: palette[0], pointRadius: 3},
      {label: 'best per problem', data: r.points.filter(p => p.best).map(p => ({x: p.intensity, y: p.tflops})),
       backgroundColor: palette[1], pointRadius: 5}];
    if (r.peak_tflops && r.peak_tbps) {
      const roof = [lo, Math.min(Math.max(ridgeAt, lo), hi), hi].map(x => ({x: x, y: Math.min(r.peak_tflops, x * r.peak_tbps)}));
      datasets.push({label: 'peaks of ' + r.peaks_of + ' (' + r.peak_tflops + ' TFLOP/s, ' + r.peak_tbps + ' TB/s)',
                     data: roof, type: 'line', borderColor: '#555', pointRadius: 0, showLine: true});
    }
    chart(c.canvas.id, 'roofline', c.canvas, {type: 'scatter', data: {datasets: datasets},
      options: {parsing: false, scales: {x: axis('arithmetic intensity (FLOP/byte)', 'logarithmic'),
                                         y: axis(label, 'logarithmic')}}});
    if (r.note) c.card.appendChild(el('div', {class: 'note'}, r.note));
  });

  // Parameter importance per problem.
  const impDiv = document.getElementById('importance');
  data.importance.forEach((m, i) => {
    const c = card(impDiv, 'Importance: ' + m.generator + ' ' + kv(m.problem) + ' (' + m.measurements + ' ok)',
                   m.device, 'importance' + i);
    chart(c.canvas.id, 'importance', c.canvas, {type: 'bar',
      data: {labels: m.parameters.map(p => p.parameter),
             datasets: [{label: 'variance of log(time) explained', data: m.parameters.map(p => p.variance_explained),
                         backgroundColor: palette[3]}]},
      options: {indexAxis: 'y', scales: {x: Object.assign(axis('share of variance'), {min: 0, max: 1}), y: axis('parameter', 'category')}}});
  });

  // What was drawn, for people and for the headless browser test.
  const summary = document.getElementById('render-summary');
  let points = 0, empty = 0;
  const list = el('ul');
  charts.forEach(c => {
    let n = 0;
    // Points Chart.js laid out inside the plot area (a point at NaN or off the axes is not drawn).
    const area = c.chart.chartArea;
    c.chart.data.datasets.forEach((d, k) => {
      c.chart.getDatasetMeta(k).data.forEach(e => {
        if (isFinite(e.x) && isFinite(e.y) && e.x >= area.left - 1 && e.x <= area.right + 1 && e.y >= area.top - 1 &&
            e.y <= area.bottom + 1) n++;
      });
    });
    points += n;
    if (n === 0) empty++;
    list.appendChild(el('li', {'data-chart': c.id, 'data-kind': c.kind, 'data-points': String(n)}, c.id + ': ' + n + ' points'));
  });
  summary.appendChild(list);
  summary.setAttribute('data-charts', String(charts.length));
  summary.setAttribute('data-points', String(points));
  summary.setAttribute('data-empty-charts', String(empty));
  summary.setAttribute('data-errors', String(window.isatuneErrors.length));
  summary.setAttribute('data-error-text', window.isatuneErrors.join(' | '));
  summary.setAttribute('data-done', '1');
})();
</script>
</body>
</html>
)html";

// JSON inside <script>: '<' as \u003c so that no "</script>" or "<!--" in a string ends the element early.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

} // namespace

std::string default_chartjs_path() { return "/usr/share/javascript/chart.js/chart.min.js"; }

std::string report_html(const nlohmann::json& data, const std::string& chartjs) {
  const std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::string(kHead) + chartjs + kBody + script_safe(json) + kTail;
}

} // namespace isatune::cli
