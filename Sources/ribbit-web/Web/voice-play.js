"use strict";
// A voice game: the server runs the game and sends views (50 a second); this page draws
// them on a canvas at the display's rate, easing each number towards the newest view.
const query = new URLSearchParams(location.search);
const game = query.get("game") || "clouds";
const child = query.get("child") || "";
const names = { clouds: "Clouds", airplane: "Airplane", dog: "Dog", balloon: "Balloon", pitch: "Pitch" };
const words = { "too-short": "Too short", "too-long": "Too long", "too-loud": "Too loud", "too-quiet": "Too quiet",
  "not-quiet-first": "Quiet first" };
// For tests and the therapist's console: what the page saw and when (Date.now()), and where it
// drew the meter and the progress bar (CSS pixels).
const state = { firstVoicingAt: null, view: null, events: [], fps: 0, done: 0, finished: false, settings: null, meter: null, bar: null };
window.voiceGame = state;
const canvas = $("stage");
const g = canvas.getContext("2d");
let W = 0, H = 0;
let view = { game, time: 0, done: 0, goal: 1, progress: 0, level: 0, voicing: false, speed: 0, altitude: 0, popped: false,
  pitch: null, bandLow: 0, bandHigh: 0, feedback: null, finished: false };
const shown = { progress: 0, level: 0, speed: 0, altitude: 0, pitch: 0, done: 0 };
const trail = [];
const lifts = [];  // performance.now() of each count's rise (clouds, jumps)
let confetti = [];
let socket = null;

$("game-title").textContent = names[game] || game;
document.title = "ribbit: " + (names[game] || game);

function resize() {
  const ratio = window.devicePixelRatio || 1;
  W = window.innerWidth; H = window.innerHeight;
  canvas.width = Math.round(W * ratio); canvas.height = Math.round(H * ratio);
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
}
window.addEventListener("resize", resize);
resize();

function leave() {
  if (socket) socket.close();
  location.href = "/voice" + (child ? "?child=" + encodeURIComponent(child) : "");
}
$("exit").addEventListener("click", leave);
document.addEventListener("keydown", (event) => { if (event.key === "Escape") leave(); });

function problem(text) { $("problem").textContent = text || ""; $("problem").hidden = !text; }

function receive(message) {
  if (message.problem) { problem(message.problem); return; }
  if (message.settings) { state.settings = message.settings; return; }
  problem("");
  if (message.events) {
    for (const event of message.events) {
      state.events.push(event);
      if (words[event.kind]) say(words[event.kind]);
    }
  }
  if (!message.view) return;
  const next = message.view;
  if (next.voicing && state.firstVoicingAt === null) state.firstVoicingAt = Date.now();
  for (let i = view.done; i < next.done; i++) lifts[i] = performance.now();
  if (next.feedback && next.feedback !== view.feedback) say(next.feedback);
  if (next.finished && !view.finished) finish();
  view = next;
  state.view = next;
  state.done = next.done;
  document.body.dataset.done = String(next.done);
  document.body.dataset.voicing = String(next.voicing);
  $("score").textContent = scoreText();
}

let sayTimer = null;
function say(text) {
  $("feedback").textContent = text.charAt(0).toUpperCase() + text.slice(1);
  clearTimeout(sayTimer);
  sayTimer = setTimeout(() => { $("feedback").textContent = ""; }, 2000);
}

function scoreText() {
  if (game === "clouds") return view.done + " of " + view.goal + " clouds up";
  if (game === "dog") return view.done + " of " + view.goal + " jumps";
  return Math.round(view.progress * 100) + " %";
}

function finish() {
  state.finished = true;
  document.body.dataset.finished = "true";
  $("reward").hidden = false;
  const colours = ["#e6194b", "#ffe119", "#3cb44b", "#4363d8", "#f58231", "#911eb4"];
  confetti = Array.from({ length: 160 }, (_, i) => ({ x: Math.random() * W, y: -Math.random() * H * 0.6, vy: 80 + Math.random() * 160,
    spin: Math.random() * 6, colour: colours[i % colours.length], star: i % 4 === 0 }));
  $("exit").textContent = "Back";
  $("exit").focus();
}

async function connect() {
  socket = await session.openSocket("/api/voice/play?" + query.toString());
  if (!socket) { problem(session.problem()); return; }
  socket.addEventListener("message", (event) => { try { receive(JSON.parse(event.data)); } catch { /* a partial frame */ } });
  socket.addEventListener("close", () => { if (!state.finished) problem("The game stopped: the web app closed the connection. Exit and start again."); });
}

// Drawing, all in code.
function ease(key, target, dt, tau) { shown[key] += (target - shown[key]) * (1 - Math.exp(-dt / tau)); return shown[key]; }
function ground() { return H * 0.82; }
function sky() {
  const gradient = g.createLinearGradient(0, 0, 0, H);
  gradient.addColorStop(0, "#7ec8ff"); gradient.addColorStop(1, "#e6f5ff");
  g.fillStyle = gradient; g.fillRect(0, 0, W, H);
  g.fillStyle = "#5cb85c"; g.fillRect(0, ground(), W, H - ground());
}
function circle(x, y, r, fill) { g.beginPath(); g.arc(x, y, r, 0, Math.PI * 2); g.fillStyle = fill; g.fill(); }
function cloud(x, y, s, fill) {
  for (const [dx, dy, r] of [[-0.6, 0.1, 0.45], [0, -0.2, 0.6], [0.6, 0.1, 0.45], [0.2, 0.2, 0.5], [-0.25, 0.25, 0.45]]) circle(x + dx * s, y + dy * s, r * s, fill);
}
// The progress bar, above the score (whose height follows the font) with a gap.
function bar(value) {
  const score = $("score").getBoundingClientRect();
  const w = Math.min(W * 0.6, 600), x = (W - w) / 2, y = Math.min(H - 2.6 * 16 - 30, (score.height > 0 ? score.top : H) - 26 - 12);
  state.bar = { x, y, width: w, height: 26 };
  g.fillStyle = "#fff"; g.fillRect(x, y, w, 26);
  g.fillStyle = "#2e7d32"; g.fillRect(x, y, w * Math.max(0, Math.min(1, value)), 26);
  g.lineWidth = 3; g.strokeStyle = "#000"; g.strokeRect(x, y, w, 26);
}
// The voice meter on the left: how loud, and whether a voice sounds now.
function meter(level) {
  const x = 18, top = H * 0.2, h = H * 0.55;
  state.meter = { x, y: top, width: 22, height: h };
  g.fillStyle = "#fff"; g.fillRect(x, top, 22, h);
  g.fillStyle = view.voicing ? "#f58231" : "#999"; g.fillRect(x, top + h * (1 - level), 22, h * level);
  g.lineWidth = 3; g.strokeStyle = "#000"; g.strokeRect(x, top, 22, h);
}

function drawClouds(now, _dt) {
  const goal = Math.max(1, view.goal), low = ground() - H * 0.08, high = H * 0.22;
  for (let i = 0; i < goal; i++) {
    const x = 60 + (W - 80) * (i + 0.5) / goal, s = Math.min((W - 80) / goal * 0.32, H * 0.08);  // clear of the meter
    let y = low;
    if (i < view.done) {
      const t = Math.min(1, (now - (lifts[i] || 0)) / 1200);
      y = low + (high + (i % 2) * H * 0.08 - low) * (1 - (1 - t) ** 3);
    } else if (i === view.done && view.voicing) {
      y = low - H * 0.05 * shown.level;  // the next cloud stirs while the voice sounds
    }
    cloud(x + 4, y + 5, s, "#7d93ab");  // a shadow: the clouds stand out from the pale sky
    cloud(x, y, s, i < view.done ? "#fff" : "#e8eef5");
  }
}

function drawAirplane(now, dt) {
  const p = ease("progress", view.progress, dt, 0.08), a = ease("altitude", view.altitude, dt, 0.12), speed = ease("speed", view.speed, dt, 0.1);
  const hx = W * 0.88, gy = ground();
  g.fillStyle = "#c0392b"; g.beginPath(); g.moveTo(hx - 60, gy - 70); g.lineTo(hx, gy - 120); g.lineTo(hx + 60, gy - 70); g.fill();
  g.fillStyle = "#f4d03f"; g.fillRect(hx - 48, gy - 70, 96, 70);
  g.fillStyle = "#6e2c00"; g.fillRect(hx - 12, gy - 40, 24, 40);
  const x = W * 0.06 + p * (hx - 90 - W * 0.06), y = gy - 24 - a * (gy - H * 0.2);
  g.save(); g.translate(x, y); g.rotate(-0.25 * (view.voicing ? speed : -speed * 0.5));
  g.fillStyle = "#1f5fbf"; g.beginPath(); g.ellipse(0, 0, 60, 16, 0, 0, Math.PI * 2); g.fill();
  g.fillStyle = "#0d3b80"; g.fillRect(-12, -40, 24, 80); g.fillRect(-58, -26, 12, 26);
  g.fillStyle = "#fff"; circle(30, -4, 7, "#fff");
  g.strokeStyle = "#000"; g.lineWidth = 4; const blade = 18 * Math.cos(now / 30 * (0.2 + speed));
  g.beginPath(); g.moveTo(62, -blade); g.lineTo(62, blade); g.stroke();
  g.restore();
  bar(p);
}

function drawDog(now, dt) {
  const goal = Math.max(1, view.goal), gy = ground();
  const bx = W * 0.86;
  g.fillStyle = "#fff"; g.strokeStyle = "#000"; g.lineWidth = 3;
  for (const dy of [-8, 8]) { circle(bx - 34, gy - 20 + dy, 11, "#fff"); circle(bx + 34, gy - 20 + dy, 11, "#fff"); }
  g.fillRect(bx - 34, gy - 28, 68, 16);
  const d = ease("done", view.done, dt, 0.25);
  const x = W * 0.1 + (d / goal) * (bx - 90 - W * 0.1);
  const last = lifts[view.done - 1];
  const t = last ? (now - last) / 600 : 1;
  const hop = t < 1 ? Math.sin(Math.PI * t) * H * 0.22 : 0;
  const y = gy - 45 - hop;
  g.fillStyle = "#a0522d";
  g.beginPath(); g.ellipse(x, y, 55, 28, 0, 0, Math.PI * 2); g.fill();
  circle(x + 55, y - 30, 26, "#a0522d");
  g.fillStyle = "#6e3b1e"; g.beginPath(); g.ellipse(x + 44, y - 36, 9, 22, 0.4, 0, Math.PI * 2); g.fill();
  circle(x + 66, y - 36, 5, "#000"); circle(x + 80, y - 24, 6, "#000");
  g.strokeStyle = "#a0522d"; g.lineWidth = 10; g.lineCap = "round";
  const legs = hop > 0 ? 6 : 0;
  for (const lx of [-35, -15, 20, 38]) { g.beginPath(); g.moveTo(x + lx, y + 18); g.lineTo(x + lx + legs, y + 45); g.stroke(); }
  g.beginPath(); g.moveTo(x - 52, y - 8); g.lineTo(x - 75, y - 30 - 8 * Math.sin(now / 120)); g.stroke();
}

function drawBalloon(_now, dt) {
  const level = shown.level, cx = W / 2, cy = H * 0.45, rMin = Math.min(W, H) * 0.06, rMax = Math.min(W, H) * 0.3;
  const s = state.settings;
  let low = view.bandLow, high = view.bandHigh;
  if (!(high > low) && s) { const span = s.tooLoudDB - s.quietDB; low = (s.targetLowDB - s.quietDB) / span; high = (s.targetHighDB - s.quietDB) / span; }
  g.fillStyle = "rgba(46,125,50,0.25)"; g.beginPath();
  g.arc(cx, cy, rMin + high * (rMax - rMin), 0, Math.PI * 2); g.arc(cx, cy, rMin + low * (rMax - rMin), 0, Math.PI * 2, true); g.fill();
  const r = rMin + level * (rMax - rMin);
  if (view.popped) {
    g.fillStyle = "#e6194b"; g.beginPath();
    for (let i = 0; i < 16; i++) { const a = i * Math.PI / 8, rr = i % 2 ? r * 0.4 : r; g.lineTo(cx + rr * Math.cos(a), cy + rr * Math.sin(a)); }
    g.fill();
  } else {
    g.strokeStyle = "#333"; g.lineWidth = 2; g.beginPath(); g.moveTo(cx, cy + r); g.lineTo(cx, ground()); g.stroke();
    circle(cx, cy, r, "#e6194b"); circle(cx - r * 0.35, cy - r * 0.35, r * 0.18, "rgba(255,255,255,0.6)");
  }
  // The band's edges over the balloon, so both show whatever its size.
  g.setLineDash([10, 8]); g.strokeStyle = "#0b3d0e"; g.lineWidth = 4;
  for (const v of [low, high]) { g.beginPath(); g.arc(cx, cy, rMin + v * (rMax - rMin), 0, Math.PI * 2); g.stroke(); }
  g.setLineDash([]);
  bar(ease("progress", view.progress, dt, 0.08));
}

function drawPitch(now, dt) {
  const top = H * 0.14, bottom = ground() - 10, h = bottom - top, x0 = 130, x1 = W - 40;
  const y = (v) => bottom - v * h;
  g.fillStyle = "rgba(46,125,50,0.3)"; g.fillRect(x0, y(view.bandHigh), x1 - x0, y(view.bandLow) - y(view.bandHigh));
  g.strokeStyle = "#2e7d32"; g.lineWidth = 3; g.strokeRect(x0, y(view.bandHigh), x1 - x0, y(view.bandLow) - y(view.bandHigh));
  g.fillStyle = "#000"; g.font = "bold 16px system-ui, sans-serif"; g.textAlign = "right";
  for (const f of [100, 200, 300, 400, 600]) { const v = Math.log(f / 60) / Math.log(10); g.fillText(f + " Hz", x0 - 6, y(v) + 5); }
  if (view.pitch !== null && view.pitch !== undefined) trail.push({ t: now, v: view.pitch }); else trail.push({ t: now, v: null });
  while (trail.length && now - trail[0].t > 3000) trail.shift();
  const bx = x0 + (x1 - x0) * 0.75;
  g.strokeStyle = "#4363d8"; g.lineWidth = 6; g.lineCap = "round"; g.beginPath();
  let pen = false;
  for (const p of trail) {
    if (p.v === null) { pen = false; continue; }
    const px = bx - (now - p.t) / 3000 * (bx - x0);
    if (pen) g.lineTo(px, y(p.v)); else g.moveTo(px, y(p.v));
    pen = true;
  }
  g.stroke();
  if (view.pitch !== null && view.pitch !== undefined) circle(bx, y(ease("pitch", view.pitch, dt, 0.05)), 22, "#f58231");
  bar(ease("progress", view.progress, dt, 0.08));
}

function drawConfetti(dt) {
  for (const c of confetti) {
    c.y += c.vy * dt; c.spin += dt * 4;
    if (c.y > H) c.y = -20;
    g.save(); g.translate(c.x, c.y); g.rotate(c.spin); g.fillStyle = c.colour;
    if (c.star) { g.beginPath(); for (let i = 0; i < 10; i++) { const a = i * Math.PI / 5, r = i % 2 ? 6 : 15; g.lineTo(r * Math.cos(a), r * Math.sin(a)); } g.fill(); }
    else g.fillRect(-6, -3, 12, 6);
    g.restore();
  }
}

const draw = { clouds: drawClouds, airplane: drawAirplane, dog: drawDog, balloon: drawBalloon, pitch: drawPitch };
let last = performance.now(), frames = 0, since = last;
function frame(now) {
  const dt = Math.min(0.1, (now - last) / 1000);
  last = now;
  frames++;
  if (now - since >= 1000) { state.fps = Math.round(frames * 1000 / (now - since)); frames = 0; since = now; }
  sky();
  const level = ease("level", view.level, dt, 0.05);
  (draw[game] || drawClouds)(now, dt);
  meter(level);
  drawConfetti(dt);
  requestAnimationFrame(frame);
}
$("score").textContent = scoreText();
canvas.setAttribute("aria-label", (names[game] || game) + " game; the score and the feedback are read out below");
requestAnimationFrame(frame);
connect();

