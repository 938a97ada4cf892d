"use strict";
// The Live screen: the daemon's dump frames over a WebSocket, drawn as bars per third-octave
// band (input, output, the target as a line) into each ear's SVG; the socket is closed while
// the tab is hidden, so the daemon stops analysing when nobody looks.
const box = { left: 64, right: 590, top: 12, bottom: 270 };
let chartWidth = 600;
const charts = {};
let socket = null;
let frames = 0;
let latest = null;
let drawPending = false;
let lastSummary = -Infinity;
const recentTimes = [];
let scale = null;  // { spl, low, high }
// The SpeechMap's lines (/api/speechmap) for the prescription the frames name, drawn over the
// bars when they are in dB SPL; for tests, where each line's points were drawn.
let speechMap = null;
let speechMapFor;
const drawnMap = {};
window.liveSpeechMap = drawnMap;

function yOf(db) {
  const clamped = Math.min(Math.max(db, scale.low), scale.high);
  return box.bottom - (clamped - scale.low) / (scale.high - scale.low) * (box.bottom - box.top);
}

function hzLabel(hz) { return hz >= 1000 ? (hz / 1000) + "k" : String(hz); }

// The axes and one set of bars per band, once per ear (again when the unit changes).
function build(ear, bandsHz) {
  const root = $("chart-" + ear);
  root.replaceChildren();
  // Drawn in the chart's own pixels, up to 600: on a phone the labels stay large.
  chartWidth = Math.round(Math.min(600, Math.max(340, root.getBoundingClientRect().width || 600)));
  root.setAttribute("viewBox", `0 0 ${chartWidth} 330`);
  box.right = chartWidth - 10;
  const width = (box.right - box.left) / bandsHz.length;
  for (let db = scale.low; db <= scale.high; db += 20) {
    root.append(svg("line", { class: "grid", x1: box.left, x2: box.right, y1: yOf(db), y2: yOf(db) }));
    root.append(svg("text", { x: box.left - 8, y: yOf(db) + 6, "text-anchor": "end", text: String(db) }));
  }
  const bars = bandsHz.map((hz, i) => {
    const x = box.left + i * width;
    if ([125, 250, 500, 1000, 2000, 4000, 8000].includes(Math.round(hz))) {
      root.append(svg("text", { x: x + width / 2, y: box.bottom + 22, "text-anchor": "middle", text: hzLabel(Math.round(hz)) }));
    }
    const input = svg("rect", { class: "input", x: x + 2, width: width / 2 - 2, y: box.bottom, height: 0 });
    const output = svg("rect", { class: "output", x: x + width / 2, width: width / 2 - 2, y: box.bottom, height: 0 });
    const target = svg("line", { class: "target", x1: x + 1, x2: x + width - 1, y1: 0, y2: 0, visibility: "hidden" });
    root.append(input, output, target);
    return { input, output, target };
  });
  if (scale.spl && speechMap?.ears?.[ear]) drawSpeechMap(root, ear, bandsHz, width);
  root.append(svg("rect", { class: "frame", x: box.left, y: box.top, width: box.right - box.left, height: box.bottom - box.top }));
  root.append(svg("text", { x: (box.left + box.right) / 2, y: 322, "text-anchor": "middle", text: "Frequency (Hz)" }));
  root.append(svg("text", { x: 18, y: (box.top + box.bottom) / 2, "text-anchor": "middle",
    transform: `rotate(-90 18 ${(box.top + box.bottom) / 2})`, text: "Level (" + (scale.spl ? "dB SPL" : "dBFS") + ")" }));
  charts[ear] = bars;
}

// Where a frequency lies on the band axis: between the centres around it, on a log scale.
function xOfHz(hz, bandsHz, width) {
  let i = 0;
  while (i < bandsHz.length - 2 && bandsHz[i + 1] <= hz) i++;
  const position = i + Math.log(hz / bandsHz[i]) / Math.log(bandsHz[i + 1] / bandsHz[i]);
  return box.left + (position + 0.5) * width;
}

// The ear's thresholds (O right, X left; an arrow where nothing was heard), its UCLs (*) and
// each band's output limit (dashed), all in dB SPL.
function drawSpeechMap(root, ear, bandsHz, width) {
  const map = speechMap.ears[ear];
  const points = (levels) => Object.keys(levels).map(Number).sort((a, b) => a - b)
    .filter((hz) => hz >= bandsHz[0] && hz <= bandsHz[bandsHz.length - 1]).map((hz) => [hz, xOfHz(hz, bandsHz, width), yOf(levels[hz])]);
  const line = (list, kind) => root.append(svg("polyline", { class: "map " + kind, points: list.map((p) => p[1] + "," + p[2]).join(" ") }));
  const limits = map.limits.filter((l) => l.centreHz >= bandsHz[0]).map((l) => [l.centreHz, xOfHz(l.centreHz, bandsHz, width), yOf(l.dBSPL)]);
  line(limits, "limit");
  const thresholds = points(map.thresholdsDBSPL);
  line(thresholds, "threshold");
  for (const [hz, x, y] of thresholds) {
    root.append(ear === "right"
      ? svg("circle", { class: "map mark", cx: x, cy: y, r: 7 })
      : svg("path", { class: "map mark", d: `M${x - 6},${y - 6}L${x + 6},${y + 6}M${x - 6},${y + 6}L${x + 6},${y - 6}` }));
    // No response at the loudest level played: the threshold lies higher (louder is up).
    if (map.noResponseHz.includes(hz)) root.append(svg("path", { class: "map mark", d: `M${x},${y - 8}l0,-14m-5,6l5,-6l5,6` }));
  }
  const ucl = map.uclDBSPL ? points(map.uclDBSPL) : [];
  if (ucl.length > 0) line(ucl, "ucl");
  for (const [, x, y] of ucl) root.append(svg("text", { class: "map ucl-mark", x, y: y + 12, "text-anchor": "middle", text: "*" }));
  drawnMap[ear] = { thresholds, ucl, limits };
}

// The lines for the prescription now playing (its history id): asked again when the frames
// name another; after a failed request (the status not caught up yet), again 2 s later.
async function loadSpeechMap(id) {
  speechMapFor = id;
  const map = id === null ? null : await apiGet("/api/speechmap", () => {});
  if (speechMapFor !== id) return;  // another prescription since: its own request draws
  speechMap = map;
  if (id !== null && map === null) setTimeout(() => { if (speechMapFor === id) speechMapFor = undefined; }, 2000);
  for (const ear of Object.keys(charts)) delete charts[ear];
  for (const ear of Object.keys(drawnMap)) delete drawnMap[ear];
  if (latest && !drawPending) { drawPending = true; requestAnimationFrame(draw); }
}

// The dB SPL scale: 0 to 120, or higher when a threshold or UCL lies above 120.
function splHigh() {
  const levels = Object.values(speechMap?.ears || {})
    .flatMap((ear) => [...Object.values(ear.thresholdsDBSPL), ...Object.values(ear.uclDBSPL || {})]);
  return Math.max(120, Math.ceil((Math.max(0, ...levels) + 5) / 20) * 20);
}

function setBar(rect, db) {
  const y = yOf(db);
  rect.setAttribute("y", y);
  rect.setAttribute("height", box.bottom - y);
}

const fixed = (db) => (Math.round(db * 10) / 10).toFixed(1).replace("-", "−");

function level(db, offset) {
  return offset === null || offset === undefined ? fixed(db) + " dBFS" : fixed(db + offset) + " dB SPL";
}

function draw() {
  drawPending = false;
  const frame = latest;
  const spl = frame.calibration !== null && frame.calibration !== undefined;
  const id = frame.prescriptionID ?? null;
  if (id !== speechMapFor) loadSpeechMap(id);
  const high = spl ? splHigh() : 0;
  if (!scale || scale.spl !== spl || scale.high !== high) {
    scale = spl ? { spl, low: 0, high } : { spl, low: -100, high: 0 };
    for (const ear of Object.keys(charts)) delete charts[ear];
  }
  $("live-reference").textContent = spl && speechMap
    ? "Thresholds and UCLs in dB SPL: " + speechMap.reference + ". Output limits per band as the prescription sets them."
    : spl ? "" : "In dBFS (no calibration): the thresholds, UCLs and output limits need dB SPL.";
  for (const ear of ["right", "left"]) {
    const values = frame.ears[ear];
    $("chart-" + ear).closest("section").hidden = !values;
    if (!values) continue;
    if (!charts[ear]) build(ear, frame.bandsHz);
    const inOffset = spl ? values.inputSPLOffset : 0, outOffset = spl ? values.outputSPLOffset : 0;
    charts[ear].forEach((bar, i) => {
      setBar(bar.input, values.input[i] + inOffset);
      setBar(bar.output, values.output[i] + outOffset);
      const gain = values.targetGain[i];
      if (gain === null || values.input[i] <= -120) {
        bar.target.setAttribute("visibility", "hidden");
      } else {
        const y = yOf(values.input[i] + inOffset + gain);
        bar.target.setAttribute("y1", y);
        bar.target.setAttribute("y2", y);
        bar.target.setAttribute("visibility", "visible");
      }
    });
    const offsets = spl ? [values.inputSPLOffset, values.outputSPLOffset] : [null, null];
    $("levels-" + ear).replaceChildren(
      el("dt", { text: "Input" }), el("dd", { text: level(values.inputRMS, offsets[0]) + ", peak " + fixed(values.inputPeak) + " dBFS" }),
      el("dt", { text: "Output" }), el("dd", { text: level(values.outputRMS, offsets[1]) + ", peak " + fixed(values.outputPeak) + " dBFS" }),
      el("dt", { text: "Gain" }), el("dd", { text: signed(Math.round((values.outputRMS + outOffset - values.inputRMS - inOffset) * 10) / 10) + " dB" }));
  }
  const calibration = !spl ? "no calibration: levels in dBFS"
    : frame.calibration === "defaults" ? "dB SPL from the default calibration (±" + frame.uncertaintyDB + " dB)"
    : "dB SPL through calibration " + frame.calibration;
  $("live-prescription").textContent = (frame.prescription ? frame.prescription : "No prescription: sound passes unchanged")
    + " · output " + frame.output + " · latency " + frame.latencyMs + " ms · " + calibration;
  const now = performance.now();
  if (now - lastSummary >= 1000) {
    lastSummary = now;
    $("live-summary").textContent = ["right", "left"].filter((ear) => frame.ears[ear]).map((ear) => {
      const v = frame.ears[ear];
      const offsets = spl ? [v.inputSPLOffset, v.outputSPLOffset] : [null, null];
      return (ear === "right" ? "Right" : "Left") + " ear: input " + level(v.inputRMS, offsets[0])
        + ", output " + level(v.outputRMS, offsets[1]) + ".";
    }).join(" ");
  }
}

function status(text, problem) {
  $("live-status").textContent = text;
  $("live-status").classList.toggle("problem", !!problem);
}

let connecting = false;
async function connect() {
  if (socket || connecting) return;
  connecting = true;
  const own = await session.openSocket("/api/live/socket");
  connecting = false;
  if (!own) {
    $("connection").textContent = "Not connected";
    $("connection").classList.add("down");
    status(session.problem(), true);
    return;
  }
  if (document.hidden) { own.close(1000, "hidden"); return; }
  socket = own;
  own.onopen = () => { $("connection").textContent = "Connected"; $("connection").classList.remove("down"); };
  own.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.problem) { status(message.problem, true); return; }
    frames += 1;
    const now = performance.now();
    recentTimes.push(now);
    while (recentTimes.length && now - recentTimes[0] > 1000) recentTimes.shift();
    status("Live: " + frames + " frames, " + recentTimes.length + " a second", false);
    latest = message;
    if (!drawPending) { drawPending = true; requestAnimationFrame(draw); }
  };
  own.onclose = () => {
    if (socket !== own) return;  // closed on purpose (tab hidden)
    socket = null;
    $("connection").textContent = "Not connected";
    $("connection").classList.add("down");
    status("The live view closed; trying again in 2 seconds. Is `ribbitd web` still running?", true);
    setTimeout(() => { if (!document.hidden) connect(); }, 2000);
  };
}

function pause() {
  if (!socket) return;
  const old = socket;
  socket = null;
  old.close(1000, "hidden");
  status("Paused while this tab is hidden (" + frames + " frames so far)", false);
}

for (const link of document.querySelectorAll(".live-save a")) needsSession(link, true);
window.addEventListener("resize", () => { for (const ear of Object.keys(charts)) delete charts[ear]; });
document.addEventListener("visibilitychange", () => { if (document.hidden) pause(); else connect(); });
if (!document.hidden) connect();

