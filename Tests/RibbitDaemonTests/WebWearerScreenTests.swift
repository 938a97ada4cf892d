import Foundation
import RibbitTestSupport
import Testing

/// The wearer's screen one thumb deep: on a 390x844 phone and a 1280x800 laptop, Home shows
/// Pause, Bypass, the volume's buttons and every program without scrolling; a running trial's
/// Keep and Revert come first; the nav offers the wearer's screens and one entry, Clinic, to
/// the audiologist's and the therapist's (Fitting, Live, Voice games), which mark it current.
extension WebDaemonTests {
    @Test func webAppHomePutsTheWearersControlsOnTheFirstScreen() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        defer { browser.stop() }
        try browser.waitUntilLoggedIn()

        // The controls, each named by what a wearer calls it, and where its bottom edge is drawn.
        let controls = ##"""
            (() => { const bottom = (e) => Math.ceil(e.getBoundingClientRect().bottom);
              const found = { Pause: bottom(document.getElementById("pause")), Bypass: bottom(document.getElementById("bypass")),
                "Volume −": bottom(document.getElementById("volume-down")), "Volume +": bottom(document.getElementById("volume-up")) };
              for (const label of document.querySelectorAll("#programs label")) found["Program " + label.textContent.trim()] = bottom(label);
              for (const id of ["keep", "revert"]) { const e = document.getElementById(id); if (e.offsetParent !== null) found[id] = bottom(e); }
              return JSON.stringify({ controls: found, width: document.documentElement.scrollWidth }); })()
            """##
        func firstScreen(width: Int, height: Int) throws -> (controls: [String: Int], width: Int) {
            try browser.call(
                "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
            _ = try browser.evaluate("window.scrollTo(0, 0); true")
            let text = try #require(try browser.evaluate(controls) as? String)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            return (object["controls"] as? [String: Int] ?? [:], object["width"] as? Int ?? 0)
        }

        try browser.call("Page.navigate", ["url": web.url])
        try browser.wait(for: #"!document.getElementById("pause").disabled && !document.getElementById("programs").disabled"#)
        for (width, height) in [(390, 844), (1280, 800)] {
            let shown = try firstScreen(width: width, height: height)
            #expect(shown.controls.count == 9, "\(width)x\(height): \(shown.controls)")
            let below = shown.controls.filter { $0.value > height }.sorted { $0.value < $1.value }
            #expect(
                below.isEmpty, "\(width)x\(height): the wearer scrolls to reach \(below.map { "\($0.key) (bottom at \($0.value) px)" })")
            #expect(shown.width <= width, "\(width)x\(height): the page is \(shown.width) px wide")
        }

        // At the largest text size a phone scrolls down, never sideways (WCAG 1.4.10).
        _ = try browser.evaluate("setTextSize(4); true")
        let wide = try firstScreen(width: 390, height: 844)
        let over =
            try browser.evaluate(
                ##"[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 391 || e.scrollWidth > e.clientWidth + 1).slice(-3).map((e) => e.outerHTML.slice(0, 80)).join(" | ")"##
            ) as? String ?? ""
        #expect(wide.width <= 390, "390x844 at 200 % text: the page is \(wide.width) px wide: \(over)")
        _ = try browser.evaluate("setTextSize(0); true")

        // A trial: its Keep and Revert above everything else.
        #expect(try daemon.ribbitd(["load", "--trial", "15m", TestPaths.prescription("ski-slope.rx").path]).status == 0)
        try browser.call("Page.navigate", ["url": web.url])
        try browser.wait(for: #"!document.getElementById("trial").hidden && !document.getElementById("pause").disabled"#)
        for (width, height) in [(390, 844), (1280, 800)] {
            let shown = try firstScreen(width: width, height: height)
            let keep = try #require(shown.controls["keep"], "\(width): Keep is not drawn during a trial")
            #expect(keep <= height && shown.controls.values.allSatisfy { $0 >= keep }, "\(width)x\(height) in a trial: \(shown.controls)")
            #expect(shown.controls["Pause"].map { $0 <= height } == true, "\(width)x\(height) in a trial: \(shown.controls)")
        }
        #expect(try daemon.ribbitd(["revert"]).status == 0)

        // The nav: the wearer's screens and Clinic; Clinic leads to the others.
        let nav =
            ##"JSON.stringify(Array.from(document.querySelectorAll("nav a")).map((a) => a.getAttribute("href") + (a.getAttribute("aria-current") ? "*" : "")))"##
        func navigation() throws -> [String] {
            let text = try #require(try browser.evaluate(nav) as? String)
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String])
        }
        #expect(try navigation() == ["/*", "/prescriptions", "/load", "/hearing-test", "/clinic"])
        try browser.call("Page.navigate", ["url": web.url + "clinic"])
        try browser.wait(for: #"document.readyState === "complete" && document.querySelector("main.clinic") !== null"#)
        #expect(try navigation() == ["/", "/prescriptions", "/load", "/hearing-test", "/clinic*"])
        let links =
            try browser.evaluate(##"Array.from(document.querySelectorAll("main a")).map((a) => a.getAttribute("href")).join(" ")"##)
            as? String
        #expect(links == "/fitting /live /voice")
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"].map({ URL(fileURLWithPath: $0) }) {
            for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
                try browser.screenshot(width: width, height: height).write(to: keep.appendingPathComponent("web-clinic-\(label).png"))
            }
        }
        for screen in ["fitting", "live", "voice"] {
            try browser.call("Page.navigate", ["url": web.url + screen])
            try browser.wait(for: #"document.readyState === "complete""#)
            #expect(try navigation().last == "/clinic*", "/\(screen) does not mark Clinic as the way it was reached")
        }
        #expect(browser.problems.isEmpty, "the pages wrote to the console: \(browser.problems)")
    }
}
