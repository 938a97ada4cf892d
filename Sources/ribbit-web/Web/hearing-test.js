"use strict";
// The Hearing test screen: polls /api/status five times a second while a test runs (once
// a second otherwise) and draws status.hearingTest; the big button sends each press at
// once (on pointer down, not click, so the daemon's response time is the listener's).
// Nothing here is spoken during the test: a screen reader talking would mask the beeps.
const earNames = { right: "Right ear", left: "Left ear" };
const headphoneNames = { consumer: "Own headphones", tdh39: "TDH-39", hda200: "HDA 200", er3a: "ER-3A inserts" };
const flagWords = {
  "false-alarms": "You pressed often when no beep played, so the thresholds may be too good. Test again, pressing only for beeps.",
  "retest-difference": "The two measurements at 1000 Hz differ by more than 5 dB: the answers were not consistent. Test again.",
  "undetermined": "Some frequencies found no threshold (the answers were too inconsistent): test again.",
  "no-response-anywhere": "No beep was heard at any frequency: check the headphones are on, plugged in and not muted.",
  "incomplete": "The test stopped before every frequency was measured.",
};
const unreliableFlags = ["false-alarms", "retest-difference"];
let test = null, last = null, newTest = false, busy = false, chartKey = "", stopArmed = null, daemonDown = false;
let listedFor = null;

// A duration, never read as a time of day ("12:48" was): "10 min 38 s".
function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  return Math.floor(s / 60) + " min " + (s % 60) + " s";
}
function hz(f) { return f >= 1000 ? (f / 1000) + " kHz" : f + " Hz"; }
function view(t) {
  if (!t || (newTest && t.state !== "running" && t.state !== "paused-noise")) return "before";
  return t.state === "running" || t.state === "paused-noise" ? "during" : "after";
}

function noiseText(noise) {
  const band = noise?.loudBandHz ? "around " + hz(noise.loudBandHz) : "";
  const level = noise && noise.levelDBSPL != null && noise.limitDBSPL != null
    ? " (" + Math.round(noise.levelDBSPL) + " dB SPL, at most " + Math.round(noise.limitDBSPL) + ")" : "";
  return "Paused: the room is too loud " + band + level + ". Find a quieter place or wait; the test goes on by itself once it is quiet.";
}

function render(status) {
  last = status;
  const connection = $("connection");
  connection.textContent = "Connected: ribbitd " + status.version;
  connection.classList.remove("down");
  const t = status.hearingTest || null;
  test = t;
  const shown = view(t);
  $("before").hidden = shown !== "before";
  $("during").hidden = shown !== "during";
  $("after").hidden = shown !== "after";
  $("chart-card").hidden = shown === "before";
  renderTrial(status.trial, shown);
  const listKey = shown === "during" ? null : String(t?.recordID ?? null);
  $("earlier").hidden = shown === "during" || $("earlier-list").childElementCount === 0;
  if (listKey !== null && listKey !== listedFor) { listedFor = listKey; listTests(); }
  if (shown === "during") {
    const paused = t.state === "paused-noise";
    $("where").textContent = paused ? "Paused" : t.ear ? earNames[t.ear] + ", " + hz(t.frequencyHz) : "Starting…";
    $("heard").classList.toggle("paused", paused);
    $("noise").hidden = !paused;
    if (paused) $("noise").textContent = noiseText(t.noise);
    // Masking: a steady noise in the other ear, heard through the waits and beeps alike.
    $("masking").hidden = paused || !t.maskingEar;
    if (t.maskingEar) {
      $("masking").textContent = "A rushing noise plays in your " + earNames[t.maskingEar].toLowerCase()
        + " now: ignore it, and press only for the beeps.";
    }
    $("progress").max = Math.max(1, t.total);
    $("progress").value = t.done;
    $("progress-text").textContent = t.done + " of " + t.total + " frequencies";
    $("elapsed").textContent = clock(t.elapsedSeconds);
  } else if (shown === "after") {
    renderResult(t);
  }
  const key = shown === "before" ? "" : t.state + ":" + t.frequencies.length;
  if (key && key !== chartKey) drawChart(key);
  chartKey = key;
}

function renderResult(t) {
  // A stop says why (the Stop button, the daemon stopping, JACK gone); a finished test
  // has a problem only when its result could not be stored.
  const why = t.problem || "stopped before the end";
  $("outcome").textContent = t.state === "finished" ? "Finished: every frequency measured."
    : why.startsWith("stopped") ? "S" + why.slice(1) + "." : "Stopped: " + why + ".";
  const bad = t.flags.filter((f) => unreliableFlags.includes(f));
  $("unreliable").hidden = bad.length === 0;
  $("unreliable").replaceChildren(el("strong", { text: "Unreliable: do not use this result for a fitting as it stands." }),
    ...bad.map((f) => el("p", { text: flagWords[f] })));
  // See a doctor first, and thresholds the other ear may have heard (masking could not confirm them).
  const findings = t.findings ? t.findings.lines : [];
  $("findings").hidden = findings.length === 0;
  $("findings").replaceChildren(...findings.map((line) => el("p", { text: line })));
  $("flags").replaceChildren(...t.flags.filter((f) => !unreliableFlags.includes(f)).map((f) => el("li", { text: flagWords[f] || f })));
  $("problem").hidden = !t.problem || t.state !== "finished";
  $("problem").textContent = t.problem || "";
  $("record").textContent = t.recordID != null ? "Hearing test " + t.recordID + " (ribbitd audiogram show " + t.recordID + ")" : "Not stored";
  $("headphones").textContent = headphoneNames[t.transducer] || t.transducer;
  $("took").textContent = clock(t.elapsedSeconds);
  $("result-links").hidden = t.recordID == null;
  // Refused anyway (unreliable, or unmasked thresholds): the boxes above say why.
  $("fit").hidden = bad.length > 0 || (t.findings != null && t.findings.crossHeard.length > 0);
  if (t.recordID != null) {
    $("report-link").href = "/hearing-test/report/" + t.recordID;
    $("fhir-link").href = "/api/hearing-test/fhir/" + t.recordID;
  }
}

// A trial (from here, or from anywhere else) with the Home screen's Keep and Revert.
function renderTrial(trial, shown) {
  $("fit-card").hidden = !trial || shown === "during";
  if (!trial) return;
  const seconds = Math.max(0, Math.round(trial.secondsLeft));
  const name = last?.prescription ? last.prescription.name : "a prescription";
  $("trial-left").textContent = "Trying " + name + ": " + clock(seconds) + " left";
  $("trial-back").textContent = "Then back to " + (trial.revertsTo || "no prescription (the sound unchanged)") + ", unless you keep it.";
}

const localTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
// The stored tests, newest first, each with the same three ways to use it.
async function listTests() {
  try {
    const response = await session.api("/api/hearing-test/list");
    if (!response.ok) { showMessage((await response.text()).trim()); return; }
    const tests = await response.json();
    $("earlier-list").replaceChildren(...tests.map((entry) => {
      const when = new Date(entry.date);
      const label = "test " + entry.id;
      const flags = (entry.flags.length === 0 ? "no flags" : entry.unreliable ? "unreliable" : entry.flags.join(", "))
        + (entry.seeADoctor ? ", see a doctor before a hearing aid" : "") + (entry.crossHeard ? ", unmasked" : "");
      return el("li", {},
        el("p", {}, el("strong", { text: "Test " + entry.id }), " ",
          el("time", { datetime: entry.date, text: Number.isNaN(when.getTime()) ? entry.date : localTime.format(when) }),
          ", " + (headphoneNames[entry.transducer] || entry.transducer) + ", " + flags),
        el("div", { class: "actions" },
          needsSession(el("a", { href: "/hearing-test/report/" + entry.id, text: "Report", "aria-label": "Printable report of " + label }), false),
          needsSession(el("a", { href: "/api/hearing-test/fhir/" + entry.id, download: "", text: "FHIR", "aria-label": "FHIR for your doctor, " + label }), true),
          entry.unreliable || entry.crossHeard ? null : fitButton(entry.id, "Try a fitting", "Try a fitting from " + label + " for 15 minutes")));
    }));
    $("earlier").hidden = tests.length === 0 || !$("during").hidden;
  } catch {
    listedFor = null;  // listed on the next poll
  }
}

function fitButton(id, text, label) {
  const button = el("button", { type: "button", text: text, "aria-label": label });
  button.addEventListener("click", () => fit(id));
  return button;
}

async function fit(id) {
  await send("/api/hearing-test/fit", { id: id });
}

// The server's SVG (RibbitPlot's audiogram), parsed as SVG, never as HTML.
async function drawChart(key) {
  try {
    const response = await session.api("/api/hearing-test/audiogram");
    if (!response.ok || key !== chartKey) return;
    const svg = new DOMParser().parseFromString(await response.text(), "image/svg+xml").documentElement;
    if (svg.nodeName === "svg") $("chart").replaceChildren(document.importNode(svg, true));
  } catch {
    chartKey = "";  // drawn on the next poll
  }
}

function disconnected(text) {
  daemonDown = true;
  const connection = $("connection");
  connection.textContent = "Not connected";
  connection.classList.add("down");
  showMessage(text);
}

async function refresh() {
  if (busy) return;
  const status = await apiGet("/api/hearing-test/status", disconnected);
  if (!status) return;
  render(status);
  if (daemonDown) { daemonDown = false; showMessage(""); }
}

async function send(path, body) {
  const status = await apiPost(path, body);
  if (status) render(status);
  return status !== null;
}

// A flash of the button for every press, the same whether a beep played or not.
function acknowledge() {
  const button = $("heard");
  button.classList.remove("ack");
  void button.offsetWidth;  // restarts the animation
  button.classList.add("ack");
}

function answer() {
  if (!test || test.state !== "running") return;
  acknowledge();
  send("/api/hearing-test/answer");
}

$("heard").addEventListener("pointerdown", (event) => {
  if (event.button !== 0) return;
  event.preventDefault();  // no focus change, no text selection on a long press
  answer();
});
// A screen reader's activation arrives as a click with no pointer down before it.
$("heard").addEventListener("click", (event) => { if (event.detail === 0) answer(); });
document.addEventListener("keydown", (event) => {
  if ($("during").hidden || event.repeat || (event.key !== " " && event.key !== "Enter")) return;
  const target = event.target;
  if (target !== $("heard") && target.closest("button, a, input, select, textarea")) return;
  event.preventDefault();
  answer();
});

$("start-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const better = document.querySelector('input[name="better"]:checked');
  $("start").disabled = true;
  busy = true;
  const started = await send("/api/hearing-test/start", { transducer: $("transducer").value, betterEar: better ? better.value : "unknown" });
  busy = false;
  $("start").disabled = false;
  if (started) { newTest = false; $("heard").focus(); }
});

// Stop asks once more, so a stray Space on it does not end the test.
$("stop").addEventListener("click", async () => {
  const stop = $("stop");
  if (!stopArmed) {
    stop.textContent = "Really stop? Press again";
    stop.classList.add("confirm");
    stopArmed = setTimeout(() => { stopArmed = null; stop.textContent = "Stop the test"; stop.classList.remove("confirm"); }, 4000);
    return;
  }
  clearTimeout(stopArmed);
  stopArmed = null;
  stop.textContent = "Stop the test";
  stop.classList.remove("confirm");
  await send("/api/hearing-test/stop");
});

needsSession($("report-link"), false);
needsSession($("fhir-link"), true);
$("fit").addEventListener("click", () => { if (test && test.recordID != null) fit(test.recordID); });
$("keep").addEventListener("click", () => send("/api/keep"));
$("revert").addEventListener("click", () => send("/api/revert"));

$("again").addEventListener("click", () => {
  newTest = true;
  if (last) render(last);
  refresh();
  $("transducer").focus();
});

// Leaving the page ends a running test at once (were it only closed, the daemon would end
// it once the page stops asking for the status, within seconds).
window.addEventListener("pagehide", () => {
  if (test && (test.state === "running" || test.state === "paused-noise")) postJSON("/api/hearing-test/stop", {}, { keepalive: true });
});

async function poll() {
  if (!document.hidden || !$("during").hidden) await refresh();
  setTimeout(poll, $("during").hidden ? 1000 : 200);
}
poll();

