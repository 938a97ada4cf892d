import Foundation
import Hummingbird
import RibbitAudiometry
import RibbitControl
import RibbitPlot
import RibbitPrescription

/// The Hearing test screen: the daemon runs the test (`hearing-test-start`, `-answer`, `-stop`);
/// the page only forwards the listener's presses and draws `status.hearingTest`, polled from
/// /api/status. The status never says when a tone plays, and neither does the page.
enum HearingTestScreen {
    static let path = "/hearing-test"
    static let script = "/hearing-test.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit: hearing test", script: script, connecting: "Connecting to the hearing aid…",
            main: main)
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        let owner = TestOwner()
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.post("/api/hearing-test/start") { request, context in
            let body = try await WebApp.decode(StartBody.self, from: request, context: context)
            switch body.request() {
            case .success(let control):
                let (answer, lease) = await daemon.hold(control)
                if let lease { owner.hold(lease) }
                return WebApp.reply(answer)
            case .failure(let failure): return WebApp.plain(.badRequest, failure.message)
            }
        }
        // The page's poll while a test runs: it keeps the test's lease (`TestOwner`).
        router.get("/api/hearing-test/status") { _, _ in
            owner.seen()
            let answer = await daemon.send(ControlRequest(command: .status))
            if case .status(let status) = answer, status.hearingTest.map({ $0.state == .finished || $0.state == .stopped }) ?? true {
                owner.release()
            }
            return WebApp.reply(answer)
        }
        router.post("/api/hearing-test/answer") { request, context in
            owner.seen()
            let body = try await WebApp.decode(AnswerBody.self, from: request, context: context)
            var control = ControlRequest(command: .hearingTestAnswer)
            control.ear = body.ear
            return await WebApp.reply(daemon.send(control))
        }
        router.post("/api/hearing-test/stop") { _, _ in
            let answer = await daemon.send(ControlRequest(command: .hearingTestStop))
            owner.release()
            return WebApp.reply(answer)
        }
        // The audiogram so far, drawn by RibbitPlot as the Load and Details screens' is: the page
        // fetches it only when a frequency is added, so polling the status stays small.
        router.get("/api/hearing-test/audiogram") { _, _ in
            let answer = await daemon.send(ControlRequest(command: .status))
            guard case .status(let status) = answer else { return WebApp.reply(answer) }
            return Assets.response(audiogram(status.hearingTest?.frequencies ?? []), type: "image/svg+xml; charset=utf-8")
        }
    }

    struct Failure: Error { var message: String }

    /// The test a page started runs on a daemon connection of ribbit-web's (a lease, so the
    /// test also ends if ribbit-web dies). The page asks for the status every 200 ms while the
    /// test runs (a hidden tab: every second); when it has not asked for `pageGoneSeconds`
    /// (closed, crashed, its machine asleep) the lease is closed, the daemon stops the test and
    /// the hearing aid plays again. Leaving the page normally stops the test at once (pagehide).
    final class TestOwner: @unchecked Sendable {
        static let pageGoneSeconds = 3.0
        private let lock = NSLock()
        private var lease: DaemonLease?
        private var lastSeen = 0.0
        private var watching = false

        func hold(_ lease: DaemonLease) {
            lock.lock()
            let previous = self.lease
            self.lease = lease
            lastSeen = MonotonicClock.seconds()
            let startWatch = !watching
            watching = true
            lock.unlock()
            previous?.close()
            if startWatch { Task.detached { await self.watch() } }
        }

        func seen() {
            lock.lock()
            lastSeen = MonotonicClock.seconds()
            lock.unlock()
        }

        func release() {
            lock.lock()
            let held = lease
            lease = nil
            lock.unlock()
            held?.close()
        }

        /// Closes the lease of a page that went quiet; ends when nothing is held.
        private func watch() async {
            while true {
                try? await Task.sleep(nanoseconds: 250_000_000)
                guard closeIfAbandoned() else { return }
            }
        }

        /// One look: closes an abandoned lease; false once nothing is held (the watch ends).
        private func closeIfAbandoned() -> Bool {
            lock.lock()
            let held = lease
            let abandoned = held != nil && MonotonicClock.seconds() - lastSeen > Self.pageGoneSeconds
            if held == nil || abandoned { watching = false }
            if abandoned { lease = nil }
            lock.unlock()
            if abandoned { held?.close() }
            return held != nil && !abandoned
        }
    }

    /// What the page's Start sends: the headphones and the better ear (tested first); the
    /// tests also pass the ears, frequencies and seed to keep a run short and repeatable.
    struct StartBody: Decodable {
        var transducer: String?
        /// "right", "left", or "unknown" (the right ear first).
        var betterEar: String?
        var ears: [String]?
        var frequenciesHz: [Int]?
        var seed: UInt64?

        func request() -> Result<ControlRequest, Failure> {
            var control = ControlRequest(command: .hearingTestStart)
            let transducer = transducer ?? Transducer.consumer.rawValue
            guard Transducer(rawValue: transducer) != nil else {
                let known = Transducer.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(Failure(message: "headphones '\(transducer)' are unknown: choose one of \(known); nothing started"))
            }
            control.transducer = transducer
            switch (ears, betterEar ?? "unknown") {
            case (let ears?, _): control.testEars = ears
            case (nil, "right"): control.testEars = ["right", "left"]
            case (nil, "left"): control.testEars = ["left", "right"]
            case (nil, "unknown"): break
            case (nil, let other): return .failure(Failure(message: "betterEar '\(other)' is not right, left or unknown; nothing started"))
            }
            control.frequenciesHz = frequenciesHz
            control.seed = seed
            return .success(control)
        }
    }

    struct AnswerBody: Decodable { var ear: String? }

    /// The thresholds measured so far as an audiogram (the 1 kHz retests are a reliability check,
    /// not the audiogram; an undetermined frequency has nothing to draw).
    static func audiogram(_ results: [FrequencyResult]) -> String {
        func points(_ ear: Ear) -> [AudiogramPoint] {
            results.filter { $0.ear == ear && !$0.isRetest }.compactMap { result -> AudiogramPoint? in
                switch result.status {
                case .threshold: result.thresholdDBHL.map { AudiogramPoint(frequencyHz: result.frequencyHz, dBHL: $0) }
                case .noResponse: AudiogramPoint(frequencyHz: result.frequencyHz, dBHL: result.maximumTestedDBHL, noResponse: true)
                case .undetermined: nil
                }
            }.sorted { $0.frequencyHz < $1.frequencyHz }
        }
        return AudiogramSVG.chart(right: points(.right), left: points(.left), title: "Audiogram from this hearing test")
    }

    static let main = #"""
        <main class="hearing">
          <section id="before" class="card" aria-labelledby="before-title" hidden>
            <h2 id="before-title">Hearing test</h2>
            <div class="before-grid">
            <ol class="steps">
              <li>Sit in a quiet room: no radio, no talking, windows shut.</li>
              <li>Put the headphones on the right way round: <strong>red on the right ear</strong>, blue on the left.</li>
              <li>You will hear short beeps, some very faint. <strong>Whenever you hear a beep, however faint, press the big button</strong>
                (or the space bar) at once. If you are not sure, press anyway.</li>
              <li>It takes about 10 minutes. The hearing aid is off until it ends.</li>
            </ol>
            <form id="start-form" class="fields">
              <label for="transducer">Headphones
                <select id="transducer">
                  <option value="consumer" selected>My own headphones</option>
                  <option value="tdh39">Telephonics TDH-39</option>
                  <option value="hda200">Sennheiser HDA 200</option>
                  <option value="er3a">Etymotic ER-3A inserts</option>
                </select>
              </label>
              <fieldset id="better" class="choices">
                <legend>Which ear hears better?</legend>
                <label><input type="radio" name="better" value="right"> Right</label>
                <label><input type="radio" name="better" value="left"> Left</label>
                <label><input type="radio" name="better" value="unknown" checked> Don't know</label>
              </fieldset>
              <button id="start" type="submit" class="primary">Start the test</button>
            </form>
            </div>
          </section>

          <section id="during" class="card" aria-labelledby="during-title" hidden>
            <h2 id="during-title">Listening</h2>
            <p id="where" class="state">–</p>
            <p id="noise" class="noise" role="status" hidden></p>
            <button id="heard" type="button" class="heard" aria-describedby="heard-hint">I heard a beep</button>
            <p id="heard-hint" class="hint">Press whenever you hear a beep, however faint: this button, the space bar or Enter.</p>
            <label for="progress" class="progress-label">Progress: <span id="progress-text">–</span></label>
            <progress id="progress" max="1" value="0"></progress>
            <dl>
              <dt>Time</dt><dd><span id="elapsed" role="timer" aria-live="off">0:00</span></dd>
            </dl>
            <div class="actions">
              <button id="stop" type="button" class="danger">Stop the test</button>
            </div>
          </section>

          <section id="after" class="card" aria-labelledby="after-title" hidden>
            <h2 id="after-title">Result</h2>
            <p id="outcome" class="state">–</p>
            <div id="unreliable" class="unreliable" role="alert" hidden></div>
            <ul id="flags" class="flags"></ul>
            <p id="problem" class="hint" hidden></p>
            <dl>
              <dt>Record</dt><dd id="record">–</dd>
              <dt>Headphones</dt><dd id="headphones">–</dd>
              <dt>Time</dt><dd id="took">–</dd>
            </dl>
            <div id="result-links" class="actions" hidden>
              <a id="report-link" href="/hearing-test">Printable report</a>
              <a id="fhir-link" href="/hearing-test" download>FHIR for your doctor</a>
              <button id="fit" type="button" class="use">Try a fitting (15 min)</button>
            </div>
            <div class="actions">
              <button id="again" type="button">Test again</button>
            </div>
          </section>

          <section id="chart-card" class="card" aria-labelledby="chart-title" hidden>
            <h2 id="chart-title">Audiogram</h2>
            <figure id="chart" class="audiogram"></figure>
            <p class="hint">Right ear O in red, left ear X in blue; lower on the chart means louder beeps were needed.
              An arrow: no answer even at the loudest level.</p>
          </section>

          <section id="fit-card" class="card" aria-labelledby="trial-title" hidden>
            <h2 id="trial-title">Trying a fitting</h2>
            <p id="trial-left" class="state" role="timer" aria-live="off">–</p>
            <p id="trial-back" class="hint" role="status">–</p>
            <div class="actions">
              <button id="keep" type="button" class="use">Keep it</button>
              <button id="revert" type="button">Revert now</button>
            </div>
          </section>

          <section id="earlier" class="card" aria-labelledby="earlier-title" hidden>
            <h2 id="earlier-title">Your tests</h2>
            <p class="hint">A self-test is a screening, not a clinical audiogram. The report and the FHIR file say so for your doctor.</p>
            <ul id="earlier-list" class="earlier"></ul>
          </section>
        </main>

        """#

    static let javaScript = #"""
        "use strict";
        // The Hearing test screen: polls /api/status five times a second while a test runs (once
        // a second otherwise) and draws status.hearingTest; the big button sends each press at
        // once (on pointer down, not click, so the daemon's response time is the listener's).
        // Nothing here is spoken during the test: a screen reader talking would mask the beeps.
        const earNames = { right: "Right ear", left: "Left ear" };
        const headphoneNames = { consumer: "Own headphones", tdh39: "TDH-39", hda200: "HDA 200", er3a: "ER-3A inserts" };
        const flagWords = {
          "false-alarms": "You pressed often when no beep played, so the thresholds may be too good. Test again, pressing only for beeps.",
          "retest-difference": "The two measurements at 1000 Hz differ by more than 10 dB: the answers were not consistent. Test again.",
          "undetermined": "Some frequencies found no threshold (the answers were too inconsistent): test again.",
          "no-response-anywhere": "No beep was heard at any frequency: check the headphones are on, plugged in and not muted.",
          "incomplete": "The test stopped before every frequency was measured.",
        };
        const unreliableFlags = ["false-alarms", "retest-difference"];
        let test = null, last = null, newTest = false, busy = false, chartKey = "", stopArmed = null, daemonDown = false;
        let listedFor = null;

        function clock(seconds) {
          const s = Math.max(0, Math.floor(seconds || 0));
          return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
        }
        function hz(f) { return f >= 1000 ? (f / 1000) + " kHz" : f + " Hz"; }
        function view(t) {
          if (!t || (newTest && t.state !== "running" && t.state !== "paused-noise")) return "before";
          return t.state === "running" || t.state === "paused-noise" ? "during" : "after";
        }

        function noiseText(noise) {
          const band = noise && noise.loudBandHz ? "around " + hz(noise.loudBandHz) : "";
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
          const listKey = shown === "during" ? null : String(t && t.recordID);
          $("earlier").hidden = shown === "during" || $("earlier-list").childElementCount === 0;
          if (listKey !== null && listKey !== listedFor) { listedFor = listKey; listTests(); }
          if (shown === "during") {
            const paused = t.state === "paused-noise";
            $("where").textContent = paused ? "Paused" : t.ear ? earNames[t.ear] + ", " + hz(t.frequencyHz) : "Starting…";
            $("heard").classList.toggle("paused", paused);
            $("noise").hidden = !paused;
            if (paused) $("noise").textContent = noiseText(t.noise);
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
          $("flags").replaceChildren(...t.flags.filter((f) => !unreliableFlags.includes(f)).map((f) => el("li", { text: flagWords[f] || f })));
          $("problem").hidden = !t.problem || t.state !== "finished";
          $("problem").textContent = t.problem || "";
          $("record").textContent = t.recordID != null ? "Hearing test " + t.recordID + " (ribbitd audiogram show " + t.recordID + ")" : "Not stored";
          $("headphones").textContent = headphoneNames[t.transducer] || t.transducer;
          $("took").textContent = clock(t.elapsedSeconds);
          $("result-links").hidden = t.recordID == null;
          $("fit").hidden = bad.length > 0;  // refused anyway: the box above says why
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
          const name = last && last.prescription ? last.prescription.name : "a prescription";
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
              const flags = entry.flags.length === 0 ? "no flags" : entry.unreliable ? "unreliable" : entry.flags.join(", ");
              return el("li", {},
                el("p", {}, el("strong", { text: "Test " + entry.id }), " ",
                  el("time", { datetime: entry.date, text: isNaN(when) ? entry.date : localTime.format(when) }),
                  ", " + (headphoneNames[entry.transducer] || entry.transducer) + ", " + flags),
                el("div", { class: "actions" },
                  needsSession(el("a", { href: "/hearing-test/report/" + entry.id, text: "Report", "aria-label": "Printable report of " + label }), false),
                  needsSession(el("a", { href: "/api/hearing-test/fhir/" + entry.id, download: "", text: "FHIR", "aria-label": "FHIR for your doctor, " + label }), true),
                  entry.unreliable ? null : fitButton(entry.id, "Try a fitting", "Try a fitting from " + label + " for 15 minutes")));
            }));
            $("earlier").hidden = tests.length === 0 || !$("during").hidden;
          } catch (error) {
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
          } catch (error) {
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
          try {
            const response = await session.api("/api/hearing-test/status");
            if (!response.ok) { disconnected((await response.text()).trim()); return; }
            render(await response.json());
            if (daemonDown) { daemonDown = false; showMessage(""); }
          } catch (error) {
            disconnected(unreachable);
          }
        }

        async function send(path, body) {
          try {
            const response = await postJSON(path, body);
            if (!response.ok) { showMessage((await response.text()).trim()); return false; }
            showMessage("");
            render(await response.json());
            return true;
          } catch (error) {
            showMessage(unreachable);
            return false;
          }
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

        """#

    static let css = #"""
        .hearing { grid-template-columns: 1fr; }
        @media (min-width: 60rem) { .hearing { grid-template-columns: minmax(0, 1fr) minmax(0, 34rem); align-items: start; } }
        #before { grid-column: 1 / -1; }
        .before-grid { display: grid; gap: 0.5rem 2rem; }
        @media (min-width: 60rem) { .before-grid { grid-template-columns: 1fr 1fr; align-items: start; } }
        .hearing .audiogram svg { max-width: 27rem; margin: 0 auto; }
        .steps { margin: 0 0 1rem; padding-left: 1.4rem; font-size: 1.1rem; }
        .steps li { margin-bottom: 0.5rem; }
        .fields .choices { grid-template-columns: repeat(3, 1fr); }
        .fields .choices legend { position: static; width: auto; height: auto; clip: auto; grid-column: 1 / -1; font-weight: 600;
          margin-bottom: 0.2rem; }
        .fields .choices label { display: flex; }
        .fields .choices input { width: 1.15rem; height: 1.15rem; min-height: 0; padding: 0; }
        .fields .primary { margin: 0.4rem 0 0; }
        button.heard { display: block; width: 100%; min-height: 14rem; margin: 0.4rem 0 0.6rem; font-size: 2rem; border-radius: 1.2rem;
          background: var(--accent); border-color: var(--accent); color: #fff; touch-action: manipulation; user-select: none;
          -webkit-user-select: none; }
        /* Paused for noise: nothing plays, so the button steps back (no opacity: its text keeps its contrast). */
        button.heard.paused { background: var(--paper); color: var(--ink); border-style: dashed; }
        button.heard.ack { animation: heard-ack 0.3s ease-out; }
        @keyframes heard-ack { from { background: var(--ink); border-color: var(--ink); transform: scale(0.97); } to { transform: none; } }
        .noise { font-size: 1.2rem; font-weight: 700; color: var(--warn); border: 3px solid var(--warn); border-radius: 0.5rem;
          padding: 0.5rem 0.7rem; margin: 0 0 0.7rem; }
        .progress-label { display: block; font-weight: 600; margin-top: 0.4rem; }
        progress { display: block; width: 100%; height: 1.6rem; margin: 0.3rem 0 0.7rem; accent-color: var(--accent); }
        .unreliable { border: 4px solid var(--warn); border-radius: 0.5rem; padding: 0.6rem 0.8rem; margin: 0 0 0.7rem; color: var(--warn);
          font-size: 1.15rem; }
        .unreliable p { margin: 0.4rem 0 0; }
        .flags { margin: 0 0 0.7rem; padding-left: 1.4rem; font-weight: 600; }
        .flags:empty { display: none; }
        #trial-left { font-size: 1.3rem; }
        #trial-left:focus { outline: none; }
        .earlier { list-style: none; margin: 0; padding: 0; }
        .earlier li { border-top: 2px solid var(--line); padding: 0.6rem 0; }
        .earlier li p { margin: 0; }
        .earlier .actions { margin-top: 0.4rem; }
        @media (prefers-color-scheme: dark) { button.heard { color: #000; } button.heard.paused { color: var(--ink); } }

        """#
}
