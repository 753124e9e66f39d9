/**
 * The dashboard's only static files: one stylesheet and one small script, served by the service itself
 * (no build step, no CDN). Pages work without the script; it adds copy buttons and busy states.
 */
export const DASHBOARD_CSS = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f5f6f8; --card: #fff; --accent: #1d4ed8;
  --accent-fg: #fff; --danger: #b91c1c; --danger-bg: #fee2e2; --ok: #166534; --ok-bg: #dcfce7; --warn-bg: #fef3c7; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible {
  outline: 3px solid #f59e0b; outline-offset: 2px; }
.skip-link { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 10; }
.skip-link:focus { left: .5rem; top: .5rem; }
header.top { background: #111827; color: #fff; }
header.top .bar { display: flex; align-items: center; gap: 1rem; max-width: 80rem; margin: 0 auto; padding: .6rem 1rem; flex-wrap: wrap; }
header.top .brand { font-weight: 700; color: #fff; text-decoration: none; margin-right: auto; }
header.top .who { color: #cbd5e1; font-size: .9rem; overflow-wrap: anywhere; }
header.top form { margin: 0; }
header.top button { background: transparent; color: #fff; border-color: #6b7280; }
nav.main { background: #1f2937; overflow-x: auto; }
nav.main ul { display: flex; gap: .25rem; list-style: none; margin: 0 auto; padding: 0 .5rem; max-width: 80rem; }
nav.main a { display: block; padding: .6rem .8rem; color: #e5e7eb; text-decoration: none; white-space: nowrap; border-bottom: 3px solid transparent; }
nav.main a[aria-current="page"] { color: #fff; border-bottom-color: #60a5fa; font-weight: 600; }
main { max-width: 80rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin-bottom: 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 22rem), 1fr)); }
/* A grid or flex item may shrink below its content's width, so that a wide table inside it scrolls in its
   wrapper instead of widening the page. */
.grid > *, .actions > *, .card { min-width: 0; }
.table-wrap { overflow-x: auto; max-width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f0f2f6; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
dl.facts dd.lines { white-space: pre-line; }
.logo-preview { margin: 0 0 1rem; }
.logo-preview img { max-width: 100%; height: auto; border: 1px solid var(--border, #ccc); }
form.stack { display: grid; gap: .75rem; max-width: 36rem; }
form.stack.wide { max-width: 64rem; }
.usage-row { display: grid; gap: .5rem .75rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 11rem), 1fr)); padding: .5rem 0; border-bottom: 1px solid var(--line); }
.usage-row:last-child { border-bottom: 0; }
.usage-row > div { min-width: 0; }
fieldset label[for] { display: block; margin-right: 0; min-height: 0; font-weight: 600; }
.usage-row input { width: 100%; min-width: 0; }
form.inline { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; }
form.inline .field { display: grid; gap: .25rem; }
label { font-weight: 600; }
.hint { color: var(--muted); font-size: .875rem; font-weight: 400; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=search], input[type=date],
input[type=number], input[type=datetime-local], select, textarea {
  width: 100%; padding: .55rem .6rem; border: 1px solid #9aa3b2; border-radius: 6px; font: inherit; background: #fff; color: inherit; min-height: 2.75rem; }
form.inline input, form.inline select { width: auto; min-width: 10rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; min-width: 0; }
fieldset label { font-weight: 400; display: inline-flex; gap: .35rem; align-items: center; margin-right: 1rem; min-height: 2rem; }
button, .button { display: inline-flex; align-items: center; justify-content: center; gap: .4rem; min-height: 2.75rem; padding: .5rem 1rem;
  font: inherit; font-weight: 600; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg);
  cursor: pointer; text-decoration: none; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button[aria-busy="true"], form[aria-busy="true"] button { opacity: .6; cursor: progress; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .75rem 0; }
.field-error { color: var(--danger); font-size: .875rem; margin: .25rem 0 0; }
[aria-invalid="true"] { border-color: var(--danger); outline: 1px solid var(--danger); }
.alert { padding: .75rem 1rem; border-radius: 6px; margin-bottom: 1rem; }
.alert.error { background: var(--danger-bg); color: var(--danger); }
.alert.ok { background: var(--ok-bg); color: var(--ok); }
.alert.warn { background: var(--warn-bg); }
.alert.reading-notes ul { margin: 0; padding-left: 1.25rem; }
.source { color: var(--muted); font-size: .875rem; margin: .25rem 0 0; overflow-wrap: anywhere; }
.check { font-size: .875rem; margin: .25rem 0 0; }
.low-confidence { border-left: 4px solid #b45309; padding-left: .5rem; background: var(--warn-bg); border-radius: 4px; }
.kept-rule { border-top: 1px solid var(--line); padding-top: .5rem; margin-top: .5rem; }
.empty { text-align: center; color: var(--muted); padding: 2rem 1rem; background: var(--card); border: 1px dashed #b6bdca; border-radius: 8px; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600; background: #e5e7eb; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.bad { background: var(--danger-bg); color: var(--danger); }
.badge.warn { background: var(--warn-bg); }
.secret { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; background: #111827; color: #f9fafb; padding: .75rem; border-radius: 6px; }
.secret code { flex: 1 1 16rem; }
.pager { display: flex; gap: .75rem; justify-content: space-between; margin: .75rem 0; }
.chart svg { width: 100%; height: auto; display: block; }
.chart .bar { fill: #3b82f6; }
.chart .axis { stroke: #9aa3b2; }
.chart text { font-size: 11px; fill: var(--muted); }
.diff-add { background: var(--ok-bg); }
.diff-del { background: var(--danger-bg); text-decoration: line-through; }
.diff-chg { background: var(--warn-bg); }
pre.payload { background: #0f172a; color: #e2e8f0; padding: .75rem; border-radius: 6px; overflow-x: auto; font-size: .85rem; max-height: 24rem; }
.auth { max-width: 26rem; margin: 3rem auto; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0,0,0,0); white-space: nowrap; border: 0; }
@media (max-width: 40rem) {
  header.top .bar { gap: .25rem .75rem; }
  header.top .who { order: 3; flex-basis: 100%; font-size: .8rem; }
  nav.main ul { flex-wrap: wrap; padding: .25rem .5rem; }
  nav.main a { padding: .45rem .6rem; }
  main { padding: .75rem; }
  h1 { font-size: 1.3rem; }
  th, td { padding: .45rem .5rem; }
  form.inline { display: grid; }
  form.inline input, form.inline select { width: 100%; }
  .auth { margin: 1rem auto; }
}
/* Contracts: the pricing version history as a list of cards, each change marked in words and in colour. */
ol.versions { list-style: none; padding: 0; margin: 0; }
ul.diff-list, ul.diff-fields { list-style: none; padding: 0; margin: .5rem 0 0; display: grid; gap: .35rem; }
ul.diff-list > li { padding: .4rem .6rem; border-radius: 6px; overflow-wrap: anywhere; }
ul.diff-list > li.diff-del { text-decoration: none; }
ul.diff-fields { margin-left: 1rem; }
.diff-kind { display: inline-block; min-width: 5.5rem; font-weight: 700; }
ul.diff-fields del { text-decoration: line-through; }
ul.diff-fields ins { text-decoration: none; font-weight: 600; }
/* Overview: the month's totals per currency, the get-started steps, the events chart. */
ul.totals { list-style: none; padding: 0; margin: .5rem 0 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; }
ol.steps { margin: 0; padding-left: 1.25rem; }
ol.steps li { margin: .4rem 0; }
.chart { padding: .5rem; }
details > summary { cursor: pointer; min-height: 2rem; }
/* Tables scroll sideways inside their own wrapper, so ids, codes, links, dates and badges keep to one line there
   (code's overflow-wrap: anywhere otherwise squeezes a column to a letter or two on a phone). */
.table-wrap code, .table-wrap a, .table-wrap time, .table-wrap .badge { white-space: nowrap; overflow-wrap: normal; }
/* A card that opens with its heading: no heading margin stacked on the card's padding. */
.card > h2:first-child, .card > h3:first-child { margin-top: 0; }
/* The events chart: not taller than a screenful on a desktop; axis labels still readable at 390 px. */
.chart svg { max-height: 18rem; }
@media (max-width: 40rem) {
  .table-wrap th, .table-wrap td { white-space: nowrap; }
  .chart text { font-size: 20px; }
}
/* A figure's note on a line of its own under it (a draft's projected total, what it holds so far). */
.figure-note { display: block; white-space: normal; }
/* Stacked tables (dataTable's stacked option): on a narrow screen every row is a card of "header: value" lines,
   the header from the cell's data-label, so that nothing hides behind a sideways scroll. A wide screen shows the
   table; its ids and codes may wrap there, so that it fits its column rather than scrolling. */
.table-wrap.stacked code, .table-wrap.stacked .mono, .table-wrap.stacked a { white-space: normal; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  .table-wrap.stacked { overflow-x: visible; border: 0; background: transparent; border-radius: 0; }
  table.stacked thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0,0,0,0); }
  table.stacked, table.stacked tbody, table.stacked tr { display: block; width: 100%; }
  table.stacked tr { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin-bottom: .5rem; padding: .35rem 0; }
  table.stacked td { display: block; position: relative; border: 0; padding: .2rem .75rem .2rem 9.5rem;
    min-height: 1.9rem; white-space: normal; overflow-wrap: anywhere; }
  table.stacked td::before { content: attr(data-label); position: absolute; left: .75rem; width: 8.25rem;
    color: var(--muted); font-weight: 600; overflow-wrap: normal; }
  table.stacked td.num { text-align: left; white-space: nowrap; }
  table.stacked td:empty { display: none; }
  .table-wrap.stacked time, .table-wrap.stacked .badge { white-space: normal; overflow-wrap: anywhere; }
}
/* The hosted invoice page (/i/{token}): the invoice as a customer reads it, its line table always inside its card
   (no sideways scrolling at 390 px): descriptions and the quantity and unit price columns wrap, amounts never. */
main.hosted { max-width: 52rem; margin: 2rem auto; }
.hosted .seller { display: flex; justify-content: space-between; align-items: flex-start; gap: 1rem; flex-wrap: wrap; }
.hosted .seller p { margin: 0; overflow-wrap: anywhere; }
.hosted .seller img { max-width: 150px; max-height: 56px; height: auto; }
.hosted .banner { background: var(--danger-bg, #fde8e8); padding: .5rem .75rem; border-radius: 6px; font-weight: 600; }
.hosted .parties { display: flex; flex-wrap: wrap; gap: .5rem 2rem; }
.hosted .parties section { min-width: 0; overflow-wrap: anywhere; }
.hosted .lines-box { max-width: 100%; overflow-x: hidden; }
.hosted table.lines { table-layout: auto; font-size: .9rem; }
.hosted table.lines td, .hosted table.lines th { padding: .35rem .4rem; vertical-align: top; }
.hosted table.lines td:first-child { overflow-wrap: anywhere; }
.hosted table.lines td.sub { padding-left: 1.25rem; color: var(--muted); font-size: .85rem; }
.hosted table.lines td.num, .hosted table.lines th.num { white-space: normal; overflow-wrap: break-word; }
.hosted table.lines td.amount { white-space: nowrap; overflow-wrap: normal; }
.hosted dl.totals { display: grid; grid-template-columns: 1fr max-content; gap: .3rem 1rem; margin: 1rem 0 0 auto; max-width: 32rem; }
.hosted dl.totals dt { overflow-wrap: anywhere; }
.hosted dl.totals dd { margin: 0; text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.hosted dl.totals .due { font-weight: 700; border-top: 1px solid var(--line); padding-top: .3rem; }
.hosted .instructions { white-space: pre-line; overflow-wrap: anywhere; }
.hosted .narrow-only { display: none; }
@media (max-width: 40rem) {
  main.hosted { margin: .5rem auto; padding: .5rem; }
  .hosted table.lines .wide-only { display: none; }
  .hosted table.lines .narrow-only { display: block; color: var(--muted); font-size: .8rem; }
  .hosted table.lines { font-size: .8rem; }
  .hosted table.lines td, .hosted table.lines th { padding: .3rem .25rem; }
}
`;

export const DASHBOARD_JS = `
(function () {
  "use strict";
  var live = document.getElementById("live-region");
  function announce(text) { if (live) { live.textContent = ""; setTimeout(function () { live.textContent = text; }, 50); } }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent || "";
    var done = function () { button.textContent = "Copied"; announce("Copied to the clipboard"); };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () { announce("Copy failed: select the text and copy it"); });
    } else {
      var range = document.createRange(); range.selectNodeContents(source);
      var selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
      announce("Text selected: press Ctrl+C to copy");
    }
  });
  // Loading state: a submitted form says it is busy and is not sent twice.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.getAttribute("aria-busy") === "true") { event.preventDefault(); return; }
    form.setAttribute("aria-busy", "true");
    var submitter = event.submitter;
    if (submitter && submitter.dataset) { submitter.dataset.label = submitter.textContent; submitter.textContent = "Working…"; }
    announce("Working…");
  });
  // Coming back through the history cache: the form is usable again.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[aria-busy=true]").forEach(function (form) {
      form.removeAttribute("aria-busy");
      form.querySelectorAll("[data-label]").forEach(function (b) { b.textContent = b.dataset.label; });
    });
  });
})();
`;
