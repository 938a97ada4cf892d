import Foundation
import Hummingbird
import RibbitControl
import RibbitPrescription
import RibbitStore

/// The Fitting screen, the audiologist's tool: an audiogram per ear and a rule give the target
/// gains (computed here by RibbitFitting, as `ribbitd rx show` does, never in the page); a trial
/// on the wearer through the daemon (`ribbitd load --trial`, `keep`, `revert`); and the signed
/// QR code (`ribbitd rx make --sign`), signed here with a key the browser only knows by name.
enum FittingScreen {
    static let path = "/fitting"
    static let script = "/fitting.js"

    static var html: String {
        Assets.screen(
            path: path, title: "ribbit: fitting", script: script, connecting: "Connecting to the hearing aid…", main: main)
    }

    static func addRoutes<Context: RequestContext>(
        to router: Router<Context>, daemon: DaemonBridge, history: HistoryBridge, keys: SigningKeys
    ) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.get("/api/fitting/keys") { _, _ in WebApp.json(HistoryEntry.json(keys.list())) }
        router.get("/api/fitting/start") { _, _ in await start(history) }
        router.post("/api/fitting/targets") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            do throws(FittingForm.Failure) {
                return WebApp.json(HistoryEntry.json(try FittingForm.targets(try form.prescription(named: false))))
            } catch {
                return failed(error, then: nil)
            }
        }
        router.post("/api/fitting/trial") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            let minutes = form.minutes ?? 15
            guard (1...120).contains(minutes) else { return WebApp.plain(.badRequest, "a trial lasts 1 to 120 minutes; nothing changed") }
            let rx: Prescription
            do throws(FittingForm.Failure) { rx = try form.prescription(named: true, date: today()) } catch {
                return failed(error, then: "nothing changed")
            }
            // Unsigned, as a trial from `ribbitd load --trial` of an unsigned file: the daemon's checks decide.
            return await WebApp.reply(
                daemon.send(
                    ControlRequest(
                        command: .load, prescription: rx.text, source: "the web app's Fitting screen", trialSeconds: minutes * 60)))
        }
        router.post("/api/fitting/qr") { request, context in
            let form = try await WebApp.decode(FittingForm.self, from: request, context: context)
            guard let key = form.key, !key.isEmpty else {
                return WebApp.plain(.badRequest, "choose a signing key; nothing made")
            }
            let rx: Prescription
            do throws(FittingForm.Failure) { rx = try form.prescription(named: true, date: today()) } catch {
                return failed(error, then: "nothing made")
            }
            switch await keys.make(rx, keyName: key, passphrase: form.passphrase) {
            case .success(let made): return WebApp.json(HistoryEntry.json(made))
            case .failure(let failure): return failed(failure, then: nil)
            }
        }
    }

    static func failed(_ failure: FittingForm.Failure, then: String?) -> Response {
        WebApp.plain(HTTPResponse.Status(code: failure.status), failure.message + (then.map { "; " + $0 } ?? ""))
    }

    /// The prescription's date, as `rx make --date` takes it: today here.
    static func today() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }

    /// The form filled from the active prescription (a fitting usually adjusts what the wearer
    /// has); 404 when there is none.
    static func start(_ history: HistoryBridge) async -> Response {
        guard case .success(let entries) = await history.list(), let active = entries.first(where: \.active),
            case .success(let (_, bytes)) = await history.export(id: active.id, as: .rx),
            let rx = try? Prescription.parse(Array(bytes))
        else { return WebApp.plain(.notFound, "no active prescription to start from") }
        struct Start: Encodable {
            var rule: String
            var name, env: String
            var audiologist, patient: String?
            var left, right: [String: Int]?
        }
        func ear(_ ear: Ear) -> [String: Int]? {
            rx.thresholds[ear].map {
                Dictionary(uniqueKeysWithValues: $0.filter { FittingForm.frequencies.contains($0.key) }.map { (String($0.key), $0.value) })
            }
        }
        let rule = FittingForm.rules.contains(rx.rule) ? rx.rule : .camfit
        return WebApp.json(
            HistoryEntry.json(
                Start(
                    rule: rule.rawValue, name: rx.name, env: rx.environment, audiologist: rx.audiologist, patient: rx.patient,
                    left: ear(.left),
                    right: ear(.right))))
    }

    static let ruleNames: [FittingRule: String] = [
        .camfit: "CAMFIT (compressive)", .nalR: "NAL-R (linear)", .halfGain: "Half-gain (linear)", .pogo2: "POGO II (linear)",
    ]

    static var audiogramRows: String {
        FittingForm.frequencies.map { f in
            let cells = ["right", "left"].map { ear in
                #"<td><input id="t-\#(ear)-\#(f)" type="number" min="-10" max="120" step="5" inputmode="numeric" aria-label="\#(ear == "right" ? "Right" : "Left") ear, \#(f) Hz, dB HL"></td>"#
            }
            return "      <tr><th scope=\"row\">\(f)</th>\(cells.joined())</tr>\n"
        }.joined()
    }

    static var main: String {
        let rules = FittingForm.rules.map { #"<option value="\#($0.rawValue)">\#(ruleNames[$0] ?? $0.rawValue)</option>"# }.joined()
        return #"""
            <main class="fitting">
              <h2 id="fitting-title" class="screen-title">Fitting</h2>
              <p class="hint wide">Enter the audiogram; the target gains follow as you type. Try it on the wearer, then make the signed QR code.</p>
              <section id="audiogram-card" class="card" aria-labelledby="audiogram-title">
                <h2 id="audiogram-title">Audiogram, dB HL</h2>
                <svg id="audiogram-chart" class="chart" viewBox="0 0 320 400" role="img" aria-labelledby="audiogram-chart-title"><title id="audiogram-chart-title">Audiogram: right ear O in red, left ear X in blue, louder thresholds lower</title></svg>
                <fieldset class="click-ear">
                  <legend>A click on the chart sets</legend>
                  <label><input type="radio" name="click-ear" value="right" checked> Right</label>
                  <label><input type="radio" name="click-ear" value="left"> Left</label>
                </fieldset>
                <table class="grid">
                  <thead><tr><th scope="col">Hz</th><th scope="col" class="ear-right">Right ○</th><th scope="col" class="ear-left">Left ×</th></tr></thead>
                  <tbody>
            \#(audiogramRows)      </tbody>
                </table>
              </section>
              <section id="targets-card" class="card" aria-labelledby="targets-title">
                <h2 id="targets-title">Target gains, dB</h2>
                <p id="targets-state" class="hint" role="status">Enter 500, 1000, 2000 and 4000 Hz for an ear.</p>
                <p id="targets-shortfall" class="hint" hidden></p>
                <svg id="gain-chart" class="chart" viewBox="0 0 320 250" role="img" aria-labelledby="gain-chart-title"><title id="gain-chart-title">Insertion gains ribbit plays: right ear in red, left ear in blue; dashed, the rule's target where it asks for more</title></svg>
                <table class="grid">
                  <thead><tr><th scope="col">Hz</th><th scope="col" class="ear-right">Right</th><th scope="col" class="ear-left">Left</th></tr></thead>
                  <tbody id="targets-body"></tbody>
                </table>
              </section>
              <section id="fields-card" class="card" aria-labelledby="fields-title">
                <h2 id="fields-title">Prescription</h2>
                <div class="fields">
                  <label>Name <input id="f-name" type="text" maxlength="80" autocomplete="off"></label>
                  <label>Environment <input id="f-env" type="text" maxlength="40" list="envs" autocomplete="off"></label>
                  <datalist id="envs"><option value="quiet"></option><option value="noisy"></option><option value="outdoor"></option><option value="music"></option></datalist>
                  <label>Audiologist <input id="f-audiologist" type="text" maxlength="80" autocomplete="name"></label>
                  <label>Patient <input id="f-patient" type="text" maxlength="80" autocomplete="off"></label>
                  <label>Fitting rule <select id="f-rule">\#(rules)</select></label>
                </div>
              </section>
              <section id="trial-card" class="card" aria-labelledby="trial-title">
                <h2 id="trial-title">Try it on the wearer</h2>
                <label class="inline">For <select id="trial-minutes"><option value="5">5 minutes</option><option value="15" selected>15 minutes</option><option value="30">30 minutes</option><option value="60">60 minutes</option></select></label>
                <button id="try" type="button" class="primary">Try it now</button>
                <p id="trial-state" class="state" role="status">No trial running.</p>
                <div class="actions">
                  <button id="keep" type="button" disabled>Keep</button>
                  <button id="revert" type="button" disabled>Revert</button>
                </div>
              </section>
              <section id="qr-card" class="card" aria-labelledby="qr-title">
                <h2 id="qr-title">Signed QR code</h2>
                <form id="qr-form">
                <div class="fields">
                  <label>Signing key <select id="key"></select></label>
                  <label id="passphrase-label" hidden>Key passphrase <input id="passphrase" type="password" autocomplete="off"></label>
                </div>
                <p id="key-hint" class="hint">The keys in the keys folder; the private key stays on this machine.</p>
                <button id="make" type="submit" class="primary">Make the QR code</button>
                </form>
                <figure id="qr-result" hidden>
                  <img id="qr-image" alt="The prescription's signed QR code">
                  <figcaption id="qr-caption"></figcaption>
                </figure>
                <div id="qr-actions" class="actions" hidden>
                  <button id="print" type="button">Print</button>
                  <a id="download-rx" href="/fitting" download="ribbit.rx">Download .rx</a>
                  <a id="download-png" href="/fitting" download="ribbit.png">Download PNG</a>
                </div>
              </section>
            </main>

            """#
    }

    static let javaScript = #"""
        "use strict";
        // The Fitting screen: the form as JSON to /api/fitting/targets on every change (the
        // server runs the rule), the trial and its Keep / Revert through the daemon, and the QR
        // code made and signed on the server (the passphrase goes once, in that POST).
        const freqs = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000];
        const ears = ["right", "left"];
        const svgNS = "http://www.w3.org/2000/svg";
        let sequence = 0, timer = null, keys = [], trialBusy = false, madeURLs = [];

        function box(ear, f) { return $("t-" + ear + "-" + f); }

        function form() {
          const body = { rule: $("f-rule").value, name: $("f-name").value, env: $("f-env").value,
            audiologist: $("f-audiologist").value, patient: $("f-patient").value, left: {}, right: {} };
          for (const ear of ears) for (const f of freqs) {
            const input = box(ear, f);
            if (input.validity.badInput) throw new Error((ear === "right" ? "Right" : "Left") + " ear, " + f + " Hz: type a number of dB HL");
            body[ear][f] = input.value.trim() === "" ? null : Number(input.value);
          }
          return body;
        }

        function svg(tag, attributes, text) {
          const node = document.createElementNS(svgNS, tag);
          for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
          if (text !== undefined) node.textContent = text;
          return node;
        }

        // Frequency on a log axis, 250 to 8000 Hz (5 octaves), in viewBox units. The audiogram's
        // grid is square by convention (an octave as wide as 20 dB): -10 to 120 dB HL is 6.5 octaves tall.
        const plot = { left: 44, right: 308, top: 26, bottom: 222 };  // the gains, in a 320 x 250 box
        const audiogramPlot = { left: 44, right: 308, top: 26, bottom: 26 + (308 - 44) / 5 * 6.5 };  // in 320 x 400
        function xOf(f) { return plot.left + (plot.right - plot.left) * Math.log(f / 250) / Math.log(32); }

        function axes(chart, area, lo, hi, ticks, downward, unit) {
          chart.querySelectorAll(":not(title)").forEach((n) => n.remove());
          const { left, right, top, bottom } = area;
          const yOf = (v) => downward ? top + (bottom - top) * (v - lo) / (hi - lo) : bottom - (bottom - top) * (v - lo) / (hi - lo);
          for (const v of ticks) {
            chart.append(svg("line", { x1: left, x2: right, y1: yOf(v), y2: yOf(v), class: "rule" }));
            chart.append(svg("text", { x: left - 6, y: yOf(v) + 5, "text-anchor": "end", class: "tick" }, String(v)));
          }
          for (const f of [250, 500, 1000, 2000, 4000, 8000]) {
            chart.append(svg("line", { x1: xOf(f), x2: xOf(f), y1: top, y2: bottom, class: "rule" }));
            chart.append(svg("text", { x: xOf(f), y: bottom + 20, "text-anchor": "middle", class: "tick" }, f >= 1000 ? f / 1000 + "k" : String(f)));
          }
          chart.append(svg("text", { x: 4, y: 14, class: "tick" }, unit));
          return yOf;
        }

        function line(chart, points, ear, yOf) {
          if (points.length > 1) {
            chart.append(svg("polyline", { points: points.map(([f, v]) => xOf(f) + "," + yOf(v)).join(" "), class: "trace " + ear }));
          }
        }

        function drawAudiogram(values) {
          const chart = $("audiogram-chart");
          const yOf = axes(chart, audiogramPlot, -10, 120, [-10, 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120], true, "dB HL");
          for (const ear of ears) {
            const points = freqs.filter((f) => values[ear][f] !== null && Number.isFinite(values[ear][f])).map((f) => [f, values[ear][f]]);
            line(chart, points, ear, yOf);
            for (const [f, v] of points) {
              const x = xOf(f), y = yOf(v);
              if (ear === "right") chart.append(svg("circle", { cx: x, cy: y, r: 6, class: "mark right" }));
              else chart.append(svg("path", { d: `M${x - 6},${y - 6}L${x + 6},${y + 6}M${x + 6},${y - 6}L${x - 6},${y + 6}`, class: "mark left" }));
            }
          }
        }

        function drawTargets(targets) {
          const body = $("targets-body");
          body.replaceChildren();
          const chart = $("gain-chart");
          // Up to the highest target (the rule's wish above ribbit's maximum shows too), 50 at least.
          const highest = targets ? Math.max(50, ...ears.flatMap((ear) => Object.values(targets[ear] || {}).filter((v) => v !== null))) : 50;
          const top = Math.min(100, Math.ceil(highest / 10) * 10);
          const yOf = axes(chart, plot, 0, top, Array.from({ length: top / 10 + 1 }, (_, i) => 10 * i), false, "dB");
          if (!targets) return;
          // A cell says the rule's target, and what plays where that is less (marked "capped").
          const short = (ear, f) => targets[ear] && targets[ear][f] !== null && targets.played[ear][f] < targets[ear][f] - 0.05;
          const cell = (ear, f) => {
            if (!targets[ear]) return el("td", { text: "–" });
            if (targets[ear][f] === null) return el("td", { text: "off" });
            if (!short(ear, f)) return el("td", { text: signed(targets[ear][f]) });
            return el("td", { class: "capped", title: "ribbit plays " + signed(targets.played[ear][f]) + " dB" },
              signed(targets[ear][f]), el("span", { class: "plays", text: " → " + signed(targets.played[ear][f]) }));
          };
          for (const f of freqs) body.append(el("tr", {}, el("th", { scope: "row", text: String(f) }), cell("right", f), cell("left", f)));
          for (const ear of ears) {
            if (!targets[ear]) continue;
            const heard = freqs.filter((f) => targets[ear][f] !== null);
            const wish = heard.map((f) => [f, Math.max(0, Math.min(top, targets[ear][f]))]);
            const plays = heard.map((f) => [f, Math.max(0, Math.min(top, targets.played[ear][f]))]);
            if (heard.some((f) => short(ear, f))) {
              if (wish.length > 1) chart.append(svg("polyline", { points: wish.map(([f, v]) => xOf(f) + "," + yOf(v)).join(" "), class: "trace wish " + ear }));
              for (const f of heard.filter((f) => short(ear, f))) {
                chart.append(svg("line", { x1: xOf(f), x2: xOf(f), y1: yOf(Math.min(top, targets[ear][f])), y2: yOf(targets.played[ear][f]), class: "gap " + ear }));
              }
            }
            line(chart, plays, ear, yOf);
            for (const [f, v] of plays) chart.append(svg("circle", { cx: xOf(f), cy: yOf(v), r: 4, class: "dot " + ear }));
          }
        }

        async function update() {
          const mine = ++sequence;
          let body;
          try { body = form(); } catch (error) { $("targets-state").textContent = error.message; drawTargets(null); return; }
          drawAudiogram(body);
          try {
            const response = await postJSON("/api/fitting/targets", body);
            if (mine !== sequence) return;  // a newer request is on its way
            if (!response.ok) {
              $("targets-state").textContent = (await response.text()).trim();
              drawTargets(null);
              return;
            }
            const targets = await response.json();
            $("targets-state").textContent = "By " + $("f-rule").selectedOptions[0].textContent + (targets.rule === "camfit" ? ", for 65 dB SPL speech." : ".");
            drawTargets(targets);
            const capped = ears.reduce((n, ear) => n + freqs.filter((f) => targets[ear] && targets[ear][f] !== null && targets.played[ear][f] < targets[ear][f] - 0.05).length, 0);
            const short = [capped ? "Ribbit plays at most +50 dB: the dashed line is the rule's target, the cells with an arrow what plays." : "", targets.clinicalNote || ""].filter((s) => s).join(" ");
            $("targets-shortfall").textContent = short;
            $("targets-shortfall").hidden = !short;
          } catch (error) {
            if (mine === sequence) $("targets-state").textContent = unreachable;
          }
        }

        function changed() {
          clearTimeout(timer);
          timer = setTimeout(update, 120);
        }

        function fill(start) {
          $("f-rule").value = start.rule;
          $("f-name").value = start.name || "";
          $("f-env").value = start.env || "";
          $("f-audiologist").value = start.audiologist || "";
          $("f-patient").value = start.patient || "";
          for (const ear of ears) for (const f of freqs) {
            const v = start[ear] ? start[ear][f] : undefined;
            box(ear, f).value = v === undefined ? "" : String(v);
          }
        }

        function clickChart(event) {
          const chart = $("audiogram-chart");
          const point = chart.createSVGPoint();
          point.x = event.clientX;
          point.y = event.clientY;
          const p = point.matrixTransform(chart.getScreenCTM().inverse());
          const f = freqs.reduce((best, f) => Math.abs(xOf(f) - p.x) < Math.abs(xOf(best) - p.x) ? f : best, freqs[0]);
          const db = Math.round((-10 + 130 * (p.y - audiogramPlot.top) / (audiogramPlot.bottom - audiogramPlot.top)) / 5) * 5;
          const ear = document.querySelector('input[name="click-ear"]:checked').value;
          box(ear, f).value = String(Math.max(-10, Math.min(120, db)));
          changed();
        }

        function minutes(seconds) {
          const s = Math.max(0, Math.round(seconds));
          return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
        }

        function showStatus(status) {
          const trial = status.trial;
          $("trial-state").textContent = trial
            ? "Trial: " + minutes(trial.secondsLeft) + " left, then back to " + (trial.revertsTo || "no prescription") + "."
            : "No trial running" + (status.prescription ? "; the wearer has " + status.prescription.name + "." : ".");
          $("keep").disabled = !trial;
          $("revert").disabled = !trial;
        }

        async function poll() {
          try {
            const response = await session.api("/api/status");
            const connection = $("connection");
            connection.classList.toggle("down", !response.ok);
            if (response.ok) {
              connection.textContent = "Connected: ribbitd";
              showStatus(await response.json());
            } else {
              connection.textContent = "Not connected";
              $("trial-state").textContent = (await response.text()).trim();
            }
          } catch (error) {
            $("connection").textContent = "Not connected";
            $("trial-state").textContent = unreachable;
          }
        }

        async function control(path, body, done) {
          if (trialBusy) return;
          trialBusy = true;
          try {
            const response = await postJSON(path, body);
            if (!response.ok) { showMessage((await response.text()).trim()); return; }
            showMessage("");
            showStatus(await response.json());
            $("trial-state").textContent = done + " " + $("trial-state").textContent;
          } catch (error) {
            showMessage(error instanceof Error && !(error instanceof TypeError) ? error.message : unreachable);
          } finally {
            trialBusy = false;
          }
        }

        function tryIt() {
          let body;
          try { body = form(); } catch (error) { showMessage(error.message); return; }
          body.minutes = Number($("trial-minutes").value);
          control("/api/fitting/trial", body, "Now trying " + body.name + ".");
        }

        function keyChosen() {
          const key = keys.find((k) => k.name === $("key").value);
          $("passphrase-label").hidden = !(key && key.protected);
        }

        async function loadKeys() {
          try {
            const response = await session.api("/api/fitting/keys");
            const listing = await response.json();
            keys = listing.keys;
            const select = $("key");
            select.replaceChildren(...keys.map((k) => el("option", { value: k.name, text: k.name + (k.protected ? " (passphrase)" : "") })));
            $("make").disabled = keys.length === 0;
            select.disabled = keys.length === 0;
            $("key-hint").textContent = keys.length === 0
              ? "No signing key in " + listing.directory + ": `ribbitd rx keygen NAME -d " + listing.directory + "` makes one."
              : "Keys from " + listing.directory + "; the private key never leaves this machine.";
            keyChosen();
          } catch (error) {
            showMessage(unreachable);
          }
        }

        async function make(event) {
          event.preventDefault();
          let body;
          try { body = form(); } catch (error) { showMessage(error.message); return; }
          body.key = $("key").value;
          if (!$("passphrase-label").hidden) body.passphrase = $("passphrase").value;
          $("make").disabled = true;
          try {
            const response = await postJSON("/api/fitting/qr", body);
            $("passphrase").value = "";
            if (!response.ok) { showMessage((await response.text()).trim()); return; }
            showMessage("");
            const made = await response.json();
            madeURLs.forEach((url) => URL.revokeObjectURL(url));
            const png = Uint8Array.from(atob(made.png), (c) => c.charCodeAt(0));
            const pngURL = URL.createObjectURL(new Blob([png], { type: "image/png" }));
            const rxURL = URL.createObjectURL(new Blob([made.rx], { type: "text/plain" }));
            madeURLs = [pngURL, rxURL];
            $("qr-image").src = pngURL;
            $("qr-caption").textContent = body.name + " (" + body.env + "), signed by " + made.signedBy + ", key " + made.keyID;
            $("download-png").href = pngURL;
            $("download-png").download = made.fileName + ".png";
            $("download-rx").href = rxURL;
            $("download-rx").download = made.fileName + ".rx";
            $("qr-result").hidden = false;
            $("qr-actions").hidden = false;
            $("print").focus();
          } catch (error) {
            showMessage(unreachable);
          } finally {
            $("make").disabled = keys.length === 0;
          }
        }

        async function start() {
          try {
            const response = await session.api("/api/fitting/start");
            if (response.ok) fill(await response.json());
          } catch (error) {
            showMessage(unreachable);
          }
          update();
        }

        for (const node of document.querySelectorAll(".fitting input, .fitting select")) {
          if (node.id !== "passphrase" && node.id !== "key" && node.id !== "trial-minutes" && node.name !== "click-ear") node.addEventListener("input", changed);
        }
        $("audiogram-chart").addEventListener("click", clickChart);
        $("try").addEventListener("click", tryIt);
        $("keep").addEventListener("click", () => control("/api/keep", {}, "Kept."));
        $("revert").addEventListener("click", () => control("/api/revert", {}, "Reverted."));
        $("key").addEventListener("change", keyChosen);
        $("qr-form").addEventListener("submit", make);
        $("print").addEventListener("click", () => window.print());
        start();
        loadKeys();
        poll();
        setInterval(() => { if (!document.hidden) poll(); }, 1000);

        """#

    static let css = #"""
        :root { --right: #c00000; --left: #0040c0; }
        /* minmax(0, 1fr): a text box's own width must not push a column past a phone's screen. */
        .fitting { align-items: start; grid-template-columns: minmax(0, 1fr); }
        @media (min-width: 40rem) { .fitting { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
        .fitting .screen-title, .fitting > .hint { grid-column: 1 / -1; margin: 0.2rem 0 0; }
        /* A laptop: the audiogram and the targets side by side, the form and the actions right of them (the order in the page). */
        @media (min-width: 60rem) {
          .fitting { grid-template-columns: repeat(3, minmax(0, 1fr)); grid-template-areas: "title title title" "hint hint hint" "audiogram targets fields" "audiogram targets trial"
            "audiogram targets qr" ". . qr"; grid-template-rows: auto auto auto auto auto 1fr; }
          .fitting .screen-title { grid-area: title; }
          .fitting > .hint { grid-area: hint; }
          #fields-card { grid-area: fields; }
          #audiogram-card { grid-area: audiogram; }
          #targets-card { grid-area: targets; }
          #trial-card { grid-area: trial; }
          #qr-card { grid-area: qr; }
        }
        .fields { display: grid; gap: 0.6rem; }
        .fields label, label.inline { display: grid; gap: 0.2rem; font-weight: 600; }
        .fields input, .fields select, label.inline select, .grid input { font: inherit; min-height: 2.8rem; padding: 0.2rem 0.5rem;
          border: 3px solid var(--line); border-radius: 0.4rem; background: var(--paper); color: var(--ink); width: 100%; min-width: 0; }
        label.inline { margin-bottom: 0.6rem; }
        .grid { width: 100%; border-collapse: collapse; margin: 0.3rem 0 0.6rem; }
        .grid th, .grid td { padding: 0.1rem 0.3rem; text-align: right; border-bottom: 1px solid var(--muted); }
        .grid thead th { border-bottom: 3px solid var(--line); }
        .grid input { text-align: right; min-height: 2.3rem; padding: 0 0.4rem; }
        .ear-right { color: var(--right); }
        .ear-left { color: var(--left); }
        .chart { display: block; width: 100%; height: auto; max-width: 30rem; margin: 0.4rem auto; cursor: crosshair; }
        #gain-chart { cursor: default; }
        .chart .rule { stroke: var(--muted); stroke-width: 0.5; }
        .chart .tick { fill: var(--ink); font-size: 13px; }
        .chart .trace { fill: none; stroke-width: 2.5; }
        .chart .right { stroke: var(--right); }
        .chart .left { stroke: var(--left); }
        .chart .mark { fill: none; stroke-width: 3; }
        .chart .dot.right { fill: var(--right); }
        .chart .dot.left { fill: var(--left); }
        .chart .trace.wish { stroke-width: 1.5; stroke-dasharray: 6 4; }
        .chart .gap { stroke-width: 8; stroke-opacity: 0.3; }
        .grid td.capped { font-weight: 700; }
        .grid td.capped .plays { font-weight: 400; color: var(--muted); white-space: nowrap; }
        .click-ear { grid-template-columns: 1fr 1fr; }
        .click-ear legend { position: static; width: auto; height: auto; clip: auto; grid-column: 1 / -1; font-weight: 600; margin-bottom: 0.3rem; }
        #trial-state { font-size: 1.15rem; overflow-wrap: anywhere; }
        #qr-result { margin: 0.8rem 0 0; text-align: center; }
        #qr-image { display: block; width: 100%; max-width: 20rem; height: auto; margin: 0 auto; image-rendering: pixelated; }
        #qr-result figcaption { margin-top: 0.4rem; font-weight: 600; overflow-wrap: anywhere; }
        @media (prefers-color-scheme: dark) { :root { --right: #ff7070; --left: #7fb0ff; } }
        @media print {
          body:has(main.fitting) > header, body:has(main.fitting) > #message, .fitting > :not(#qr-card),
          #qr-card > :not(#qr-result) { display: none !important; }
          .fitting { display: block; }
          #qr-card { border: 0; }
          #qr-image { width: 9cm; max-width: none; }
        }

        """#
}
