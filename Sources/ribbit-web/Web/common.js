"use strict";
// Every screen: element lookup and building, the message line, JSON POSTs and links
// that need the session (session.js, loaded before).
const $ = (id) => document.getElementById(id);
const unreachable = "The web app does not answer: is `ribbitd web` still running?";

function showMessage(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "text") node.textContent = value; else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// The same for a chart's SVG elements.
function svg(tag, attributes) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "text") node.textContent = value; else node.setAttribute(key, value);
  }
  return node;
}

// A level in dB as the pages write it: at most one decimal, a real minus sign.
function decibels(db) {
  return (Number.isInteger(db) ? String(db) : db.toFixed(1)).replace("-", "−");
}

// The output limits per ear (dB SPL), the right ear first as audiology writes it; a line
// breaks between the ears rather than inside one.
function earLimits(leftDB, rightDB) {
  return [el("span", { class: "ear-limit", text: "right ear " + decibels(rightDB) + " dB SPL, " }),
    el("span", { class: "ear-limit", text: "left ear " + decibels(leftDB) + " dB SPL" })];
}

function signed(db) {
  const text = Number.isInteger(db) ? String(db) : db.toFixed(1);
  return (db > 0 ? "+" : "") + text.replace("-", "−");
}

// The text-size setting, kept by this browser: five steps of the root font size, set as a
// data attribute the style sheet reads (no inline style under the CSP).
const textSizes = ["100", "120", "140", "170", "200"];
function setTextSize(step) {
  const index = Math.min(textSizes.length - 1, Math.max(0, step));
  document.documentElement.dataset.textSize = textSizes[index];
  $("text-size").textContent = textSizes[index] + " %";
  $("text-smaller").disabled = index === 0;
  $("text-larger").disabled = index === textSizes.length - 1;
  try { localStorage.setItem("ribbit-text-size", String(index)); } catch { /* private mode: not kept */ }
  return index;
}
// Screens with the header have the setting (a voice game's full screen has none).
if ($("text-size")) {
  let textSizeStep = setTextSize(Number((() => { try { return localStorage.getItem("ribbit-text-size"); } catch { return 0; } })()) || 0);
  $("text-smaller").addEventListener("click", () => { textSizeStep = setTextSize(textSizeStep - 1); });
  $("text-larger").addEventListener("click", () => { textSizeStep = setTextSize(textSizeStep + 1); });
}

function postJSON(path, body, options) {
  return session.api(path, Object.assign(
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) }, options || {}));
}

// The screens' requests to the API. apiGet: the reply's JSON, or null once `failed` was
// told why not (the web app's or the daemon's refusal, or that the web app does not answer).
// apiPost: the same for a POST of `body`, with the message line as `failed` (cleared when done).
async function apiGet(path, failed) {
  try {
    const response = await session.api(path);
    if (!response.ok) { failed((await response.text()).trim()); return null; }
    return await response.json();
  } catch {
    failed(unreachable);
    return null;
  }
}

async function apiPost(path, body) {
  try {
    const response = await postJSON(path, body);
    if (!response.ok) { showMessage((await response.text()).trim()); return null; }
    showMessage("");
    return await response.json();
  } catch {
    showMessage(unreachable);
    return null;
  }
}

// A link to something only the session may see (a download, the printable report): a
// click opens it through a one-use link; the href stays for what the link says.
function needsSession(link, download) {
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    const problem = await session.followLink(link.getAttribute("href"), download);
    if (problem) showMessage(problem);
  });
  return link;
}


// One ear's compressor bands as `ribbitd rx show` prints them: the insertion gain (REIG) played
// for speech at 50, 65 and 80 dB SPL, with the rule's target where ribbit plays less, the knee,
// the ratio and the output limit (dB SPL at the headphones, as the calibration measured them).
function bandTable(bands, ear) {
  const table = el("table", { class: "gains bands " + ear });
  table.append(el("caption", { text: ear === "right" ? "Right ear (O)" : "Left ear (X)" },
    el("span", { class: "note", text: " insertion gain (dB) for speech at 50, 65 and 80 dB SPL" })));
  const heads = ["Band (Hz)", "Soft, 50 dB SPL", "Average, 65", "Loud, 80", "Knee (dB SPL)", "Ratio", "Limit (dB SPL)"];
  table.append(el("thead", {}, el("tr", {}, ...heads.map((text) => el("th", { scope: "col", text })))));
  const body = el("tbody");
  for (const band of bands) {
    const row = el("tr", {}, el("th", { scope: "row", text: String(band.centreHz) }));
    const levels = [[band.gain50DB, band.target50DB], [band.gain65DB, band.target65DB], [band.gain80DB, band.target80DB]];
    levels.forEach(([played, target], i) => {
      const capped = band.cappedBy[i];
      row.append(capped
        ? el("td", { class: "capped", title: "the rule asks for " + signed(target) + " dB; " + capped + " holds it" },
          signed(target), el("span", { class: "plays", text: " → " + signed(played) }))
        : el("td", { text: signed(played) }));
    });
    row.append(el("td", { text: band.kneeDBSPL == null ? "linear" : decibels(band.kneeDBSPL) }),
      el("td", { text: band.ratio.toFixed(2) }), el("td", { text: decibels(band.limitDBSPL) }));
    body.append(row);
  }
  table.append(body);
  return table;
}
