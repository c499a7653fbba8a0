/**
 * The stylesheet Postel's pages share: system fonts, no images, light and dark schemes, every
 * colour a CSS variable (so a surface can be themed by overriding them), and tables that become
 * stacked cards on a phone (each cell labelled by `data-label`).
 */
export const BASE_STYLESHEET = `:root {
  color-scheme: light dark;
  --bg: #f7f7f8; --fg: #1b1d21; --muted: #626a75; --line: #d9dce1; --card: #fff; --accent: #2453c7;
  --ok: #1a7f37; --wait: #8a6100; --warn: #b35900; --bad: #c62828;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #121417; --fg: #e6e8eb; --muted: #9aa3ad; --line: #2c3036; --card: #1b1e22; --accent: #7aa2ff;
    --ok: #4cc26b; --wait: #e0b341; --warn: #ff9b45; --bad: #ff6b6b; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
nav a { color: var(--muted); text-decoration: none; padding: .2rem 0; }
nav a[aria-current="page"] { color: var(--accent); border-bottom: 2px solid var(--accent); }
main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
h1 { font-size: 1.4rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
.mono, code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
/* Ids (msg_…, ep_…, webhook-ids) are read and copied whole: never broken mid-id; a table that needs the room scrolls. */
.id { white-space: nowrap; overflow-wrap: normal; }
.muted { color: var(--muted); font-size: .9em; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85em; color: var(--muted); font-weight: 600; }
tbody tr:last-child td { border-bottom: 0; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .85em; border: 1px solid currentColor; white-space: nowrap; }
.badge.ok { color: var(--ok); } .badge.wait { color: var(--wait); } .badge.warn { color: var(--warn); }
.badge.bad { color: var(--bad); } .badge.muted { color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .75rem 0; }
form.inline { display: inline; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem .75rem; align-items: end; margin-bottom: 1rem; }
.filters label { display: flex; flex-direction: column; font-size: .85em; color: var(--muted); }
input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--card); color: var(--fg); }
button { cursor: pointer; border-color: var(--accent); color: var(--accent); }
button.danger { border-color: var(--bad); color: var(--bad); }
.notice { padding: .5rem .75rem; border-left: 4px solid var(--ok); background: var(--card); }
.notice.warn { border-color: var(--warn); }
pre.json, pre.snippet { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: .5rem; margin: 0; max-height: 24rem; overflow: auto; white-space: pre-wrap; }
pre.snippet { max-height: 8rem; max-width: 28rem; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; min-width: 0; }
code.secret { display: inline-block; padding: .5rem; background: var(--card); border: 1px dashed var(--warn); user-select: all; }
.pager { margin: .75rem 0; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; } .skip:focus { left: 1rem; top: .5rem; background: var(--card); padding: .25rem .5rem; z-index: 1; }
@media (max-width: 640px) {
  main { padding: .75rem; }
  thead { display: none; }
  table, tbody, tr, td { display: block; width: 100%; }
  tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  td { border: 0; padding: .2rem .6rem; }
  td[data-label]::before { content: attr(data-label); display: block; color: var(--muted); font-size: .8em; }
  dl.fields { grid-template-columns: 1fr; }
  dl.fields dd { margin-bottom: .4rem; }
}
`;
