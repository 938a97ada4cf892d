import Foundation
import Glibc
import RibbitControl
import RibbitTestSupport
import Testing

/// What the web app starts ends with its owner: a hearing test with the page that runs it (left,
/// or gone quiet), and everything it holds with ribbit-web itself.
extension WebDaemonTests {
    @Test func aWebHearingTestEndsWithItsPageAndWithRibbitWeb() throws {
        let chromium = try #require(Built.tool("chromium"), "chromium is needed (make dev-deps installs it)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest.forWeb(on: server)
        let web = try WebAppUnderTest(daemon: daemon)
        _ = try web.logIn()
        let start = #"{"transducer":"tdh39","ears":["right"],"frequenciesHz":[1000],"seed":7}"#
        func seconds(untilStoppedWithin limit: Double) throws -> Double? {
            let begun = Date()
            while Date().timeIntervalSince(begun) < limit {
                if try daemon.status().hearingTest?.state == .stopped { return Date().timeIntervalSince(begun) }
                usleep(20_000)
            }
            return nil
        }

        // The page runs the test; leaving it (another page) stops the test at once.
        let browser = try DevToolsBrowser(chromium: chromium, directory: web.directory, url: web.personalURL)
        try browser.waitUntilLoggedIn()
        try browser.call("Page.navigate", ["url": web.url + "hearing-test"])
        try browser.wait(for: #"document.getElementById("before") !== null && !document.getElementById("before").hidden"#)
        #expect(try web.request("POST", "/api/hearing-test/start", json: start).status == 200)
        try browser.wait(for: #"!document.getElementById("during").hidden"#)
        usleep(4_000_000)  // longer than a page may stay quiet: the page's polls keep it
        #expect(try daemon.status().hearingTest?.state == .running, "the test must run while its page is open")
        try browser.call("Page.navigate", ["url": web.url])
        let left = try seconds(untilStoppedWithin: 1)
        #expect(left != nil, "the test went on after its page was left")

        // Started with no page to poll (a page that crashed): the daemon stops it a few seconds on.
        #expect(try web.request("POST", "/api/hearing-test/start", json: start).status == 200)
        #expect(try daemon.status().hearingTest?.state == .running)
        let quiet = try seconds(untilStoppedWithin: HearingTestQuietLimit.seconds + 1)
        #expect(quiet != nil && quiet! > 2, "a test whose page went quiet stopped after \(String(describing: quiet)) s")

        // ribbit-web killed while its test runs: the daemon stops the test within a second.
        #expect(try web.request("POST", "/api/hearing-test/start", json: start).status == 200)
        kill(web.process.processIdentifier, SIGKILL)  // `ribbitd web` execs ribbit-web: the same process
        #expect(try seconds(untilStoppedWithin: 1) != nil, "the test outlived ribbit-web")
        #expect(try daemon.status().output == .processing)
        print(
            "web hearing test: stopped \(String(format: "%.2f", left ?? -1)) s after its page was left, \(String(format: "%.2f", quiet ?? -1)) s after it went quiet"
        )
        try daemon.stop()
    }
}

/// How long a hearing test's page may stay quiet (ribbit-web's `HearingTestScreen.TestOwner`).
enum HearingTestQuietLimit { static let seconds = 3.0 }
