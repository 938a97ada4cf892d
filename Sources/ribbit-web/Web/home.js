"use strict";
// The Home screen: polls /api/status every second and sends the controls' requests (with
// the session, session.js). Every answer with a status redraws the page.
let current = null;
let busy = false;

function render(status) {
  current = status;
  const connection = $("connection");
  connection.textContent = "Connected: ribbitd " + status.version;
  connection.classList.remove("down");
  const rx = status.prescription;
  $("rx-name").textContent = rx ? rx.name : "No prescription loaded";
  $("rx-env").textContent = rx ? rx.environment : "–";
  $("rx-signature").textContent = rx ? (rx.signature || "unsigned") : "–";
  $("rx-audiologist").textContent = rx?.audiologist ? rx.audiologist : "–";

  const output = { processing: "Playing", paused: "Paused: silent", bypassed: "Bypassed: unprocessed sound" };
  $("output").textContent = output[status.output] || status.output;
  const pause = $("pause");
  pause.disabled = false;
  pause.textContent = status.output === "paused" ? "Resume" : "Pause";
  const bypass = $("bypass");
  bypass.disabled = false;
  bypass.setAttribute("aria-pressed", status.output === "bypassed" ? "true" : "false");
  bypass.textContent = status.output === "bypassed" ? "Bypass: on" : "Bypass: off";

  const listening = status.listening;
  // The daemon gives the limits left, right; audiology says the right ear first.
  const limits = listening ? listening.outputLimitDBSPL : [];
  if (limits.length === 2) $("output-limit").replaceChildren(...earLimits(limits[0], limits[1]));
  else $("output-limit").textContent = "No prescription loaded: the sound passes through unchanged";
  $("volume-down").disabled = !listening || listening.volumeDB <= listening.volumeMinDB;
  $("volume-up").disabled = !listening || listening.volumeDB >= listening.volumeMaxDB;
  $("volume").textContent = listening ? signed(listening.volumeDB) + " dB" : "–";
  $("volume-range").textContent = listening
    ? "Range " + signed(listening.volumeMinDB) + " to " + signed(listening.volumeMaxDB) + " dB"
    : "Load a prescription to set the volume.";
  $("programs").disabled = !listening;
  const chosen = listening ? (listening.chosenBy === "auto" ? "auto" : listening.program) : null;
  for (const radio of document.querySelectorAll('input[name="program"]')) {
    if (document.activeElement !== radio || !busy) radio.checked = radio.value === chosen;
  }
  let reason = "Load a prescription to choose a program.";
  if (listening) {
    reason = listening.chosenBy === "auto"
      ? "Playing " + listening.program + (listening.reason ? ": " + listening.reason : "")
      : listening.chosenBy === "wearer" ? "Playing " + listening.program + ", your choice"
      : "Playing " + listening.program + ", as the prescription's environment selects";
  }
  $("program-reason").textContent = reason;

  const trial = status.trial;
  $("trial").hidden = !trial;
  if (trial) {
    const seconds = Math.max(0, Math.round(trial.secondsLeft));
    $("trial-left").textContent = "Trial: " + Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0") + " left";
    $("trial-back").textContent = "Then back to " + (trial.revertsTo || "no prescription (the sound unchanged)")
      + ", unless you keep it.";
  }

  const jack = status.jack;
  $("jack").textContent = jack
    ? "Running, " + jack.sampleRate + " Hz, period " + jack.period
    : (status.jackProblem || "Not connected");
  $("latency").textContent = jack ? jack.latencyMilliseconds.toFixed(1) + " ms (" + jack.latencyFrames + " frames)" : "–";
  $("xruns").textContent = String(status.totalXruns);
  $("cpu").textContent = jack
    ? "ribbit " + jack.ribbitLoadPercent.toFixed(1) + "\u00a0%, JACK " + jack.dspLoadPercent.toFixed(1) + "\u00a0%"
    : "–";
}

let daemonDown = false;
function disconnected(text) {
  current = null;
  daemonDown = true;
  const connection = $("connection");
  connection.textContent = "Not connected";
  connection.classList.add("down");
  $("output").textContent = "Unknown: not connected";
  showMessage(text);
  for (const id of ["pause", "bypass", "volume-down", "volume-up"]) $(id).disabled = true;
  $("programs").disabled = true;
}

async function refresh() {
  if (busy) return;
  const status = await apiGet("/api/status", disconnected);
  if (!status) return;
  render(status);
  if (daemonDown) { daemonDown = false; showMessage(""); }
}

async function send(path, body) {
  busy = true;
  try {
    const status = await apiPost(path, body);
    if (status) render(status);
  } finally {
    busy = false;
  }
}

$("keep").addEventListener("click", () => send("/api/keep"));
$("revert").addEventListener("click", () => send("/api/revert"));
$("pause").addEventListener("click", () => send(current && current.output === "paused" ? "/api/resume" : "/api/pause"));
$("bypass").addEventListener("click", () => send("/api/bypass", { on: !(current && current.output === "bypassed") }));
$("volume-down").addEventListener("click", () => send("/api/volume", { stepDB: -1 }));
$("volume-up").addEventListener("click", () => send("/api/volume", { stepDB: 1 }));
for (const radio of document.querySelectorAll('input[name="program"]')) {
  radio.addEventListener("change", () => { if (radio.checked) send("/api/program", { program: radio.value }); });
}
refresh();
setInterval(() => { if (!document.hidden) refresh(); }, 1000);

