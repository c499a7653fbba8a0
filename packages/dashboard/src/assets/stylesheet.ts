import { BASE_STYLESHEET } from "@postel/web-kit";

/**
 * The dashboard's one stylesheet, served as `assets/dashboard.css`: the pages' shared one, the
 * live view's cards and charts, an endpoint's activity card and the finished lists' tabs.
 */
export const STYLESHEET = `${BASE_STYLESHEET}
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
.card h2 { margin: 0 0 .5rem; font-size: 1rem; }
.card p { margin: .25rem 0; }
.figure .label { display: block; color: var(--muted); font-size: .85em; }
.figure .value { font-size: 1.6rem; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: .75rem; margin-top: 1rem; }
figure.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; max-width: 480px; }
figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: .85em; margin-top: .25rem; }
.line { fill: none; stroke: var(--accent); stroke-width: 2; vector-effect: non-scaling-stroke; }
.bar-ok { fill: var(--ok); opacity: .6; } .bar-bad { fill: var(--bad); } .bar-none { fill: var(--line); }
.axis { fill: var(--muted); font-size: 10px; text-anchor: middle; }
.card.activity { margin-top: .75rem; }
.card.activity h3 { margin: 1rem 0 .5rem; font-size: .95rem; }
.card.activity .table-wrap { border: 0; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; margin: 0 0 .5rem; border-bottom: 1px solid var(--line); }
.tabs a { color: var(--muted); text-decoration: none; padding: .3rem 0; }
.tabs a[aria-current="page"] { color: var(--accent); border-bottom: 2px solid var(--accent); }
.tabs .count { font-weight: 600; }
`;
