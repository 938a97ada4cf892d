import Foundation
import Hummingbird
import RibbitControl

/// The Home screen: the active prescription, play/pause, bypass, volume, program and the
/// system's state, polled from /api/status; and the control requests its buttons send.
enum HomeScreen {
    static let path = "/"
    static let script = "/app.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit", script: script, connecting: "Connecting to the hearing aid…", main: main)
    }

    /// Each a control request, answered with the daemon's new status.
    static func addRoutes<Context: RequestContext>(to router: Router<Context>, daemon: DaemonBridge) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }

        router.get("/api/status") { _, _ in await WebApp.reply(daemon.send(ControlRequest(command: .status))) }
        router.post("/api/pause") { _, _ in await WebApp.reply(daemon.send(ControlRequest(command: .pause))) }
        router.post("/api/resume") { _, _ in await WebApp.reply(daemon.send(ControlRequest(command: .resume))) }
        // A trial: keep it, or go back now (what `ribbitd keep` and `ribbitd revert` do).
        router.post("/api/keep") { _, _ in await WebApp.reply(daemon.send(ControlRequest(command: .keep))) }
        router.post("/api/revert") { _, _ in await WebApp.reply(daemon.send(ControlRequest(command: .revert))) }
        router.post("/api/bypass") { request, context in
            let body = try await WebApp.decode(BypassBody.self, from: request, context: context)
            return await WebApp.reply(daemon.send(ControlRequest(command: .bypass, on: body.on)))
        }
        router.post("/api/volume") { request, context in
            let body = try await WebApp.decode(VolumeBody.self, from: request, context: context)
            var control = ControlRequest(command: .volume)
            switch (body.volumeDB, body.stepDB) {
            case (let level?, nil) where level.isFinite: control.volumeDB = level
            case (nil, let step?) where step.isFinite: control.volumeStepDB = step
            default: return WebApp.plain(.badRequest, "give either volumeDB (a level) or stepDB (a step), in dB")
            }
            return await WebApp.reply(daemon.send(control))
        }
        router.post("/api/program") { request, context in
            let body = try await WebApp.decode(ProgramBody.self, from: request, context: context)
            var control = ControlRequest(command: .program)
            control.program = body.program
            return await WebApp.reply(daemon.send(control))
        }
    }

    struct BypassBody: Decodable { var on: Bool }
    struct VolumeBody: Decodable {
        var volumeDB: Double?
        var stepDB: Double?
    }
    struct ProgramBody: Decodable { var program: String }

    static let main = #"""
        <main>
          <section class="card" aria-labelledby="rx-title">
            <h2 id="rx-title">Prescription</h2>
            <p id="rx-name" class="name">–</p>
            <dl>
              <dt>Environment</dt><dd id="rx-env">–</dd>
              <dt>Signature</dt><dd id="rx-signature">–</dd>
              <dt>Audiologist</dt><dd id="rx-audiologist">–</dd>
            </dl>
            <div id="trial" class="trial" hidden>
              <p id="trial-left" class="state" role="timer" aria-live="off">–</p>
              <p id="trial-back" class="hint">–</p>
              <div class="actions">
                <button id="keep" type="button" class="use">Keep it</button>
                <button id="revert" type="button">Revert now</button>
              </div>
            </div>
          </section>

          <section class="card" aria-labelledby="sound-title">
            <h2 id="sound-title">Sound</h2>
            <p id="output" class="state">–</p>
            <p class="limit"><strong>Output limit:</strong> <span id="output-limit">–</span></p>
            <p class="hint">The loudest this hearing aid plays into each ear, whatever comes in. Only an audiologist's prescription can raise it.</p>
            <button id="pause" type="button" class="primary" disabled>Pause</button>
            <button id="bypass" type="button" aria-pressed="false" disabled>Bypass: off</button>
            <p class="hint">Bypass plays the world unprocessed, with the same delay.</p>
          </section>

          <section class="card" aria-labelledby="volume-title">
            <h2 id="volume-title">Volume</h2>
            <div class="volume">
              <button id="volume-down" type="button" aria-label="Softer by 1 dB" disabled>−</button>
              <output id="volume" aria-live="polite" aria-labelledby="volume-title">–</output>
              <button id="volume-up" type="button" aria-label="Louder by 1 dB" disabled>+</button>
            </div>
            <p id="volume-range" class="hint">–</p>
          </section>

          <section class="card" id="program-card" aria-labelledby="program-title">
            <h2 id="program-title">Program</h2>
            <fieldset id="programs" disabled>
              <legend>Listening program</legend>
              <label><input type="radio" name="program" value="quiet"> Quiet</label>
              <label><input type="radio" name="program" value="noisy"> Noisy</label>
              <label><input type="radio" name="program" value="outdoor"> Outdoor</label>
              <label><input type="radio" name="program" value="music"> Music</label>
              <label><input type="radio" name="program" value="auto"> Auto</label>
            </fieldset>
            <p id="program-reason" class="hint">–</p>
          </section>

          <section class="card" aria-labelledby="system-title">
            <h2 id="system-title">System</h2>
            <dl>
              <dt>JACK</dt><dd id="jack">–</dd>
              <dt>Latency</dt><dd id="latency">–</dd>
              <dt>Xruns</dt><dd id="xruns">–</dd>
              <dt>CPU</dt><dd id="cpu">–</dd>
            </dl>
          </section>
        </main>

        """#

    static let javaScript = #"""
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
          $("rx-audiologist").textContent = rx && rx.audiologist ? rx.audiologist : "–";

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
          try {
            const response = await session.api("/api/status");
            if (!response.ok) { disconnected((await response.text()).trim()); return; }
            render(await response.json());
            if (daemonDown) { daemonDown = false; showMessage(""); }
          } catch (error) {
            disconnected(unreachable);
          }
        }

        async function send(path, body) {
          busy = true;
          try {
            const response = await postJSON(path, body);
            if (response.ok) {
              showMessage("");
              render(await response.json());
            } else {
              showMessage((await response.text()).trim());
            }
          } catch (error) {
            showMessage(unreachable);
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

        """#
}
