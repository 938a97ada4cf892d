import Foundation
import RibbitControl
import RibbitTestSupport
import Testing

/// The buttons a wearer presses, pressed in headless Chromium as a person does (the page's own
/// script sends the request), each checked in what `ribbitd status` reports: Pause and Resume,
/// Bypass, the volume, Use on the Prescriptions screen, and a trial's Revert and Keep on Home.
extension WebDaemonTests {
    @Test func webAppButtonsChangeWhatTheDaemonReports() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server, then: ["moderate-flat-music.rx"])
        let web = try WebAppUnderTest(daemon: daemon)
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        try browser.wait(for: #"document.getElementById("pause") !== null && !document.getElementById("pause").disabled"#)

        func press(_ id: String) throws { _ = try browser.evaluate(#"document.getElementById("\#(id)").click(); true"#) }
        func until(_ what: String, _ check: (DaemonStatus) -> Bool) throws {
            if try daemon.wait(until: check) { return }
            Issue.record("ribbitd status never showed \(what): \(try daemon.status())")
        }

        try press("pause")
        try until("paused") { $0.output == .paused }
        try browser.wait(for: #"document.getElementById("pause").textContent === "Resume""#)
        try press("pause")
        try until("processing again") { $0.output == .processing }
        try browser.wait(for: #"document.getElementById("bypass").getAttribute("aria-pressed") === "false""#)
        try press("bypass")
        try until("bypassed") { $0.output == .bypassed }
        try browser.wait(for: #"document.getElementById("bypass").getAttribute("aria-pressed") === "true""#)
        try press("bypass")
        try until("processing after bypass") { $0.output == .processing }
        let volume = try daemon.status().listening?.volumeDB ?? 0
        try browser.wait(for: #"!document.getElementById("volume-down").disabled"#)
        try press("volume-down")
        try until("the volume 1 dB down") { abs(($0.listening?.volumeDB ?? 0) - (volume - 1)) < 0.01 }

        // Prescriptions: Use on the other entry.
        try browser.call("Page.navigate", ["url": web.url + "prescriptions"])
        try browser.wait(for: ##"document.querySelector("#entry-1 button.use") !== null"##)
        _ = try browser.evaluate(##"document.querySelector("#entry-1 button.use").click(); true"##)
        try until("entry 1 in use") { $0.prescription?.id == 1 }

        // A trial (loaded as the Load screen's trial button does), shown on Home with its time
        // left; Revert goes back at once, and Keep keeps the next one.
        for (button, expected) in [("revert", Int64(1)), ("keep", Int64(3))] {
            #expect(try daemon.ribbitd(["load", "--trial", "15m", TestPaths.prescription("ski-slope.rx").path]).status == 0)
            try browser.call("Page.navigate", ["url": web.url])
            try browser.wait(for: #"!document.getElementById("trial").hidden"#)
            let left = try browser.evaluate(#"document.getElementById("trial-left").textContent"#) as? String ?? ""
            #expect(left.hasPrefix("Trial: 14:") || left.hasPrefix("Trial: 15:"), "\(left)")
            try press(button)
            try until("the trial's \(button)") { $0.trial == nil }
            let active = try daemon.status().prescription?.id
            #expect(button == "revert" ? active == expected : active != 1, "\(button): entry \(active ?? -1)")
            try browser.wait(for: #"document.getElementById("trial").hidden"#)
        }
        #expect(browser.problems.isEmpty, "the pages wrote to the console: \(browser.problems)")
    }
}
