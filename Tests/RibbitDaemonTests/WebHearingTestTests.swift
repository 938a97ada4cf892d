import Foundation
import RibbitControl
import RibbitTestSupport
import Testing

/// The Hearing test screen against a real daemon on a private jackd: the page and its routes
/// (the session on every POST, a bad request refused in one line), drawn in headless Chromium
/// with nothing on the console; and a short test (one ear, 1 kHz) started, answered from the
/// page's own keyboard handler, and stopped, each step as `ribbitd status` reports it.
/// RIBBIT_WEB_SCREENSHOTS=DIR keeps the screenshots (the README's are docs/images/web-hearing-test-*.png).
extension HearingTestDaemonTests {
    static func keepScreenshot(_ png: Data, _ name: String) throws {
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name) is not a PNG")
        guard let directory = ProcessInfo.processInfo.environment["RIBBIT_WEB_SCREENSHOTS"] else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try png.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name + ".png"))
    }

    /// axe-core's WCAG 2.1 A/AA violations of the page as it is now, on a phone and a laptop (the
    /// audit test sees this screen before a test only); nil when axe.min.js is not fetched.
    static func axeViolations(_ browser: DevToolsBrowser) throws -> [String]? {
        let axe = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-tools/axe.min.js")
        guard let source = try? String(contentsOf: axe, encoding: .utf8) else { return nil }
        if try browser.evaluate("typeof axe") as? String != "object" { _ = try browser.evaluate(source + "\n;true") }
        var found = [String]()
        for (width, height) in [(390, 844), (1280, 800)] {
            try browser.call(
                "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
            found +=
                try browser.evaluate(
                    """
                    axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
                      .then((r) => r.violations.map((v) => "\(width) px " + v.id + ": " + v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")))
                    """) as? [String] ?? ["axe returned nothing"]
        }
        return found
    }

    @Test func webHearingTestScreenRendersAndItsRoutesNeedTheToken() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        #expect(try web.request("GET", "/hearing-test", withSession: false).status == 200, "the page shell, with no data")
        #expect(try web.request("GET", "/api/hearing-test/list", withSession: false).status == 401)
        #expect(try web.logIn().status == 200)

        let page = String(decoding: try web.request("GET", "/hearing-test").body, as: UTF8.self)
        #expect(!page.contains("tabindex") && !page.contains("onclick") && !page.contains("style=") && !page.contains("<script>"))
        #expect(page.contains(#"<a href="/hearing-test" aria-current="page">Hearing test</a>"#))
        #expect(page.contains(#"<option value="consumer" selected>"#) && page.contains(#"value="unknown" checked"#))

        // No session: 401 for every POST, and no test starts.
        for path in ["/api/hearing-test/start", "/api/hearing-test/answer", "/api/hearing-test/stop"] {
            #expect(try web.request("POST", path, json: "{}", withSession: false).status == 401, "\(path)")
        }
        #expect(try daemon.status().hearingTest == nil)
        for (json, reason) in [
            #"{"transducer":"earbuds"}"#: "headphones 'earbuds' are unknown",
            #"{"betterEar":"both"}"#: "betterEar 'both' is not right, left or unknown",
            #"{"transducer":7}"#: "not the JSON",
        ] {
            let answer = try web.request("POST", "/api/hearing-test/start", json: json)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 400 && text.contains(reason) && text.split(separator: "\n").count == 1, "\(json): \(text)")
        }
        #expect(try daemon.status().hearingTest == nil)
        // The audiogram before any test: RibbitPlot's empty form.
        let chart = try web.request("GET", "/api/hearing-test/audiogram")
        let svg = String(decoding: chart.body, as: UTF8.self)
        #expect(chart.status == 200 && svg.hasPrefix("<svg") && !svg.contains("audiogram-right-mark"), "\(svg.prefix(200))")

        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        // Logged in (the personal link's token traded for a session) before going to the screen.
        try browser.waitUntilLoggedIn()
        try browser.call("Page.navigate", ["url": web.url + "hearing-test"])
        try browser.wait(for: #"document.getElementById("before") !== null && !document.getElementById("before").hidden"#)
        #expect(
            try browser.evaluate(#"document.getElementById("during").hidden && document.getElementById("after").hidden"#) as? Bool == true)
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            let png = try browser.screenshot(width: width, height: height)
            try Self.keepScreenshot(png, "web-hearing-test-start-\(label)")
            // Nothing wider than the viewport (no sideways scrolling on a phone).
            let wide = try browser.evaluate("document.documentElement.scrollWidth") as? Int ?? 0
            #expect(wide <= width, "\(label): the page is \(wide) px wide")
        }
        #expect(browser.problems.isEmpty, "the page wrote to the console: \(browser.problems)")
        let weights = ["/hearing-test", "/common.js", "/hearing-test.js", "/app.css", "/api/hearing-test/audiogram"].map { path in
            "\(path) \((try? web.request("GET", path).body.count) ?? -1) B"
        }
        print("ribbit-web hearing test screen: \(weights.joined(separator: ", "))")
    }

    /// A short test (the right ear at 1 kHz) started through the web app, answered by the page's
    /// own handlers (the space bar and a press of the button), stopped by Stop pressed twice;
    /// `ribbitd status` counts each answer and ends stopped with the record stored.
    @Test func webHearingTestRunsThroughTheDaemon() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        _ = try web.logIn()
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        // Logged in (the personal link's token traded for a session) before going to the screen;
        // axe is injected by DevTools, the app's CSP stays as it is.
        try browser.waitUntilLoggedIn()
        try browser.call("Page.setBypassCSP", ["enabled": true])
        try browser.call("Page.navigate", ["url": web.url + "hearing-test"])
        try browser.wait(for: #"document.getElementById("before") !== null && !document.getElementById("before").hidden"#)

        func until(_ what: String, _ check: (HearingTestStatus) -> Bool) throws {
            if try daemon.wait(until: { $0.hearingTest.map(check) ?? false }) { return }
            Issue.record("ribbitd status never showed \(what): \(String(describing: try daemon.status().hearingTest))")
        }
        // A loud room (white noise at the microphone inputs) from before the start: the first
        // presentation (20 dB HL, however late a loaded machine gets to it) is judged against it,
        // so the test pauses whatever the scheduler did; the page names the band and asks for a
        // quieter place; quiet again, the test goes on by itself. (Played later, a loaded
        // machine's test had climbed to ~70 dB HL, which raises every limit out of the noise's reach.)
        // The noise plays until the page has been looked at, however slow a loaded machine is.
        let probe = try Probe(server: server, signal: "noise", levelDBFS: -20, seconds: 60)
        try probe.waitUntilPlaying()
        // The page's Start sends the defaults (both ears, every frequency: 10 minutes); the API
        // takes the ear and frequency to keep this short.
        let started = try web.request(
            "POST", "/api/hearing-test/start",
            json: #"{"transducer":"tdh39","ears":["right"],"frequenciesHz":[1000],"seed":7}"#)
        #expect(started.status == 200, "\(String(decoding: started.body, as: UTF8.self))")
        try until("a test running") { $0.state == .running || $0.state == .pausedForNoise }
        try until("paused for the room's noise") { $0.state == .pausedForNoise }
        try browser.wait(
            for: #"!document.getElementById("noise").hidden && document.getElementById("where").textContent === "Paused""#, seconds: 60)
        let noise = try browser.evaluate(#"document.getElementById("noise").textContent"#) as? String ?? ""
        #expect(noise.hasPrefix("Paused: the room is too loud around ") && noise.contains("dB SPL, at most"), "\(noise)")
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            try Self.keepScreenshot(try browser.screenshot(width: width, height: height), "web-hearing-test-noise-\(label)")
        }
        if let violations = try Self.axeViolations(browser) { #expect(violations.isEmpty, "paused for noise: \(violations)") }
        probe.cancel()
        try browser.wait(
            for:
                #"!document.getElementById("during").hidden && document.getElementById("noise").hidden && document.getElementById("where").textContent === "Right ear, 1 kHz""#,
            seconds: 60)
        #expect(try web.request("POST", "/api/hearing-test/start", json: "{}").status == 409, "a second test while one runs")

        // The space bar, then a press of the big button (pointer down), each counted once.
        let first = try #require(try daemon.status().hearingTest?.answers)
        for type in ["keyDown", "keyUp"] {
            try browser.call("Input.dispatchKeyEvent", ["type": type, "key": " ", "code": "Space", "windowsVirtualKeyCode": 32])
        }
        try until("the space bar's answer") { $0.answers == first + 1 }
        let centre = try #require(
            try browser.evaluate(
                #"(() => { const r = document.getElementById("heard").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"#
            ) as? [Double])
        for type in ["mousePressed", "mouseReleased"] {
            try browser.call("Input.dispatchMouseEvent", ["type": type, "x": centre[0], "y": centre[1], "button": "left", "clickCount": 1])
        }
        try until("the button's answer") { $0.answers == first + 2 }
        usleep(300_000)
        #expect(try daemon.status().hearingTest?.answers == first + 2, "the press was counted twice (pointer down and click)")
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            try Self.keepScreenshot(try browser.screenshot(width: width, height: height), "web-hearing-test-\(label)")
        }
        if let violations = try Self.axeViolations(browser) { #expect(violations.isEmpty, "during the test: \(violations)") }

        // What an answer costs, browser to daemon and back (the daemon times it on arrival).
        var roundTrips = [Double]()
        for _ in 0..<5 {
            let sent = Date()
            #expect(try web.request("POST", "/api/hearing-test/answer", json: "{}").status == 200)
            roundTrips.append(Date().timeIntervalSince(sent) * 1000)
        }
        try until("the API's five answers") { $0.answers == first + 7 }
        print(
            "ribbit-web hearing test: POST /api/hearing-test/answer round trip median \(String(format: "%.1f", roundTrips.sorted()[2])) ms")

        // Stop asks once more: one press leaves it running, the second stops it.
        _ = try browser.evaluate(#"document.getElementById("stop").click(); true"#)
        usleep(300_000)
        #expect([.running, .pausedForNoise].contains(try daemon.status().hearingTest?.state))
        _ = try browser.evaluate(#"document.getElementById("stop").click(); true"#)
        try until("stopped") { $0.state == .stopped }
        let stopped = try #require(try daemon.status().hearingTest)
        #expect(stopped.flags.contains(.incomplete), "\(stopped.flags)")
        try browser.wait(for: #"!document.getElementById("after").hidden"#)
        let record = try browser.evaluate(#"document.getElementById("record").textContent"#) as? String ?? ""
        #expect(stopped.recordID.map { record.contains("Hearing test \($0)") } ?? (record == "Not stored"), "\(record)")
        // How long it took, as a duration that holds still (not "12:48", read as a time of day).
        let took = try browser.evaluate(#"document.getElementById("took").textContent"#) as? String ?? ""
        #expect(took.wholeMatch(of: /\d+ min \d+ s/) != nil, "time: \(took)")
        usleep(1_500_000)
        #expect(
            try browser.evaluate(#"document.getElementById("took").textContent"#) as? String == took, "a stopped test's time kept counting")
        let flags = try browser.evaluate(#"document.getElementById("flags").textContent"#) as? String ?? ""
        #expect(flags.contains("stopped before every frequency"), "\(flags)")
        #expect(try web.request("POST", "/api/hearing-test/stop").status == 409, "stop with no test running")

        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            try Self.keepScreenshot(try browser.screenshot(width: width, height: height), "web-hearing-test-after-\(label)")
        }
        if let violations = try Self.axeViolations(browser) { #expect(violations.isEmpty, "after the test: \(violations)") }
        // Test again: the form again, though the status still holds the last test.
        _ = try browser.evaluate(#"document.getElementById("again").click(); true"#)
        try browser.wait(for: #"!document.getElementById("before").hidden && document.getElementById("after").hidden"#)
        usleep(1_200_000)  // a poll later, still the form
        #expect(try browser.evaluate(#"!document.getElementById("before").hidden"#) as? Bool == true)
        #expect(browser.problems.isEmpty, "the page wrote to the console: \(browser.problems)")
    }
}
