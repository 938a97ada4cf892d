import Foundation
import RibbitAudiometry
import RibbitControl
import RibbitSettings
import RibbitStore
import RibbitTestSupport
import Testing

/// A stored hearing test in the web app, as `ribbitd audiogram report`, `fhir` and `fit --trial`
/// give it: stored tests (HearingTestRecords' fixtures) in the daemon's history file, read by a
/// real ribbit-web; the report page under its own CSP, the FHIR bundle through the R4 validator,
/// a trial through the daemon; then a test taken by the simulated listener, its "after" view
/// with the links, in headless Chromium, audited by axe.
/// RIBBIT_WEB_SCREENSHOTS=DIR keeps the screenshots (docs/images/web-hearing-test-after-*.png).
extension HearingTestDaemonTests {
    @Test(.runningLimit(minutes: 8)) func webHearingTestResultsGiveAReportFHIRAndATrial() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let store = try HearingTestStore(path: RibbitPaths(environment: daemon.environment).storePath)
        let reliable = try store.save(HearingTestRecords.reliable())
        let unreliable = try store.save(HearingTestRecords.unreliable())
        let web = try WebAppUnderTest(daemon: daemon)
        _ = try web.logIn()
        func text(_ answer: WebAppUnderTest.Answer) -> String { String(decoding: answer.body, as: UTF8.self) }

        let list = try web.request("GET", "/api/hearing-test/list")
        let entries = try JSONSerialization.jsonObject(with: list.body) as? [[String: Any]] ?? []
        // Newest first: the reliable fixture is the later one.
        #expect(list.status == 200 && entries.compactMap { $0["id"] as? Int } == [Int(reliable), Int(unreliable)], "\(text(list))")
        #expect(entries.first?["flags"] as? [String] == [] && entries.last?["unreliable"] as? Bool == true)

        // The report: the CLI's page, under a CSP that allows its own style (by hash) and no script.
        let report = try web.request("GET", "/hearing-test/report/\(reliable)")
        let html = text(report)
        #expect(report.status == 200 && report.headers["content-type"] == "text/html; charset=utf-8")
        #expect(html.contains(#"<p class="disclaimer" id="disclaimer">"#) && html.contains("not a clinical audiogram"))
        #expect(html.contains("<svg") && html.contains("Audiogram, hearing test \(reliable)"))
        #expect(try web.request("GET", "/hearing-test/report/\(reliable)", withSession: false).status == 401)
        let policy = report.headers["content-security-policy"] ?? ""
        #expect(
            policy.hasPrefix("default-src 'none'; style-src 'sha256-") && !policy.contains("unsafe-inline")
                && !policy.contains("script-src"),
            "\(policy)")

        #expect(try web.request("GET", "/api/hearing-test/fhir/\(reliable)", withSession: false).status == 401)
        let fhir = try web.request("GET", "/api/hearing-test/fhir/\(reliable)")
        #expect(
            fhir.status == 200 && fhir.headers["content-disposition"] == "attachment; filename=\"ribbit-hearing-test-\(reliable).json\"")
        let (valid, output) = try FHIRValidator.validate(fhir.body)
        #expect(valid == 0, "the FHIR bundle is not valid R4: \(output)")

        for path in ["/hearing-test/report/99", "/api/hearing-test/fhir/99", "/hearing-test/report/x", "/api/hearing-test/fhir/0"] {
            let answer = try web.request("GET", path)
            #expect(answer.status == 404 && text(answer).split(separator: "\n").count == 1, "\(path): \(answer.status) \(text(answer))")
        }

        // The fitting: no session, unknown, unreliable (one line, nothing changed), then a 15-minute trial.
        #expect(try web.request("POST", "/api/hearing-test/fit", json: #"{"id":\#(reliable)}"#, withSession: false).status == 401)
        let unknown = try web.request("POST", "/api/hearing-test/fit", json: #"{"id":99}"#)
        #expect(unknown.status == 404 && text(unknown).contains("no hearing test 99"), "\(text(unknown))")
        let refused = try web.request("POST", "/api/hearing-test/fit", json: #"{"id":\#(unreliable)}"#)
        #expect(
            refused.status == 409 && text(refused).split(separator: "\n").count == 1 && text(refused).contains("unreliable")
                && !text(refused).contains("--force"), "\(text(refused))")
        #expect(try daemon.status().trial == nil)
        let fitted = try web.request("POST", "/api/hearing-test/fit", json: #"{"id":\#(reliable)}"#)
        #expect(fitted.status == 200, "\(text(fitted))")
        let status = try daemon.status()
        #expect(status.prescription?.name == "self-test 2026-11-24", "\(String(describing: status.prescription))")
        #expect(status.trial.map { (880...900).contains($0.secondsLeft) } == true, "\(String(describing: status.trial))")

        // The report in the browser, opened from its link on the Hearing test screen (the page gets
        // a one-use link for it): its style applies under its own policy, nothing on the console.
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        try browser.waitUntilLoggedIn()
        try browser.call("Page.navigate", ["url": web.url + "hearing-test"])
        let reportLink = ##"document.querySelector("#earlier-list a[href='/hearing-test/report/\##(reliable)']")"##
        try browser.wait(for: reportLink + " !== null")
        _ = try browser.evaluate(reportLink + ".click(); true")
        try browser.wait(for: #"document.readyState === "complete" && document.getElementById("disclaimer") !== null"#)
        #expect(try browser.evaluate("location.pathname") as? String == "/hearing-test/report/\(reliable)")
        #expect(
            try browser.evaluate(#"getComputedStyle(document.getElementById("disclaimer")).borderTopWidth"#) as? String == "2px",
            "the report's style was blocked")
        #expect(try browser.evaluate(#"document.getElementById("details").getAttribute("style")"#) as? String == "width: 100%")
        #expect(
            try browser.evaluate(#"document.getElementById("details").offsetWidth === document.body.clientWidth"#) as? Bool == true,
            "the style attribute was blocked")
        #expect(browser.problems.isEmpty, "the report wrote to the console: \(browser.problems)")
        // For the audit, the report again (a link opens it once): a new one-use link, as a click gets.
        try browser.call("Page.setBypassCSP", ["enabled": true])
        let again = try web.request("POST", "/api/link", json: #"{"path":"/hearing-test/report/\#(reliable)"}"#)
        let link = try #require((try JSONSerialization.jsonObject(with: again.body) as? [String: Any])?["url"] as? String)
        try browser.call("Page.navigate", ["url": web.url + link.dropFirst()])
        try browser.wait(for: #"document.readyState === "complete" && document.getElementById("disclaimer") !== null"#)
        if let violations = try Self.axeViolations(browser) { #expect(violations.isEmpty, "the report: \(violations)") }

        // A test taken (the right ear at 1 kHz, by the simulated listener in the terminal): the
        // Hearing test screen's after view links its record, and lists all three.
        let (_, taken) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--ear", "right", "--frequencies", "1000", "--seed", "21"],
            listener: ["thresholds": ["right": ["1000": 25.0], "left": ["1000": 25.0]], "seed": 4])
        let id = try #require(taken.recordID, "the test was not stored: \(taken)")
        try browser.call("Page.navigate", ["url": web.url + "hearing-test"])
        try browser.wait(
            for: #"!document.getElementById("result-links").hidden && document.getElementById("earlier-list").childElementCount === 3"#)
        #expect(
            try browser.evaluate(#"document.getElementById("report-link").getAttribute("href")"#) as? String == "/hearing-test/report/\(id)"
        )
        #expect(
            try browser.evaluate(#"document.getElementById("fhir-link").getAttribute("href")"#) as? String == "/api/hearing-test/fhir/\(id)"
        )
        #expect(try browser.evaluate(#"!document.getElementById("fit-card").hidden"#) as? Bool == true, "the trial is not shown")
        let trialText = try browser.evaluate(#"document.getElementById("trial-left").textContent"#) as? String ?? ""
        #expect(trialText.hasPrefix("Trying self-test 2026-11-24: 1"), "\(trialText)")
        // One frequency is not enough for a fitting: the page shows the one-line refusal.
        _ = try browser.evaluate(#"document.getElementById("fit").click(); true"#)
        try browser.wait(for: #"!document.getElementById("message").hidden"#)
        let message = try browser.evaluate(#"document.getElementById("message").textContent"#) as? String ?? ""
        #expect(message.contains("hearing test \(id) has no ear with levels at 500, 1000, 2000 and 4000 Hz"), "\(message)")
        _ = try browser.evaluate(#"showMessage(""); true"#)
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            try Self.keepScreenshot(try browser.screenshot(width: width, height: height), "web-hearing-test-after-\(label)")
            let wide = try browser.evaluate("document.documentElement.scrollWidth") as? Int ?? 0
            #expect(wide <= width, "\(label): the page is \(wide) px wide")
        }
        if let violations = try Self.axeViolations(browser) { #expect(violations.isEmpty, "after the test: \(violations)") }
        // Further down: the trial with Keep and Revert, and the list of tests.
        for (label, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
            try browser.call(
                "Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
            _ = try browser.evaluate(#"document.getElementById("fit-card").scrollIntoView(); true"#)
            try Self.keepScreenshot(try browser.screenshot(width: width, height: height), "web-hearing-test-tests-\(label)")
        }
        // Revert from the page: the trial ends in the daemon.
        _ = try browser.evaluate(#"document.getElementById("revert").click(); true"#)
        try browser.wait(for: #"document.getElementById("fit-card").hidden"#)
        #expect(try daemon.status().trial == nil)
        // The refusal's 409 is the browser's network log line, expected; nothing else.
        let problems = browser.problems.filter { !$0.contains("/api/hearing-test/fit") }
        #expect(problems.isEmpty, "the page wrote to the console: \(problems)")
        let weights = ["/hearing-test", "/hearing-test.js", "/hearing-test/report/\(reliable)", "/api/hearing-test/fhir/\(reliable)"].map {
            "\($0) \((try? web.request("GET", $0).body.count) ?? -1) B"
        }
        print("ribbit-web hearing test results: \(weights.joined(separator: ", "))")
    }
}
