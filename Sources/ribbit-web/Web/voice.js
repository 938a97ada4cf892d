"use strict";
// The Voice games screen: children from /api/voice/children; the chosen one's settings,
// games, sessions and downloads. The chosen child and the pause toggle stay in this browser.
let info = null;
let chosen = null;
const gameNames = { clouds: "Clouds", airplane: "Airplane", dog: "Dog", balloon: "Balloon", pitch: "Pitch" };

// "dBFS (no calibration)" is said once above the form; each label has the short unit.
function unitText(unit) { return unit === "level" ? (info.scale || "dB").split(" (")[0] : unit; }

async function load() {
  const response = await session.api("/api/voice/children").catch(() => null);
  if (!response) { showMessage(unreachable); return; }
  if (!response.ok) { showMessage(await response.text()); return; }
  info = await response.json();
  $("connection").textContent = info.scale ? "Levels in " + info.scale : "The daemon does not answer: levels' scale unknown";
  $("connection").classList.toggle("down", !info.scale);
  const wanted = Number(new URLSearchParams(location.search).get("child") || localStorage.getItem("ribbit-voice-child"));
  renderChildren();
  const child = info.children.find((c) => c.id === wanted);
  if (child) choose(child); else if (chosen) choose(info.children.find((c) => c.id === chosen.id));
}

function renderChildren() {
  const list = $("children");
  list.replaceChildren();
  if (info.children.length === 0) list.append(el("li", { text: "No children yet: add one below." }));
  for (const child of info.children) {
    const label = child.nickname + (child.ageYears ? ", " + child.ageYears : "");
    const button = el("button", { type: "button", "aria-pressed": String(chosen && chosen.id === child.id), text: label });
    button.addEventListener("click", () => choose(child));
    list.append(el("li", {}, button));
  }
}

function choose(child) {
  chosen = child || null;
  for (const id of ["play-card", "settings-card", "progress-card"]) $(id).hidden = !chosen;
  renderChildren();
  if (!chosen) return;
  try { localStorage.setItem("ribbit-voice-child", String(chosen.id)); } catch { /* not kept */ }
  $("child-name").textContent = chosen.nickname;
  const games = $("games");
  games.replaceChildren();
  for (const game of info.games) {
    const button = el("button", { type: "button", class: "use", id: "play-" + game, text: gameNames[game] || game });
    button.addEventListener("click", () => {
      location.href = "/voice/play?child=" + chosen.id + "&game=" + game + ($("pause-aid").checked ? "&pause=1" : "");
    });
    games.append(button);
  }
  $("edit-nickname").value = chosen.nickname;
  $("edit-age").value = chosen.ageYears || "";
  $("scale-note").textContent = "Levels are " + (info.scale || "on the daemon's scale (not answering now)") +
    ", as the microphone measures them; times in seconds.";
  const fields = $("settings-fields");
  fields.replaceChildren();
  for (const field of info.fields) {
    const unit = unitText(field.unit);
    const input = el("input", { id: "set-" + field.key, type: "number", step: String(field.step), required: "",
      value: String(chosen.settings[field.key]) });
    fields.append(el("div", {}, el("label", { for: input.id, text: field.label + (unit ? " (" + unit + ")" : "") }), input));
  }
  if (chosen.settings.pitchExercise !== undefined) {
    const select = el("select", { id: "set-pitchExercise" },
      el("option", { value: "hold", text: "Hold the band" }), el("option", { value: "glide", text: "Glide up and down through it" }));
    select.value = chosen.settings.pitchExercise;
    fields.append(el("div", {}, el("label", { for: select.id, text: "Pitch exercise" }), select));
  }
  loadProgress();
}

function cell(text) { return el("td", { text }); }

async function loadProgress() {
  const id = chosen.id;
  const downloads = $("downloads");
  downloads.replaceChildren(
    needsSession(el("a", { href: "/api/voice/children/" + id + "/events.csv", download: "", text: "Download CSV: events" }), true),
    needsSession(el("a", { href: "/api/voice/children/" + id + "/sessions.csv", download: "", text: "Download CSV: sessions" }), true));
  // The chart comes with the session, so it is fetched and shown from memory (a blob: URL).
  const picture = await session.api("/api/voice/children/" + id + "/progress.svg").catch(() => null);
  if (picture?.ok) {
    const chart = el("img", { src: URL.createObjectURL(await picture.blob()),
      alt: "Progress of " + chosen.nickname + " by week: sessions, time in the target range, sounds per success, pitch range" });
    chart.addEventListener("load", () => URL.revokeObjectURL(chart.src));
    $("progress-chart").replaceChildren(chart);
  } else {
    $("progress-chart").replaceChildren(el("p", { class: "hint", text: "No chart yet: it appears after the first session." }));
  }
  const response = await session.api("/api/voice/children/" + id + "/sessions").catch(() => null);
  const body = $("sessions").tBodies[0];
  body.replaceChildren();
  if (!response || !response.ok) { showMessage(response ? await response.text() : unreachable); return; }
  const sessions = (await response.json()).reverse();
  if (sessions.length === 0) body.append(el("tr", {}, el("td", { colspan: "7", text: "No sessions yet." })));
  for (const s of sessions) {
    const sum = s.summary;
    const inTarget = sum && sum.voicedSeconds > 0 ? Math.round(100 * sum.secondsInTarget / sum.voicedSeconds) + " %" : "–";
    const pitch = sum?.f0LowHz ? Math.round(sum.f0LowHz) + "–" + Math.round(sum.f0HighHz) + " Hz" : "–";
    body.append(el("tr", {}, cell(new Date(s.started * 1000).toLocaleString()), cell(gameNames[s.game] || s.game), cell(s.outcome),
      cell(((s.ended - s.started) / 60).toFixed(1)), cell(sum ? sum.successes + " / " + sum.attempts : "–"), cell(inTarget), cell(pitch)));
  }
}

async function send(path, body, done) {
  const reply = await apiPost(path, body);
  if (reply) done(reply);
}

function age(input) { return input.value === "" ? null : Number(input.value); }

$("add-child").addEventListener("submit", (event) => {
  event.preventDefault();
  send("/api/voice/children", { nickname: $("new-nickname").value, ageYears: age($("new-age")) }, async (child) => {
    $("add-child").reset();
    chosen = child;
    await load();
    choose(info.children.find((c) => c.id === child.id));
  });
});

$("settings").addEventListener("submit", (event) => {
  event.preventDefault();
  // Fields this page does not know (a newer ribbit's) go back as they came.
  const settings = Object.assign({}, chosen.settings);
  for (const field of info.fields) settings[field.key] = Number($("set-" + field.key).value);
  if ($("set-pitchExercise")) settings.pitchExercise = $("set-pitchExercise").value;
  send("/api/voice/children/" + chosen.id, { nickname: $("edit-nickname").value, ageYears: age($("edit-age")), settings }, async (child) => {
    chosen = child;
    await load();
    showMessage("");
    $("connection").textContent = "Saved " + child.nickname + "'s settings.";
  });
});

$("archive-child").addEventListener("click", () => {
  send("/api/voice/children/" + chosen.id + "/archive", {}, async () => {
    chosen = null;
    try { localStorage.removeItem("ribbit-voice-child"); } catch { /* not kept */ }
    await load();
    choose(null);
  });
});

const pauseToggle = $("pause-aid");
pauseToggle.checked = (() => { try { return localStorage.getItem("ribbit-voice-pause") === "1"; } catch { return false; } })();
pauseToggle.addEventListener("change", () => {
  try { localStorage.setItem("ribbit-voice-pause", pauseToggle.checked ? "1" : "0"); } catch { /* not kept */ }
});

load();

