import Hummingbird

/// What every screen shares, compiled into the binary (no build step, nothing fetched from the
/// network): the page skeleton, the nav, the style sheet and /common.js. Each screen's own
/// page, script and routes live in its file (HomeScreen.swift ...); scripts are files of their
/// own because the Content-Security-Policy allows no inline script.
enum Assets {
    static func response(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The screens, in the nav's order: path and name.
    static let screens: [(path: String, name: String)] = [
        (HomeScreen.path, "Home"), (PrescriptionsScreen.path, "Prescriptions"), (LoadScreen.path, "Load"),
        (LiveScreen.path, "Live"), (FittingScreen.path, "Fitting"),
        (HearingTestScreen.path, "Hearing test"), (VoiceScreen.path, "Voice games"),
    ]

    /// The style sheet: the shared rules, each screen's, then dark mode's colours.
    static let styleSheet =
        StyleSheet.shared + PrescriptionsScreen.css + PrescriptionView.css + LiveScreen.css + FittingScreen.css + HearingTestScreen.css
        + VoiceScreen.css + VoicePlay.css + StyleSheet.dark

    static let commonScript = "/common.js"
    static let styleSheetPath = "/app.css"

    /// Serves the shared assets.
    static func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let common = response(commonJavaScript, type: "text/javascript; charset=utf-8")
        let style = response(styleSheet, type: "text/css; charset=utf-8")
        router.get(RouterPath(stringLiteral: commonScript)) { _, _ in common }
        router.get(RouterPath(stringLiteral: styleSheetPath)) { _, _ in style }
    }

    /// A screen's page, the same for everybody (its data comes from the API, with the session):
    /// the shared head (the style sheet; /session.js, /common.js, then the screen's own script)
    /// and header (the nav, the connection line), then the screen's main.
    static func screen(path: String, title: String, script: String, connecting: String, main: String) -> String {
        let nav = screens.map { "<a href=\"\($0.path)\"\($0.path == path ? " aria-current=\"page\"" : "")>\($0.name)</a>" }.joined()
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title>
            <link rel="stylesheet" href="/app.css">
            <script src="/session.js" defer></script>
            <script src="/common.js" defer></script>
            <script src="\(script)" defer></script>
            </head>
            <body>
            <header>
              <h1>ribbit</h1>
              <nav aria-label="Screens">\(nav)</nav>
              <div class="text-size" role="group" aria-label="Text size">
                <button id="text-smaller" type="button" aria-label="Smaller text">A−</button>
                <output id="text-size" aria-live="polite">100 %</output>
                <button id="text-larger" type="button" aria-label="Larger text">A+</button>
              </div>
              <p id="connection" role="status">\(connecting)</p>
            </header>
            <p id="message" role="alert" hidden></p>
            \(main)</body>
            </html>

            """
    }

    /// Shared by every screen's script (deferred scripts run in order, and top-level consts of
    /// classic scripts are visible to the ones after them).
    static let commonJavaScript = #"""
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
          try { localStorage.setItem("ribbit-text-size", String(index)); } catch (error) { /* private mode: not kept */ }
          return index;
        }
        let textSizeStep = setTextSize(Number((() => { try { return localStorage.getItem("ribbit-text-size"); } catch (error) { return 0; } })()) || 0);
        $("text-smaller").addEventListener("click", () => { textSizeStep = setTextSize(textSizeStep - 1); });
        $("text-larger").addEventListener("click", () => { textSizeStep = setTextSize(textSizeStep + 1); });

        function postJSON(path, body, options) {
          return session.api(path, Object.assign(
            { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) }, options || {}));
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

        """#
}
