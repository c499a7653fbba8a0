/**
 * The live view's only script, served as `assets/live.js` (same origin, so the CSP's
 * `script-src 'self'` allows it; nothing inline). It polls `live.json` every 2 s and draws three
 * sparklines into the SVGs the server rendered. It writes text with `textContent` and numbers into
 * SVG attributes, never markup. Kept as a string so any bundler or runtime serves it unchanged.
 */
export const LIVE_SCRIPT = `"use strict";
(function () {
  var root = document.getElementById("live");
  if (!root) return;
  var source = root.getAttribute("data-source");
  var since = Number(root.getAttribute("data-at"));
  var keep = 150;
  var series = { throughput: [], latency: [], backlog: [] };
  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = String(value);
  }
  function push(list, value) {
    list.push(value);
    if (list.length > keep) list.shift();
  }
  function draw(id, values) {
    var svg = document.getElementById(id);
    if (!svg) return;
    var line = svg.querySelector("polyline");
    var max = Math.max.apply(null, values.concat([1]));
    var step = values.length > 1 ? 300 / (keep - 1) : 0;
    var start = 300 - step * (values.length - 1);
    line.setAttribute("points", values.map(function (v, i) {
      return (start + i * step).toFixed(1) + "," + (78 - (v / max) * 74).toFixed(1);
    }).join(" "));
    var last = values[values.length - 1];
    text(id + "-value", last === undefined ? "—" : Math.round(last * 10) / 10);
  }
  function percent(rate) {
    return rate === null ? "—" : Math.round(rate * 100) + "%";
  }
  function poll() {
    fetch(source + "?since=" + since, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        var seconds = Math.max(1, (data.at - data.sample.since) / 1000);
        since = data.at;
        push(series.throughput, data.sample.count / seconds);
        push(series.latency, data.sample.p95 === null ? 0 : data.sample.p95);
        push(series.backlog, data.backlog.due);
        draw("chart-throughput", series.throughput);
        draw("chart-latency", series.latency);
        draw("chart-backlog", series.backlog);
        text("backlog-due", data.backlog.due);
        text("backlog-in-flight", data.backlog.inFlight);
        text("backlog-scheduled", data.backlog.scheduled);
        text("backlog-held", data.backlog.held);
        text("backlog-unfanned", data.backlog.unfanned);
        text("dead-letters", data.deadLetters);
        text("window-attempts", data.window.total);
        text("window-failure-rate", percent(data.window.failureRate));
        text("live-status", "updated " + new Date(data.at).toISOString().slice(11, 19) + "Z");
        root.setAttribute("data-polls", String(Number(root.getAttribute("data-polls") || "0") + 1));
      })
      .catch(function () {
        text("live-status", "cannot reach the server; retrying");
      })
      .then(function () {
        setTimeout(poll, 2000);
      });
  }
  poll();
})();
`;
