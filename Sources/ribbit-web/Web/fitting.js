"use strict";
// The Fitting screen: the form as JSON to /api/fitting/targets on every change (the
// server runs the rule), the trial and its Keep / Revert through the daemon, and the QR
// code made and signed on the server (the passphrase goes once, in that POST).
const freqs = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000];
const ears = ["right", "left"];
let sequence = 0, timer = null, keys = [], trialBusy = false, madeURLs = [];

function box(ear, f) { return $("t-" + ear + "-" + f); }

function form() {
  const body = { rule: $("f-rule").value, name: $("f-name").value, env: $("f-env").value,
    audiologist: $("f-audiologist").value, patient: $("f-patient").value, left: {}, right: {} };
  for (const ear of ears) for (const f of freqs) {
    const input = box(ear, f);
    if (input.validity.badInput) throw new Error((ear === "right" ? "Right" : "Left") + " ear, " + f + " Hz: type a number of dB HL");
    body[ear][f] = input.value.trim() === "" ? null : Number(input.value);
  }
  return body;
}

// Frequency on a log axis, 250 to 8000 Hz (5 octaves), in viewBox units. The audiogram's
// grid is square by convention (an octave as wide as 20 dB): -10 to 120 dB HL is 6.5 octaves tall.
const plot = { left: 44, right: 308, top: 26, bottom: 222 };  // the gains, in a 320 x 250 box
const audiogramPlot = { left: 44, right: 308, top: 26, bottom: 26 + (308 - 44) / 5 * 6.5 };  // in 320 x 400
function xOf(f) { return plot.left + (plot.right - plot.left) * Math.log(f / 250) / Math.log(32); }

function axes(chart, area, lo, hi, ticks, downward, unit) {
  for (const n of chart.querySelectorAll(":not(title)")) n.remove();
  const { left, right, top, bottom } = area;
  const yOf = (v) => downward ? top + (bottom - top) * (v - lo) / (hi - lo) : bottom - (bottom - top) * (v - lo) / (hi - lo);
  for (const v of ticks) {
    chart.append(svg("line", { x1: left, x2: right, y1: yOf(v), y2: yOf(v), class: "rule" }));
    chart.append(svg("text", { x: left - 6, y: yOf(v) + 5, "text-anchor": "end", class: "tick", text: String(v) }));
  }
  for (const f of [250, 500, 1000, 2000, 4000, 8000]) {
    chart.append(svg("line", { x1: xOf(f), x2: xOf(f), y1: top, y2: bottom, class: "rule" }));
    chart.append(svg("text", { x: xOf(f), y: bottom + 20, "text-anchor": "middle", class: "tick", text: f >= 1000 ? f / 1000 + "k" : String(f) }));
  }
  chart.append(svg("text", { x: 4, y: 14, class: "tick", text: unit }));
  return yOf;
}

function line(chart, points, ear, yOf) {
  if (points.length > 1) {
    chart.append(svg("polyline", { points: points.map(([f, v]) => xOf(f) + "," + yOf(v)).join(" "), class: "trace " + ear }));
  }
}

function drawAudiogram(values) {
  const chart = $("audiogram-chart");
  const yOf = axes(chart, audiogramPlot, -10, 120, [-10, 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120], true, "dB HL");
  for (const ear of ears) {
    const points = freqs.filter((f) => values[ear][f] !== null && Number.isFinite(values[ear][f])).map((f) => [f, values[ear][f]]);
    line(chart, points, ear, yOf);
    for (const [f, v] of points) {
      const x = xOf(f), y = yOf(v);
      if (ear === "right") chart.append(svg("circle", { cx: x, cy: y, r: 6, class: "mark right" }));
      else chart.append(svg("path", { d: `M${x - 6},${y - 6}L${x + 6},${y + 6}M${x + 6},${y - 6}L${x - 6},${y + 6}`, class: "mark left" }));
    }
  }
}

function drawTargets(targets) {
  const body = $("targets-body");
  body.replaceChildren();
  // Soft, average and loud speech per band, as the fitting plays them.
  const bands = targets ? ["right", "left"].filter((ear) => targets.bands[ear]) : [];
  // Each table in a box that scrolls sideways when it is wider than its column (a keyboard
  // reaches the box), as the Load and Details screens have them.
  $("bands").replaceChildren(...bands.map((ear) => el("div", { class: "band-table", tabindex: "0", role: "group",
    "aria-label": (ear === "right" ? "Right" : "Left") + " ear per band" }, bandTable(targets.bands[ear], ear))));
  $("bands-card").hidden = bands.length === 0;
  const chart = $("gain-chart");
  // Up to the highest target (the rule's wish above ribbit's maximum shows too), 50 at least.
  const highest = targets ? Math.max(50, ...ears.flatMap((ear) => Object.values(targets[ear] || {}).filter((v) => v !== null))) : 50;
  const top = Math.min(100, Math.ceil(highest / 10) * 10);
  const yOf = axes(chart, plot, 0, top, Array.from({ length: top / 10 + 1 }, (_, i) => 10 * i), false, "dB");
  if (!targets) return;
  // A cell says the rule's target, and what plays where that is less (marked "capped").
  const short = (ear, f) => targets[ear] && targets[ear][f] !== null && targets.played[ear][f] < targets[ear][f] - 0.05;
  const cell = (ear, f) => {
    if (!targets[ear]) return el("td", { text: "–" });
    if (targets[ear][f] === null) return el("td", { text: "off" });
    if (!short(ear, f)) return el("td", { text: signed(targets[ear][f]) });
    return el("td", { class: "capped", title: "ribbit plays " + signed(targets.played[ear][f]) + " dB" },
      signed(targets[ear][f]), el("span", { class: "plays", text: " → " + signed(targets.played[ear][f]) }));
  };
  for (const f of freqs) body.append(el("tr", {}, el("th", { scope: "row", text: String(f) }), cell("right", f), cell("left", f)));
  for (const ear of ears) {
    if (!targets[ear]) continue;
    const heard = freqs.filter((f) => targets[ear][f] !== null);
    const wish = heard.map((f) => [f, Math.max(0, Math.min(top, targets[ear][f]))]);
    const plays = heard.map((f) => [f, Math.max(0, Math.min(top, targets.played[ear][f]))]);
    if (heard.some((f) => short(ear, f))) {
      if (wish.length > 1) chart.append(svg("polyline", { points: wish.map(([f, v]) => xOf(f) + "," + yOf(v)).join(" "), class: "trace wish " + ear }));
      for (const f of heard.filter((f) => short(ear, f))) {
        chart.append(svg("line", { x1: xOf(f), x2: xOf(f), y1: yOf(Math.min(top, targets[ear][f])), y2: yOf(targets.played[ear][f]), class: "gap " + ear }));
      }
    }
    line(chart, plays, ear, yOf);
    for (const [f, v] of plays) chart.append(svg("circle", { cx: xOf(f), cy: yOf(v), r: 4, class: "dot " + ear }));
  }
}

async function update() {
  const mine = ++sequence;
  let body;
  try { body = form(); } catch (error) { $("targets-state").textContent = error.message; drawTargets(null); return; }
  drawAudiogram(body);
  try {
    const response = await postJSON("/api/fitting/targets", body);
    if (mine !== sequence) return;  // a newer request is on its way
    if (!response.ok) {
      $("targets-state").textContent = (await response.text()).trim();
      drawTargets(null);
      return;
    }
    const targets = await response.json();
    $("targets-state").textContent = "By " + $("f-rule").selectedOptions[0].textContent + (targets.rule === "camfit" ? ", for 65 dB SPL speech." : ".");
    drawTargets(targets);
    const capped = ears.reduce((n, ear) => n + freqs.filter((f) => targets[ear] && targets[ear][f] !== null && targets.played[ear][f] < targets[ear][f] - 0.05).length, 0);
    const short = [capped ? "Ribbit plays at most +50 dB: the dashed line is the rule's target, the cells with an arrow what plays." : "", targets.clinicalNote || ""].filter((s) => s).join(" ");
    $("targets-shortfall").textContent = short;
    $("targets-shortfall").hidden = !short;
  } catch {
    if (mine === sequence) $("targets-state").textContent = unreachable;
  }
}

function changed() {
  clearTimeout(timer);
  timer = setTimeout(update, 120);
}

function fill(start) {
  $("f-rule").value = start.rule;
  $("f-name").value = start.name || "";
  $("f-env").value = start.env || "";
  $("f-audiologist").value = start.audiologist || "";
  $("f-patient").value = start.patient || "";
  for (const ear of ears) for (const f of freqs) {
    const v = start[ear] ? start[ear][f] : undefined;
    box(ear, f).value = v === undefined ? "" : String(v);
  }
}

function clickChart(event) {
  const chart = $("audiogram-chart");
  const point = chart.createSVGPoint();
  point.x = event.clientX;
  point.y = event.clientY;
  const p = point.matrixTransform(chart.getScreenCTM().inverse());
  const f = freqs.reduce((best, f) => Math.abs(xOf(f) - p.x) < Math.abs(xOf(best) - p.x) ? f : best, freqs[0]);
  const db = Math.round((-10 + 130 * (p.y - audiogramPlot.top) / (audiogramPlot.bottom - audiogramPlot.top)) / 5) * 5;
  const ear = document.querySelector('input[name="click-ear"]:checked').value;
  box(ear, f).value = String(Math.max(-10, Math.min(120, db)));
  changed();
}

function minutes(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

function showStatus(status) {
  const trial = status.trial;
  $("trial-state").textContent = trial
    ? "Trial: " + minutes(trial.secondsLeft) + " left, then back to " + (trial.revertsTo || "no prescription") + "."
    : "No trial running" + (status.prescription ? "; the wearer has " + status.prescription.name + "." : ".");
  $("keep").disabled = !trial;
  $("revert").disabled = !trial;
}

async function poll() {
  try {
    const response = await session.api("/api/status");
    const connection = $("connection");
    connection.classList.toggle("down", !response.ok);
    if (response.ok) {
      connection.textContent = "Connected: ribbitd";
      showStatus(await response.json());
    } else {
      connection.textContent = "Not connected";
      $("trial-state").textContent = (await response.text()).trim();
    }
  } catch {
    $("connection").textContent = "Not connected";
    $("trial-state").textContent = unreachable;
  }
}

async function control(path, body, done) {
  if (trialBusy) return;
  trialBusy = true;
  try {
    const response = await postJSON(path, body);
    if (!response.ok) { showMessage((await response.text()).trim()); return; }
    showMessage("");
    showStatus(await response.json());
    $("trial-state").textContent = done + " " + $("trial-state").textContent;
  } catch (error) {
    showMessage(error instanceof Error && !(error instanceof TypeError) ? error.message : unreachable);
  } finally {
    trialBusy = false;
  }
}

function tryIt() {
  let body;
  try { body = form(); } catch (error) { showMessage(error.message); return; }
  body.minutes = Number($("trial-minutes").value);
  control("/api/fitting/trial", body, "Now trying " + body.name + ".");
}

function keyChosen() {
  const key = keys.find((k) => k.name === $("key").value);
  $("passphrase-label").hidden = !(key?.protected);
}

async function loadKeys() {
  try {
    const response = await session.api("/api/fitting/keys");
    const listing = await response.json();
    keys = listing.keys;
    const select = $("key");
    select.replaceChildren(...keys.map((k) => el("option", { value: k.name, text: k.name + (k.protected ? " (passphrase)" : "") })));
    $("make").disabled = keys.length === 0;
    select.disabled = keys.length === 0;
    $("key-hint").textContent = keys.length === 0
      ? "No signing key in " + listing.directory + ": `ribbitd rx keygen NAME -d " + listing.directory + "` makes one."
      : "Keys from " + listing.directory + "; the private key never leaves this machine.";
    keyChosen();
  } catch {
    showMessage(unreachable);
  }
}

async function make(event) {
  event.preventDefault();
  let body;
  try { body = form(); } catch (error) { showMessage(error.message); return; }
  body.key = $("key").value;
  if (!$("passphrase-label").hidden) body.passphrase = $("passphrase").value;
  $("make").disabled = true;
  try {
    const response = await postJSON("/api/fitting/qr", body);
    $("passphrase").value = "";
    if (!response.ok) { showMessage((await response.text()).trim()); return; }
    showMessage("");
    const made = await response.json();
    for (const url of madeURLs) URL.revokeObjectURL(url);
    const png = Uint8Array.from(atob(made.png), (c) => c.charCodeAt(0));
    const pngURL = URL.createObjectURL(new Blob([png], { type: "image/png" }));
    const rxURL = URL.createObjectURL(new Blob([made.rx], { type: "text/plain" }));
    madeURLs = [pngURL, rxURL];
    $("qr-image").src = pngURL;
    $("qr-caption").textContent = body.name + " (" + body.env + "), signed by " + made.signedBy + ", key " + made.keyID;
    $("download-png").href = pngURL;
    $("download-png").download = made.fileName + ".png";
    $("download-rx").href = rxURL;
    $("download-rx").download = made.fileName + ".rx";
    $("qr-result").hidden = false;
    $("qr-actions").hidden = false;
    $("print").focus();
  } catch {
    showMessage(unreachable);
  } finally {
    $("make").disabled = keys.length === 0;
  }
}

async function start() {
  try {
    const response = await session.api("/api/fitting/start");
    if (response.ok) fill(await response.json());
  } catch {
    showMessage(unreachable);
  }
  update();
}

for (const node of document.querySelectorAll(".fitting input, .fitting select")) {
  if (node.id !== "passphrase" && node.id !== "key" && node.id !== "trial-minutes" && node.name !== "click-ear") node.addEventListener("input", changed);
}
$("audiogram-chart").addEventListener("click", clickChart);
$("try").addEventListener("click", tryIt);
$("keep").addEventListener("click", () => control("/api/keep", {}, "Kept."));
$("revert").addEventListener("click", () => control("/api/revert", {}, "Reverted."));
$("key").addEventListener("change", keyChosen);
$("qr-form").addEventListener("submit", make);
$("print").addEventListener("click", () => window.print());
start();
loadKeys();
poll();
setInterval(() => { if (!document.hidden) poll(); }, 1000);

