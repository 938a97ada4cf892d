import Foundation
import Logging
import RibbitTestSupport
import Testing

@testable import RibbitDaemon

/// The daemon's log as the systemd journal reads it (sd-daemon(3) "<N>" prefixes, no timestamp
/// of its own), and xruns summarised instead of logged per tick.
@Suite struct JournalLogTests {
    final class Lines: @unchecked Sendable {
        var text = ""
    }

    @Test func eachLevelGetsItsSyslogPriorityAndNoTimestamp() {
        let written = Lines()
        let log = Logger(label: "ribbitd") { _ in JournalLogHandler(logLevel: .debug) { written.text += $0 } }
        log.trace("not at debug level")
        log.debug("d")
        log.info("i")
        log.notice("n")
        log.warning("w")
        log.error("e")
        log.critical("c")
        log.info("two\nlines")
        #expect(written.text == "<7>d\n<6>i\n<5>n\n<4>w\n<3>e\n<2>c\n<6>two\n<6>lines\n")
    }

    /// The box that logged 843 lines in 12 minutes: an xrun on every stats tick (10 a second).
    @Test func xrunsOnEveryTickMakeOneLinePerTenSeconds() {
        var summary = XrunSummary()
        var lines: [String] = []
        var total = 0
        for tick in 0..<(12 * 60 * 10) {
            total += 1
            if let line = summary.update(total: total, now: Double(tick) / 10) { lines.append(line) }
        }
        if let line = summary.flush(now: 720) { lines.append(line) }
        #expect(lines.count <= 12 * 6 + 2)
        #expect(lines.first == "1 xrun (1 since connecting to JACK)")  // the first at once
        #expect(lines[1] == "100 xruns in the last 10 s (101 since connecting to JACK)")
        // Nothing lost: the lines add up to every xrun.
        let counted = lines.map { Int($0.split(separator: " ")[0])! }.reduce(0, +)
        #expect(counted == total)
    }

    @Test func aLoneXrunAfterAQuietSpellIsLoggedAtOnce() {
        var summary = XrunSummary()
        #expect(summary.update(total: 0, now: 0) == nil)
        #expect(summary.update(total: 2, now: 1) == "2 xruns (2 since connecting to JACK)")
        #expect(summary.update(total: 3, now: 2) == nil)  // within 10 s: held back
        #expect(summary.update(total: 3, now: 11) == "1 xrun in the last 10 s (3 since connecting to JACK)")
        #expect(summary.update(total: 3, now: 30) == nil)
        #expect(summary.update(total: 4, now: 100) == "1 xrun (4 since connecting to JACK)")
        summary.restart()  // a new connection counts from 0
        #expect(summary.update(total: 1, now: 101) == nil)
        #expect(summary.flush(now: 102) == "1 xrun in the last 2 s (1 since connecting to JACK)")
        #expect(summary.flush(now: 103) == nil)
    }

    /// The real daemon, told that its stderr is the journal: every line prefixed, none with a
    /// timestamp; and, on a plain file, the readable form.
    @Test func theDaemonWritesPrioritiesOnlyToTheJournal() throws {
        let server = try JackTestServer()
        defer { server.stop() }
        let journal = try DaemonUnderTest(server: server, journal: true)
        try journal.stop()
        let lines = journal.log.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines { #expect(line.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil, "\(line)") }
        #expect(lines.contains { $0.hasPrefix("<6>") && $0.contains("stopped") })
        #expect(!journal.log.contains(try Self.year()))

        let terminal = try DaemonUnderTest(server: server)
        try terminal.stop()
        #expect(!terminal.log.contains("<6>"))
        #expect(terminal.log.contains(try Self.year()))  // StreamLogHandler's timestamp
    }

    /// A fatal error of `ribbitd run` under systemd is filed as an error, not as info.
    @Test func aFatalErrorInTheJournalIsAnError() throws {
        let directory = try TestPaths.temporaryDirectory()
        let log = directory.appendingPathComponent("stderr").path
        FileManager.default.createFile(atPath: log, contents: nil)
        var env = try TestPaths.privateHome(in: directory, base: ProcessInfo.processInfo.environment)
        env["JOURNAL_STREAM"] = try TestPaths.deviceAndInode(log)
        let result = try Built.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "exec \"$0\" run --config /nonexistent/ribbitd.conf 2>\"$1\"", DaemonUnderTest.binary.path, log],
            environment: env)
        #expect(result.status == 66)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.hasPrefix("<3>ribbitd: error: "), "\(text)")
    }

    static func year() throws -> String { String(Calendar.current.component(.year, from: Date())) }
}
