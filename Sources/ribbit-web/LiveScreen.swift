import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket

/// The Live screen: `ribbitd dump` in the browser. The daemon's dump frames come over a
/// WebSocket (/api/live/socket, 20 a second, each cut down to what the chart draws: LiveFrame),
/// drawn by /live.js as third-octave input and output levels per ear with the target marked,
/// and the broadband levels; Save writes the last seconds as `ribbitd dump --csv/--svg` does.
enum LiveScreen {
    static let path = "/live"
    static let script = "/live.js"
    static let socketPath = "/api/live/socket"

    static var html: String {
        Assets.screen(path: path, title: "ribbit: live", script: script, connecting: "Connecting…", main: main)
    }

    static func addRoutes<Context: WebSocketRequestContext & RequestContext>(to router: Router<Context>, feed: LiveFeed) {
        let page = Assets.response(html, type: "text/html; charset=utf-8")
        let scriptFile = Assets.response(javaScript, type: "text/javascript; charset=utf-8")
        router.get(RouterPath(stringLiteral: path)) { _, _ in page }
        router.get(RouterPath(stringLiteral: script)) { _, _ in scriptFile }
        router.ws(
            RouterPath(stringLiteral: socketPath), shouldUpgrade: { request, _ in try checkUpgrade(request) },
            onUpgrade: { inbound, outbound, _ in
                let (id, messages) = feed.subscribe()
                defer { feed.unsubscribe(id) }
                // Until the browser goes (its messages end) or the writing fails; then the other stops.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for try await _ in inbound {} }
                    group.addTask { for await text in messages { try await outbound.write(.text(text)) } }
                    _ = try await group.next()
                    group.cancelAll()
                }
            })
        router.get("/api/live/:file") { _, context in
            let file = context.parameters.get("file") ?? ""
            let kind = file.hasPrefix("recording.") ? String(file.dropFirst("recording.".count)) : ""
            guard
                let (text, type) = kind == "csv"
                    ? feed.csv().map({ ($0, "text/csv; charset=utf-8") })
                    : kind == "svg" ? feed.svg().map({ ($0, "image/svg+xml") }) : ("", "")
            else { return WebApp.plain(.conflict, "nothing recorded yet: keep the Live screen open a few seconds, then save") }
            guard !type.isEmpty else { return WebApp.plain(.notFound, "ask for /api/live/recording.csv or /api/live/recording.svg") }
            var headers = HTTPFields()
            headers[.contentType] = type
            headers[.contentDisposition] = "attachment; filename=\"ribbit-live.\(kind)\""
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }

    /// The session's secret (in the protocol list) was checked by the middleware. The Origin must
    /// be this web app's own too: WebSockets are outside the same-origin policy. The answer names
    /// the `ribbit` protocol when the page offered it (a browser drops a socket whose answer names
    /// none of the protocols it offered).
    static func checkUpgrade(_ request: Request, socket: String = socketPath, view: String = "the live view") throws -> RouterShouldUpgrade
    {
        guard request.headers[.upgrade]?.lowercased() == "websocket" else {
            throw HTTPError(.badRequest, message: "\(socket) is a WebSocket: open it with ws:// (wss:// over HTTPS)")
        }
        // Either scheme: the server speaks only one of them (HTTPS on a LAN), so a page of the
        // other cannot exist at this authority.
        guard let origin = request.headers[.origin]?.lowercased(), let authority = request.head.authority?.lowercased(),
            origin == "http://\(authority)" || origin == "https://\(authority)"
        else { throw HTTPError(.forbidden, message: "\(view) opens only from this web app's own pages (wrong or no Origin)") }
        let offered = WebSecurity.webSocketProtocols(request.headers).contains(WebSecurity.webSocketProtocol)
        return .upgrade(offered ? [.secWebSocketProtocol: WebSecurity.webSocketProtocol] : [:])
    }

    static let main = #"""
        <main id="live-main">
        <section class="card live-wide" aria-labelledby="live-title">
          <h2 id="live-title">Live sound</h2>
          <p id="live-status" role="status">Connecting to the daemon…</p>
          <ul class="live-legend" aria-label="Legend">
            <li><span class="swatch input"></span> Input</li>
            <li><span class="swatch output"></span> Output</li>
            <li><span class="swatch target"></span> Target</li>
          </ul>
        </section>
        <section class="card live-ear right" aria-labelledby="live-right-title">
          <h2 id="live-right-title">Right ear</h2>
          <svg id="chart-right" class="live-chart" viewBox="0 0 600 330" role="img"
            aria-label="Right ear: input, output and target level per third-octave band"></svg>
          <dl id="levels-right"></dl>
        </section>
        <section class="card live-ear left" aria-labelledby="live-left-title">
          <h2 id="live-left-title">Left ear</h2>
          <svg id="chart-left" class="live-chart" viewBox="0 0 600 330" role="img"
            aria-label="Left ear: input, output and target level per third-octave band"></svg>
          <dl id="levels-left"></dl>
        </section>
        <section class="card live-wide" aria-labelledby="live-summary-title">
          <h2 id="live-summary-title">Summary</h2>
          <p id="live-summary" aria-live="polite">No sound yet.</p>
          <p id="live-prescription" class="hint"></p>
          <p class="hint">Per third-octave band: the input (microphone, grey), the output (the ear's colour) and the
          target, the input plus the gain the prescription asks for (black line).</p>
          <p class="live-save">
            <a class="button" href="/api/live/recording.svg" download>Save SVG</a>
            <a class="button" href="/api/live/recording.csv" download>Save CSV</a>
          </p>
          <p class="hint">Save writes the last 10 seconds as <code>ribbitd dump --svg</code> and <code>--csv</code> do.
          The chart stops while this tab is hidden.</p>
        </section>
        </main>

        """#

    static let css = #"""
        #live-main { grid-template-columns: 1fr; }
        @media (min-width: 60rem) { #live-main { grid-template-columns: 1fr 1fr; } .live-wide { grid-column: span 2; } }
        #live-status { font-weight: 700; margin: 0; }
        #live-status.problem { color: var(--warn); }
        .live-chart { display: block; width: 100%; height: auto; margin-bottom: 0.6rem; }
        .live-chart text { font-size: 17px; fill: var(--ink); }
        .live-chart .grid { stroke: var(--muted); stroke-opacity: 0.35; }
        .live-chart .frame { fill: none; stroke: var(--line); }
        .live-chart .input, .swatch.input { fill: #767676; background: #767676; }
        .right .output { fill: #d00000; } .left .output { fill: #0050d0; }
        .swatch.output { background: linear-gradient(90deg, #d00000 50%, #0050d0 50%); }
        .live-chart .target { stroke: var(--ink); stroke-width: 4; }
        .swatch.target { height: 0.3rem; background: var(--ink); }
        .live-legend { display: flex; flex-wrap: wrap; gap: 0.3rem 1.4rem; list-style: none; margin: 0.4rem 0 0; padding: 0; }
        .live-legend li { display: flex; align-items: center; gap: 0.4rem; }
        .swatch { display: inline-block; width: 1.4rem; height: 1rem; }
        .live-save { display: flex; flex-wrap: wrap; gap: 0.6rem; margin: 0.6rem 0 0; }
        a.button { display: inline-flex; align-items: center; min-height: 3rem; padding: 0.4rem 1rem; border: 3px solid var(--line);
          border-radius: 0.5rem; color: var(--ink); font-weight: 700; text-decoration: none; }
        @media (prefers-color-scheme: dark) {
          .right .output { fill: #ff6b6b; } .left .output { fill: #7fb0ff; }
          .swatch.output { background: linear-gradient(90deg, #ff6b6b 50%, #7fb0ff 50%); }
          .live-chart .input, .swatch.input { fill: #a8a8a8; background: #a8a8a8; }
        }

        """#

    static let javaScript = #"""
        "use strict";
        // The Live screen: the daemon's dump frames over a WebSocket, drawn as bars per third-octave
        // band (input, output, the target as a line) into each ear's SVG; the socket is closed while
        // the tab is hidden, so the daemon stops analysing when nobody looks.
        const SVG = "http://www.w3.org/2000/svg";
        const box = { left: 64, right: 590, top: 12, bottom: 270 };
        let chartWidth = 600;
        const charts = {};
        let socket = null;
        let frames = 0;
        let latest = null;
        let drawPending = false;
        let lastSummary = -Infinity;
        let recentTimes = [];
        let scale = null;  // { spl, low, high }

        function svg(tag, attributes) {
          const node = document.createElementNS(SVG, tag);
          for (const [key, value] of Object.entries(attributes)) {
            if (key === "text") node.textContent = value; else node.setAttribute(key, value);
          }
          return node;
        }

        function yOf(db) {
          const clamped = Math.min(Math.max(db, scale.low), scale.high);
          return box.bottom - (clamped - scale.low) / (scale.high - scale.low) * (box.bottom - box.top);
        }

        function hzLabel(hz) { return hz >= 1000 ? (hz / 1000) + "k" : String(hz); }

        // The axes and one set of bars per band, once per ear (again when the unit changes).
        function build(ear, bandsHz) {
          const root = $("chart-" + ear);
          root.replaceChildren();
          // Drawn in the chart's own pixels, up to 600: on a phone the labels stay large.
          chartWidth = Math.round(Math.min(600, Math.max(340, root.getBoundingClientRect().width || 600)));
          root.setAttribute("viewBox", `0 0 ${chartWidth} 330`);
          box.right = chartWidth - 10;
          const width = (box.right - box.left) / bandsHz.length;
          for (let db = scale.low; db <= scale.high; db += 20) {
            root.append(svg("line", { class: "grid", x1: box.left, x2: box.right, y1: yOf(db), y2: yOf(db) }));
            root.append(svg("text", { x: box.left - 8, y: yOf(db) + 6, "text-anchor": "end", text: String(db) }));
          }
          const bars = bandsHz.map((hz, i) => {
            const x = box.left + i * width;
            if ([125, 250, 500, 1000, 2000, 4000, 8000].includes(Math.round(hz))) {
              root.append(svg("text", { x: x + width / 2, y: box.bottom + 22, "text-anchor": "middle", text: hzLabel(Math.round(hz)) }));
            }
            const input = svg("rect", { class: "input", x: x + 2, width: width / 2 - 2, y: box.bottom, height: 0 });
            const output = svg("rect", { class: "output", x: x + width / 2, width: width / 2 - 2, y: box.bottom, height: 0 });
            const target = svg("line", { class: "target", x1: x + 1, x2: x + width - 1, y1: 0, y2: 0, visibility: "hidden" });
            root.append(input, output, target);
            return { input, output, target };
          });
          root.append(svg("rect", { class: "frame", x: box.left, y: box.top, width: box.right - box.left, height: box.bottom - box.top }));
          root.append(svg("text", { x: (box.left + box.right) / 2, y: 322, "text-anchor": "middle", text: "Frequency (Hz)" }));
          root.append(svg("text", { x: 18, y: (box.top + box.bottom) / 2, "text-anchor": "middle",
            transform: `rotate(-90 18 ${(box.top + box.bottom) / 2})`, text: "Level (" + (scale.spl ? "dB SPL" : "dBFS") + ")" }));
          charts[ear] = bars;
        }

        function setBar(rect, db) {
          const y = yOf(db);
          rect.setAttribute("y", y);
          rect.setAttribute("height", box.bottom - y);
        }

        const fixed = (db) => (Math.round(db * 10) / 10).toFixed(1).replace("-", "−");

        function level(db, offset) {
          return offset === null || offset === undefined ? fixed(db) + " dBFS" : fixed(db + offset) + " dB SPL";
        }

        function draw() {
          drawPending = false;
          const frame = latest;
          const spl = frame.calibration !== null && frame.calibration !== undefined;
          if (!scale || scale.spl !== spl) {
            scale = spl ? { spl, low: 0, high: 120 } : { spl, low: -100, high: 0 };
            for (const ear of Object.keys(charts)) delete charts[ear];
          }
          for (const ear of ["right", "left"]) {
            const values = frame.ears[ear];
            $("chart-" + ear).closest("section").hidden = !values;
            if (!values) continue;
            if (!charts[ear]) build(ear, frame.bandsHz);
            const inOffset = spl ? values.inputSPLOffset : 0, outOffset = spl ? values.outputSPLOffset : 0;
            charts[ear].forEach((bar, i) => {
              setBar(bar.input, values.input[i] + inOffset);
              setBar(bar.output, values.output[i] + outOffset);
              const gain = values.targetGain[i];
              if (gain === null || values.input[i] <= -120) {
                bar.target.setAttribute("visibility", "hidden");
              } else {
                const y = yOf(values.input[i] + inOffset + gain);
                bar.target.setAttribute("y1", y);
                bar.target.setAttribute("y2", y);
                bar.target.setAttribute("visibility", "visible");
              }
            });
            const offsets = spl ? [values.inputSPLOffset, values.outputSPLOffset] : [null, null];
            $("levels-" + ear).replaceChildren(
              el("dt", { text: "Input" }), el("dd", { text: level(values.inputRMS, offsets[0]) + ", peak " + fixed(values.inputPeak) + " dBFS" }),
              el("dt", { text: "Output" }), el("dd", { text: level(values.outputRMS, offsets[1]) + ", peak " + fixed(values.outputPeak) + " dBFS" }),
              el("dt", { text: "Gain" }), el("dd", { text: signed(Math.round((values.outputRMS + outOffset - values.inputRMS - inOffset) * 10) / 10) + " dB" }));
          }
          const calibration = !spl ? "no calibration: levels in dBFS"
            : frame.calibration === "defaults" ? "dB SPL from the default calibration (±" + frame.uncertaintyDB + " dB)"
            : "dB SPL through calibration " + frame.calibration;
          $("live-prescription").textContent = (frame.prescription ? frame.prescription : "No prescription: sound passes unchanged")
            + " · output " + frame.output + " · latency " + frame.latencyMs + " ms · " + calibration;
          const now = performance.now();
          if (now - lastSummary >= 1000) {
            lastSummary = now;
            $("live-summary").textContent = ["right", "left"].filter((ear) => frame.ears[ear]).map((ear) => {
              const v = frame.ears[ear];
              const offsets = spl ? [v.inputSPLOffset, v.outputSPLOffset] : [null, null];
              return (ear === "right" ? "Right" : "Left") + " ear: input " + level(v.inputRMS, offsets[0])
                + ", output " + level(v.outputRMS, offsets[1]) + ".";
            }).join(" ");
          }
        }

        function status(text, problem) {
          $("live-status").textContent = text;
          $("live-status").classList.toggle("problem", !!problem);
        }

        let connecting = false;
        async function connect() {
          if (socket || connecting) return;
          connecting = true;
          const own = await session.openSocket("/api/live/socket");
          connecting = false;
          if (!own) {
            $("connection").textContent = "Not connected";
            $("connection").classList.add("down");
            status(session.problem(), true);
            return;
          }
          if (document.hidden) { own.close(1000, "hidden"); return; }
          socket = own;
          own.onopen = () => { $("connection").textContent = "Connected"; $("connection").classList.remove("down"); };
          own.onmessage = (event) => {
            const message = JSON.parse(event.data);
            if (message.problem) { status(message.problem, true); return; }
            frames += 1;
            const now = performance.now();
            recentTimes.push(now);
            while (recentTimes.length && now - recentTimes[0] > 1000) recentTimes.shift();
            status("Live: " + frames + " frames, " + recentTimes.length + " a second", false);
            latest = message;
            if (!drawPending) { drawPending = true; requestAnimationFrame(draw); }
          };
          own.onclose = () => {
            if (socket !== own) return;  // closed on purpose (tab hidden)
            socket = null;
            $("connection").textContent = "Not connected";
            $("connection").classList.add("down");
            status("The live view closed; trying again in 2 seconds. Is `ribbitd web` still running?", true);
            setTimeout(() => { if (!document.hidden) connect(); }, 2000);
          };
        }

        function pause() {
          if (!socket) return;
          const old = socket;
          socket = null;
          old.close(1000, "hidden");
          status("Paused while this tab is hidden (" + frames + " frames so far)", false);
        }

        for (const link of document.querySelectorAll(".live-save a")) needsSession(link, true);
        window.addEventListener("resize", () => { for (const ear of Object.keys(charts)) delete charts[ear]; });
        document.addEventListener("visibilitychange", () => { if (document.hidden) pause(); else connect(); });
        if (!document.hidden) connect();

        """#
}
