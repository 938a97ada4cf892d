import Foundation
import Hummingbird
import HummingbirdWebSocket
import RibbitControl
import RibbitStore
import RibbitVoice

/// A voice game, full screen: the SERVER runs the game (VoiceGames.make) on the daemon's voice
/// frames and stores the session and its events; the page (/voice-play.js) only draws the
/// views it is sent over /api/voice/play, on a canvas, in code (no image files), smoothing
/// between views at the display's rate. Closing the socket before the end stores "exited".
enum VoicePlay {
    static let path = "/voice/play"
    static let script = "/voice-play.js"
    static let socketPath = "/api/voice/play"
    /// Events are stored in batches of at most this many frames (0.25 s): one transaction each.
    static let batchFrames = 25

    static func addRoutes<Context: WebSocketRequestContext & RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, voice: VoiceBridge, feed: SharedDaemonStream<VoiceFeed.Message>
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.ws(
            RouterPath(stringLiteral: socketPath),
            shouldUpgrade: { request, _ in try LiveScreen.checkUpgrade(request, socket: socketPath, view: "a voice game") },
            onUpgrade: { inbound, outbound, context in
                let query = context.request.uri.queryParameters
                let encoder = JSONEncoder()
                func say(_ message: Message) async throws {
                    try await outbound.write(.text(String(decoding: try encoder.encode(message), as: UTF8.self)))
                }
                guard let childID = query.get("child").flatMap({ Int64($0) }),
                    let kind = query.get("game").flatMap({ VoiceGameKind(rawValue: $0) })
                else {
                    try await say(Message(problem: "open a game as /voice/play?child=ID&game=clouds|airplane|dog|balloon|pitch"))
                    return
                }
                let started = await voice.run { store -> (VoiceChild, Int64) in
                    let child = try store.child(id: childID)
                    return (child, try store.startSession(childID: childID, game: kind, settings: child.settings))
                }
                guard case .success(let (child, sessionID)) = started else {
                    if case .failure(let failure) = started { try await say(Message(problem: failure.message)) }
                    return
                }
                // The pause is held by a connection of this game's (a lease): it ends with the game,
                // or with ribbit-web if that dies first; a pause the wearer made stays theirs.
                var pause: DaemonLease?
                if query.get("pause") == "1" {
                    var request = ControlRequest(command: .pause)
                    request.lease = true
                    pause = await daemon.hold(request).lease
                }
                try? await say(Message(nickname: child.nickname, settings: child.settings))

                let (subscription, messages) = feed.subscribe()
                let outcome = await withTaskGroup(of: Played?.self) { group in
                    group.addTask {
                        do { for try await _ in inbound {} } catch {}
                        return nil  // the browser left (Exit, a closed tab)
                    }
                    group.addTask {
                        await play(VoiceGames.make(kind, settings: child.settings), messages: messages, sessionID: sessionID, voice: voice)
                        {
                            try await say($0)
                        }
                    }
                    var played: Played?
                    while let result = await group.next() {
                        if let result { played = result }
                        group.cancelAll()  // either end stops the other; the game's task still returns its state
                    }
                    return played
                }
                feed.unsubscribe(subscription)
                if var played = outcome {
                    let finished = played.game.isFinished
                    if !finished { played.pending += played.game.exit(time: played.lastTime) }
                    let (events, summary) = (played.pending, played.game.summary)
                    _ = await voice.run { store in
                        try store.appendEvents(sessionID: sessionID, events)
                        try store.endSession(id: sessionID, outcome: finished ? .finished : .exited, summary: summary)
                    }
                }
                pause?.close()
            })
    }

    /// What the game task leaves: the game, its events not stored yet, the last frame's time.
    struct Played: Sendable {
        var game: any VoiceGame
        var pending: [VoiceGameEvent] = []
        var lastTime = 0.0
    }

    /// One message to the page: a view (every 2nd frame, and every frame with events), the
    /// events, or a problem line; the first one names the child and the settings.
    struct Message: Encodable {
        var view: VoiceGameView?
        var events: [VoiceGameEvent]?
        var problem: String?
        var nickname: String?
        var settings: VoiceSettings?
    }

    /// Feeds the frames to the game until it finishes or the socket goes (cancellation ends
    /// `messages`), storing events in batches and sending views.
    static func play(
        _ game: any VoiceGame, messages: AsyncStream<VoiceFeed.Message>, sessionID: Int64, voice: VoiceBridge,
        send: (Message) async throws -> Void
    ) async -> Played {
        var played = Played(game: game)
        var frames = 0
        var sinceStored = 0
        for await message in messages {
            switch message {
            case .problem(let text):
                try? await send(Message(problem: text))
            case .frame(let frame):
                frames += 1
                sinceStored += 1
                played.lastTime = frame.time
                let events = played.game.step(frame)
                played.pending += events
                if played.game.isFinished {  // the last view and events; the caller stores them with the end
                    try? await send(Message(view: played.game.view, events: events))
                    return played
                }
                if sinceStored >= batchFrames, !played.pending.isEmpty {
                    let batch = played.pending
                    if case .success = await voice.run({ try $0.appendEvents(sessionID: sessionID, batch) }) { played.pending = [] }
                    sinceStored = 0
                }
                if !events.isEmpty || frames % 2 == 0 {
                    do { try await send(Message(view: played.game.view, events: events.isEmpty ? nil : events)) } catch { return played }
                }
            }
        }
        return played
    }

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>ribbit: voice game</title>
        <link rel="stylesheet" href="/app.css">
        <script src="/session.js" defer></script>
        <script src="/voice-play.js" defer></script>
        </head>
        <body class="voice-play">
        <main id="play-main">
          <h1 id="game-title">Voice game</h1>
          <canvas id="stage" role="img" aria-label="The game"></canvas>
          <p id="feedback" role="status" aria-live="assertive"></p>
          <p id="score" role="status" aria-live="polite"></p>
          <p id="reward" role="status" hidden>Well done!</p>
          <p id="problem" role="alert" hidden></p>
          <button id="exit" type="button">Exit</button>
        </main>
        </body>
        </html>

        """#

    static let css = #"""
        body.voice-play { overflow: hidden; background: #bfe3ff; }
        #play-main { position: fixed; inset: 0; display: block; padding: 0; max-width: none; }
        #stage { position: absolute; inset: 0; width: 100%; height: 100%; display: block; z-index: 0; }
        #play-main > :not(#stage) { z-index: 1; }
        #game-title { position: absolute; top: 0.6rem; left: 1rem; margin: 0; font-size: 1.4rem; color: #000;
          background: rgba(255, 255, 255, 0.85); padding: 0.1rem 0.6rem; border-radius: 0.5rem; }
        #exit { position: absolute; top: 0.6rem; right: 1rem; min-height: 3.5rem; font-size: 1.4rem; background: #fff; color: #000; border-color: #000; }
        #feedback { position: absolute; left: 50%; top: 22%; transform: translateX(-50%); margin: 0; font-size: 3rem; font-weight: 800;
          color: #000; background: rgba(255, 236, 140, 0.95); border: 4px solid #000; border-radius: 1.5rem; padding: 0.2rem 1.4rem;
          white-space: nowrap; }
        #feedback:empty { display: none; }
        #score { position: absolute; bottom: 0.6rem; left: 1rem; margin: 0; font-size: 1.6rem; font-weight: 800; color: #000;
          background: rgba(255, 255, 255, 0.85); padding: 0.1rem 0.7rem; border-radius: 0.5rem; }
        #reward { position: absolute; left: 50%; top: 40%; transform: translate(-50%, -50%); margin: 0; font-size: 4rem; font-weight: 900;
          color: #000; background: #fff; border: 5px solid #000; border-radius: 2rem; padding: 0.3rem 2rem; }
        #problem { position: absolute; left: 1rem; right: 1rem; top: 4.6rem; margin: 0; padding: 0.5rem 0.8rem; font-weight: 700;
          color: #8a0000; background: #fff; border: 3px solid #8a0000; }
        @media (max-width: 30rem) { #feedback { font-size: 2rem; top: 18%; } #reward { font-size: 2.6rem; } }

        """#

    static let javaScript = #"""
        "use strict";
        // A voice game: the server runs the game and sends views (50 a second); this page draws
        // them on a canvas at the display's rate, easing each number towards the newest view.
        const $ = (id) => document.getElementById(id);
        const query = new URLSearchParams(location.search);
        const game = query.get("game") || "clouds";
        const child = query.get("child") || "";
        const names = { clouds: "Clouds", airplane: "Airplane", dog: "Dog", balloon: "Balloon", pitch: "Pitch" };
        const words = { "too-short": "Too short", "too-long": "Too long", "too-loud": "Too loud", "too-quiet": "Too quiet",
          "not-quiet-first": "Quiet first" };
        // For tests and the therapist's console: what the page saw and when (Date.now()).
        const state = window.voiceGame = { firstVoicingAt: null, view: null, events: [], fps: 0, done: 0, finished: false, settings: null };
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
          socket.addEventListener("message", (event) => { try { receive(JSON.parse(event.data)); } catch (error) { /* a partial frame */ } });
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
        function bar(value) {
          const w = Math.min(W * 0.6, 600), x = (W - w) / 2, y = H - 2.6 * 16 - 30;
          g.fillStyle = "#fff"; g.fillRect(x, y, w, 26);
          g.fillStyle = "#2e7d32"; g.fillRect(x, y, w * Math.max(0, Math.min(1, value)), 26);
          g.lineWidth = 3; g.strokeStyle = "#000"; g.strokeRect(x, y, w, 26);
        }
        // The voice meter on the left: how loud, and whether a voice sounds now.
        function meter(level) {
          const x = 18, top = H * 0.2, h = H * 0.55;
          g.fillStyle = "#fff"; g.fillRect(x, top, 22, h);
          g.fillStyle = view.voicing ? "#f58231" : "#999"; g.fillRect(x, top + h * (1 - level), 22, h * level);
          g.lineWidth = 3; g.strokeStyle = "#000"; g.strokeRect(x, top, 22, h);
        }

        function drawClouds(now, dt) {
          const goal = Math.max(1, view.goal), low = ground() - H * 0.08, high = H * 0.22;
          for (let i = 0; i < goal; i++) {
            const x = 60 + (W - 80) * (i + 0.5) / goal, s = Math.min((W - 80) / goal * 0.32, H * 0.08);  // clear of the meter
            let y = low;
            if (i < view.done) {
              const t = Math.min(1, (now - (lifts[i] || 0)) / 1200);
              y = low + (high + (i % 2) * H * 0.08 - low) * (1 - Math.pow(1 - t, 3));
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

        function drawBalloon(now, dt) {
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

        """#
}

extension HistoryBridge.Failure {
    var message: String {
        switch self {
        case .notFound(let text), .refused(let text), .unavailable(let text): text
        }
    }
}
