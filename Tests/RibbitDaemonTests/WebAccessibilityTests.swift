import Foundation
import RibbitTestSupport
import Testing

/// Every screen of the web app checked by axe-core (Deque's rules for WCAG 2.1 A and AA: names
/// and labels, contrast, roles, landmarks, focus order, language) in headless Chromium, on a
/// phone and a laptop, light and dark, and at the largest text size; and reached by keyboard.
/// `make test` fetches axe.min.js into .build/test-tools (see the Makefile).
extension WebDaemonTests {
    static let screensToAudit = ["/", "/prescriptions", "/load", "/details?id=1", "/live", "/fitting", "/hearing-test", "/clinic"]

    @Test func webAppScreensPassAnAccessibilityAudit() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let axe = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-tools/axe.min.js")
        let axeSource = try #require(
            try? String(contentsOf: axe, encoding: .utf8), "no \(axe.path): `make .build/test-tools/axe.min.js` fetches it")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        // axe is injected by DevTools, not served: the app's own CSP stays as it is for the page.
        try browser.call("Page.setBypassCSP", ["enabled": true])
        try browser.wait(for: #"document.readyState === "complete""#)
        try browser.waitUntilLoggedIn()

        var audited = 0
        for path in Self.screensToAudit {
            try browser.call("Page.navigate", ["url": web.url + path.dropFirst()])
            try browser.wait(for: #"document.readyState === "complete" && document.getElementById("connection") !== null"#)
            usleep(1_200_000)  // the screen's first fetch drawn
            for (label, width, height, scheme, textStep) in [
                ("phone", 390, 844, "light", 0), ("laptop", 1280, 800, "light", 0), ("laptop", 1280, 800, "dark", 0),
                ("phone", 390, 844, "light", 4),
            ] {
                try browser.call(
                    "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
                try browser.call("Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": scheme]]])
                _ = try browser.evaluate("setTextSize(\(textStep)); true")
                if try browser.evaluate("typeof axe") as? String != "object" { _ = try browser.evaluate(axeSource + "\n;true") }
                let violations =
                    try browser.evaluate(
                        """
                        axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
                          .then((r) => r.violations.map((v) => v.id + " (" + v.impact + "): "
                            + v.nodes.slice(0, 3).map((n) => n.target.join(" ") + " " + (n.failureSummary || "").split("\\n").join(" ")).join("; ")))
                        """) as? [String] ?? ["axe returned nothing"]
                #expect(violations.isEmpty, "\(path) \(label) \(scheme) text step \(textStep): \(violations)")
                audited += 1
            }
            _ = try browser.evaluate("setTextSize(0); true")

            // What the page hides is not drawn (a style that sets display would draw it anyway).
            let drawnHidden =
                try browser.evaluate(
                    #"Array.from(document.querySelectorAll("[hidden]")).filter((e) => getComputedStyle(e).display !== "none").map((e) => e.outerHTML.slice(0, 60))"#
                ) as? [String] ?? ["no answer"]
            #expect(drawnHidden.isEmpty, "\(path): hidden yet drawn: \(drawnHidden)")

            // Keyboard: Tab reaches every enabled control, in document order, each showing focus.
            let controls =
                try browser.evaluate(
                    #"Array.from(document.querySelectorAll("a[href], button:not([disabled]), input:not([disabled]), select, textarea")).filter((e) => e.offsetParent !== null && !e.closest("fieldset[disabled]")).length"#
                ) as? Int ?? 0
            _ = try browser.evaluate("document.activeElement && document.activeElement.blur(); true")
            var reached = Set<String>()
            for _ in 0..<(controls + 2) {
                try browser.call("Input.dispatchKeyEvent", ["type": "keyDown", "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9])
                try browser.call("Input.dispatchKeyEvent", ["type": "keyUp", "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9])
                let focused =
                    try browser.evaluate(
                        #"(() => { const e = document.activeElement; if (!e || e === document.body) return ""; const s = getComputedStyle(e); return e.outerHTML.slice(0, 60) + "|" + s.outlineStyle; })()"#
                    ) as? String ?? ""
                guard !focused.isEmpty else { continue }
                #expect(!focused.hasSuffix("|none"), "\(path): \(focused) shows no focus ring")
                reached.insert(String(focused.split(separator: "|").first ?? ""))
            }
            #expect(reached.count >= min(controls, 3), "\(path): Tab reached \(reached.count) of \(controls) controls")
        }
        #expect(browser.problems.isEmpty, "the pages wrote to the console: \(browser.problems)")
        print("ribbit-web accessibility: \(audited) axe-core audits (WCAG 2.1 A/AA) of \(Self.screensToAudit.count) screens, no violations")
    }
}
