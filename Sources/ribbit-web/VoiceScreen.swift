import Foundation
import Hummingbird
import RibbitControl
import RibbitPlot
import RibbitStore
import RibbitVoice

/// The Voice games screen, for the therapist: pick or add a child, set the child's ranges and
/// durations, start one of the five games (VoicePlay.swift runs them), see the child's progress
/// and download it as CSV. Everything stays in voice.sqlite on this machine.
enum VoiceScreen {
    static let path = "/voice"
    static let script = "/voice.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit: voice games", script: script, connecting: "Loading…", main: main)
    }

    /// One settings field as the form shows it: VoiceSettings' key, its label and unit
    /// ("level": on the stream's scale, named from the daemon's calibration), and the input's step.
    struct Field: Encodable {
        var key: String
        var label: String
        var unit: String
        var step: Double
    }

    static let fields: [Field] = [
        Field(key: "quietDB", label: "Quiet under", unit: "level", step: 1),
        Field(key: "targetLowDB", label: "Target range from", unit: "level", step: 1),
        Field(key: "targetHighDB", label: "Target range to", unit: "level", step: 1),
        Field(key: "tooLoudDB", label: "Too loud from", unit: "level", step: 1),
        Field(key: "shortestSeconds", label: "Shortest sound", unit: "s", step: 0.05),
        Field(key: "syllableMaxSeconds", label: "Longest syllable", unit: "s", step: 0.05),
        Field(key: "cloudSeconds", label: "Voice per cloud", unit: "s", step: 0.05),
        Field(key: "longestSeconds", label: "Longest sound", unit: "s", step: 0.5),
        Field(key: "clouds", label: "Clouds to lift", unit: "", step: 1),
        Field(key: "dogJumps", label: "Dog's jumps to the bone", unit: "", step: 1),
        Field(key: "flightSeconds", label: "Airplane's flight", unit: "s", step: 0.5),
        Field(key: "balloonHoldSeconds", label: "Balloon's hold", unit: "s", step: 0.5),
        Field(key: "pitchLowHz", label: "Pitch band from", unit: "Hz", step: 5),
        Field(key: "pitchHighHz", label: "Pitch band to", unit: "Hz", step: 5),
        Field(key: "pitchHoldSeconds", label: "Pitch hold", unit: "s", step: 0.5),
    ]

    /// GET /api/voice/children: the children and the level scale the settings are on.
    struct Children: Encodable {
        /// "dB SPL" or "dBFS (no calibration)"; nil when the daemon does not answer.
        var scale: String?
        var calibrated: Bool?
        /// A new child's settings on this scale.
        var standard: VoiceSettings?
        var fields: [Field]
        var games: [String]
        var children: [VoiceChild]
    }

    struct ChildBody: Decodable {
        var nickname: String
        var ageYears: Int?
        /// nil: the standard settings for the daemon's scale (adding), or unchanged (updating).
        var settings: VoiceSettings?
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge, voice: VoiceBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }

        router.get("/api/voice/children") { _, _ in
            let calibrated = await self.calibrated(daemon)
            switch await voice.run({ try $0.children() }) {
            case .success(let children):
                return encoded(
                    Children(
                        scale: calibrated.map { $0 ? "dB SPL" : "dBFS (no calibration)" }, calibrated: calibrated,
                        standard: calibrated.map { VoiceSettings.standard(calibrated: $0) }, fields: fields,
                        games: VoiceGameKind.allCases.map(\.rawValue), children: children))
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        router.post("/api/voice/children") { request, context in
            let body = try await WebApp.decode(ChildBody.self, from: request, context: context)
            var settings = body.settings
            if settings == nil {
                guard let calibrated = await self.calibrated(daemon) else {
                    return WebApp.plain(
                        .serviceUnavailable, "the daemon does not answer, so the level scale is unknown: start it, then add the child")
                }
                settings = VoiceSettings.standard(calibrated: calibrated)
            }
            if let problem = settings!.problems.first { return WebApp.plain(.badRequest, "settings not saved: \(problem)") }
            let chosen = settings!
            return reply(await voice.run { try $0.addChild(nickname: body.nickname, ageYears: body.ageYears, settings: chosen) })
        }
        router.post("/api/voice/children/:id") { request, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            let body = try await WebApp.decode(ChildBody.self, from: request, context: context)
            if let problem = body.settings?.problems.first { return WebApp.plain(.badRequest, "settings not saved: \(problem)") }
            return reply(
                await voice.run { store in
                    var child = try store.child(id: id)
                    child.nickname = body.nickname
                    child.ageYears = body.ageYears
                    if let settings = body.settings { child.settings = settings }
                    try store.updateChild(child)
                    return try store.child(id: id)
                })
        }
        router.post("/api/voice/children/:id/archive") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run {
                    try $0.archiveChild(id: id); return ["archived": id]
                })
        }
        router.get("/api/voice/children/:id/sessions") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run { store in
                    _ = try store.child(id: id); return try store.sessions(childID: id)
                })
        }
        addProgressRoutes(to: router, voice: voice)
        router.get("/api/voice/children/:id/events") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            return reply(
                await voice.run { store in
                    _ = try store.child(id: id); return try store.events(childID: id)
                })
        }
    }

    /// The progress chart and the two CSV files, dates in this machine's time zone.
    static func addProgressRoutes<Context: RequestContext>(to router: Router<Context>, voice: VoiceBridge) {
        let offset = TimeZone.current.secondsFromGMT()
        router.get("/api/voice/children/:id/progress.svg") { _, context in
            guard let id = childID(context) else {
                return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
            }
            switch await voice.run({ store in (try store.child(id: id), try store.progress(childID: id, utcOffsetSeconds: offset)) }) {
            case .success(let (child, weeks)):
                guard !weeks.isEmpty else {
                    return WebApp.plain(.notFound, "\(child.nickname) has no sessions yet: the chart starts with the first")
                }
                return Assets.response(VoiceProgressChart.svg(weeks: weeks, childName: child.nickname), type: "image/svg+xml")
            case .failure(let failure): return WebApp.plain(failure)
            }
        }
        for file in ["events", "sessions"] {
            router.get(RouterPath(stringLiteral: "/api/voice/children/:id/\(file).csv")) { _, context in
                guard let id = childID(context) else {
                    return WebApp.plain(.notFound, "ask for a child by its number (from /api/voice/children)")
                }
                switch await voice.run({ store in
                    _ = try store.child(id: id); return try store.csv(childID: id, utcOffsetSeconds: offset)
                }) {
                case .success(let csv):
                    var headers = HTTPFields()
                    headers[.contentType] = "text/csv; charset=utf-8"
                    headers[.contentDisposition] = "attachment; filename=\"ribbit-voice-\(id)-\(file).csv\""
                    let text = file == "events" ? csv.events : csv.sessions
                    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
                case .failure(let failure): return WebApp.plain(failure)
                }
            }
        }
    }

    static func childID(_ context: some RequestContext) -> Int64? {
        context.parameters.get("id").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether the voice stream's levels are dB SPL: only with a calibration profile (the
    /// documented defaults measured nothing, so the stream stays in dBFS); nil without a daemon.
    static func calibrated(_ daemon: DaemonBridge) async -> Bool? {
        guard case .status(let status) = await daemon.send(ControlRequest(command: .status)) else { return nil }
        return status.calibration?.profile != nil
    }

    static func encoded<T: Encodable>(_ value: T) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else {
            return WebApp.plain(.internalServerError, "internal error: cannot encode the answer")
        }
        return WebApp.json(data)
    }

    static func reply<T: Encodable>(_ result: Result<T, HistoryBridge.Failure>) -> Response {
        switch result {
        case .success(let value): return encoded(value)
        case .failure(let failure): return WebApp.plain(failure)
        }
    }

    static let main = #"""
        <main id="voice-main">
        <section class="card" aria-labelledby="children-title">
          <h2 id="children-title">Children</h2>
          <ul id="children" class="voice-children" aria-label="Children"></ul>
          <form id="add-child" class="voice-form">
            <h3>Add a child</h3>
            <label for="new-nickname">Nickname</label>
            <input id="new-nickname" name="nickname" maxlength="40" required autocomplete="off">
            <label for="new-age">Age (years, optional)</label>
            <input id="new-age" name="age" type="number" min="1" max="18" step="1" inputmode="numeric">
            <button type="submit" class="use">Add</button>
          </form>
          <p class="hint">Only a nickname and an age are kept, on this machine (voice.sqlite); nothing leaves it.</p>
        </section>
        <section class="card" id="play-card" aria-labelledby="play-title" hidden>
          <h2 id="play-title">Play</h2>
          <p class="name" id="child-name"></p>
          <div class="voice-games" role="group" aria-label="Games" id="games"></div>
          <label class="voice-toggle"><input type="checkbox" id="pause-aid"> Pause the hearing aid during games</label>
          <p class="hint">The hearing aid resumes when the game ends or is left.</p>
        </section>
        <section class="card" id="settings-card" aria-labelledby="settings-title" hidden>
          <h2 id="settings-title">Settings</h2>
          <p class="hint" id="scale-note"></p>
          <form id="settings" class="voice-form">
            <label for="edit-nickname">Nickname</label>
            <input id="edit-nickname" maxlength="40" required autocomplete="off">
            <label for="edit-age">Age (years, optional)</label>
            <input id="edit-age" type="number" min="1" max="18" step="1" inputmode="numeric">
            <div id="settings-fields" class="voice-fields"></div>
            <div class="actions">
              <button type="submit" class="use">Save settings</button>
              <button type="button" id="archive-child" class="danger">Archive the child</button>
            </div>
          </form>
        </section>
        <section class="card voice-wide" id="progress-card" aria-labelledby="progress-title" hidden>
          <h2 id="progress-title">Progress</h2>
          <div id="progress-chart"></div>
          <div class="actions" id="downloads"></div>
          <div class="voice-table-wrap" tabindex="0" role="region" aria-label="Sessions (scrolls sideways)">
          <table id="sessions">
            <caption>Sessions, newest first</caption>
            <thead><tr><th scope="col">Date</th><th scope="col">Game</th><th scope="col">Outcome</th><th scope="col">Minutes</th>
              <th scope="col">Successes / sounds</th><th scope="col">In target</th><th scope="col">Pitch</th></tr></thead>
            <tbody></tbody>
          </table>
          </div>
        </section>
        </main>

        """#

    static let css = #"""
        #voice-main .voice-wide { grid-column: 1 / -1; }
        #voice-main > * { min-width: 0; }
        .voice-children { list-style: none; margin: 0 0 0.8rem; padding: 0; display: grid; gap: 0.4rem; }
        .voice-children button { width: 100%; text-align: left; }
        .voice-form { display: grid; gap: 0.3rem; }
        .voice-form h3 { margin: 0.4rem 0 0; font-size: 1rem; }
        .voice-form label { font-weight: 600; }
        .voice-form input, .voice-form select { font: inherit; min-height: 2.8rem; padding: 0.2rem 0.5rem; border: 3px solid var(--line); border-radius: 0.4rem;
          background: var(--paper); color: var(--ink); width: 100%; }
        .voice-fields { display: grid; grid-template-columns: 1fr; gap: 0.3rem 0.8rem; margin-top: 0.4rem; }
        @media (min-width: 30rem) { .voice-fields { grid-template-columns: 1fr 1fr; } }
        .voice-fields div { display: grid; gap: 0.1rem; }
        .voice-games { display: grid; grid-template-columns: repeat(auto-fit, minmax(7rem, 1fr)); gap: 0.5rem; margin: 0.5rem 0 0.8rem; }
        .voice-games button { min-height: 4rem; font-size: 1.2rem; }
        .voice-toggle { display: flex; align-items: center; gap: 0.5rem; font-weight: 600; min-height: 3rem; }
        .voice-toggle input { width: 1.4rem; height: 1.4rem; accent-color: var(--accent); }
        .voice-table-wrap { overflow-x: auto; }
        #sessions { border-collapse: collapse; width: 100%; margin-top: 0.6rem; }
        #sessions caption { text-align: left; font-weight: 700; }
        #sessions th, #sessions td { border-bottom: 2px solid var(--line); padding: 0.3rem 0.5rem; text-align: left; white-space: nowrap; }
        #progress-chart img { width: 100%; max-width: 40rem; height: auto; background: #fff; }

        """#

    static let javaScript = #"""
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
          try { localStorage.setItem("ribbit-voice-child", String(chosen.id)); } catch (error) { /* not kept */ }
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
          if (picture && picture.ok) {
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
            const pitch = sum && sum.f0LowHz ? Math.round(sum.f0LowHz) + "–" + Math.round(sum.f0HighHz) + " Hz" : "–";
            body.append(el("tr", {}, cell(new Date(s.started * 1000).toLocaleString()), cell(gameNames[s.game] || s.game), cell(s.outcome),
              cell(((s.ended - s.started) / 60).toFixed(1)), cell(sum ? sum.successes + " / " + sum.attempts : "–"), cell(inTarget), cell(pitch)));
          }
        }

        async function send(path, body, done) {
          showMessage("");
          const response = await postJSON(path, body).catch(() => null);
          if (!response) { showMessage(unreachable); return; }
          if (!response.ok) { showMessage(await response.text()); return; }
          done(await response.json());
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
            try { localStorage.removeItem("ribbit-voice-child"); } catch (error) { /* not kept */ }
            await load();
            choose(null);
          });
        });

        const pauseToggle = $("pause-aid");
        pauseToggle.checked = (() => { try { return localStorage.getItem("ribbit-voice-pause") === "1"; } catch (error) { return false; } })();
        pauseToggle.addEventListener("change", () => {
          try { localStorage.setItem("ribbit-voice-pause", pauseToggle.checked ? "1" : "0"); } catch (error) { /* not kept */ }
        });

        load();

        """#
}
