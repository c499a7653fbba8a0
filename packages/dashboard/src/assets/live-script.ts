/**
 * The live view's only script, served as `assets/live.js` (same origin, so the CSP's
 * `script-src 'self'` allows it; nothing inline). It polls `live.json` every 2 s, redraws the
 * throughput and failure charts from its timeline (the last 15 minutes per 10 s, the bucket still
 * filling left out, with the server's arithmetic: see `linePoints`), adds a point to the backlog
 * chart, and rebuilds the failing endpoints' rows. It writes text with `textContent`, numbers into
 * SVG attributes and builds rows with DOM methods, never markup. Kept as a string so any bundler or
 * runtime serves it unchanged.
 */
export const LIVE_SCRIPT = `"use strict";
(function () {
  var root = document.getElementById("live");
  if (!root) return;
  var source = root.getAttribute("data-source");
  var keep = 150;
  var backlog = [];
  var tones = { active: "ok", "circuit-open": "warn", disabled: "bad" };
  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = String(value);
  }
  function round(value) {
    return String(Math.round(value * 10) / 10);
  }
  function percent(rate) {
    return rate === null ? "—" : (rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0) + "%";
  }
  function atLeast(n, cap) {
    return cap !== null && n >= cap ? n + "+" : String(n);
  }
  function draw(id, values, slots) {
    var svg = document.getElementById(id);
    if (!svg) return;
    var peak = Math.max.apply(null, [0].concat(values));
    var max = peak || 1;
    var step = slots > 1 ? 300 / (slots - 1) : 0;
    var start = 300 - step * (values.length - 1);
    svg.querySelector("polyline").setAttribute("points", values.map(function (v, i) {
      return (start + i * step).toFixed(1) + "," + (78 - (v / max) * 74).toFixed(1);
    }).join(" "));
    var last = values[values.length - 1];
    text(id + "-value", last === undefined ? "—" : round(last));
    text(id + "-peak", round(peak));
  }
  function cell(row, label, content) {
    var td = document.createElement("td");
    td.setAttribute("data-label", label);
    if (typeof content === "string") td.textContent = content;
    else content.forEach(function (node) { td.appendChild(node); });
    row.appendChild(td);
  }
  function element(tag, className, value) {
    var el = document.createElement(tag);
    el.className = className;
    el.textContent = value;
    return el;
  }
  function rank(failing, cap) {
    var body = document.getElementById("failing-rows");
    if (!body) return;
    var rows = failing.map(function (e) {
      var row = document.createElement("tr");
      var link = element("a", "mono", e.url);
      link.setAttribute("href", e.path);
      cell(row, "Endpoint", e.description ? [link, element("div", "muted", e.description)] : [link]);
      cell(row, "State", [element("span", "badge " + (tones[e.state] || "muted"), e.state)]);
      cell(row, "Failures", String(e.failures));
      cell(row, "Failed", percent(e.failureRate));
      cell(row, "Attempts", String(e.attempts));
      cell(row, "Due", atLeast(e.due, cap));
      cell(row, "Scheduled", atLeast(e.scheduled, cap));
      return row;
    });
    if (rows.length === 0) {
      var none = document.createElement("tr");
      var td = element("td", "", body.getAttribute("data-empty") || "");
      td.setAttribute("colspan", "7");
      none.appendChild(td);
      rows.push(none);
    }
    body.replaceChildren.apply(body, rows);
  }
  function poll() {
    fetch(source, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        if (data.timeline) {
          var seconds = data.timeline.bucketMs / 1000;
          var complete = data.timeline.points.slice(0, -1);
          draw("chart-throughput", complete.map(function (p) { return p.attempts / seconds; }), complete.length);
          draw("chart-failures", complete.map(function (p) { return p.failures / seconds; }), complete.length);
        }
        backlog.push(data.backlog.due);
        if (backlog.length > keep) backlog.shift();
        draw("chart-backlog", backlog, keep);
        rank(data.failing, data.countCap);
        text("backlog-due", data.backlog.due);
        text("backlog-in-flight", data.backlog.inFlight);
        text("backlog-scheduled", data.backlog.scheduled);
        text("backlog-held", data.backlog.held);
        text("backlog-unfanned", data.backlog.unfanned);
        text("dead-letters", atLeast(data.deadLetters, data.countCap));
        text("failed", atLeast(data.failed, data.countCap));
        if (data.ordering) {
          text("ordering-waiting", atLeast(data.ordering.waiting, data.countCap));
          text("held-keys", atLeast(data.ordering.heldKeys, data.ordering.heldKeysCap));
        }
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
