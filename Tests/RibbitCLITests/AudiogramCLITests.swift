import Foundation
import Glibc
import RibbitAudiometry
import RibbitPrescription
import RibbitStore
import RibbitTestSupport
import Testing

/// `ribbitd audiogram ...`, the real binary, on hearing tests a seeded listener took through the
/// real procedure and `HearingTestStore` wrote into a real history file.
@Suite struct AudiogramCLITests {
    let directory: URL
    let environment: [String: String]
    var storePath: String { directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path }

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        var environment = try TestPaths.privateHome(in: directory)
        environment["TZ"] = "UTC"
        self.environment = environment
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A prescription in the history (through the CLI), then three tests: ids 1 (reliable, the
    /// newest), 2 (no response at 8 kHz on the left, the oldest) and 3 (false alarms).
    func seed() throws -> [HearingTestRecord] {
        #expect(try ribbitd(["load", TestPaths.prescription("mild-presbycusis.rx").path]).status == 0)
        let store = try HearingTestStore(path: storePath)
        let records = [HearingTestRecords.reliable(), HearingTestRecords.noResponseAt8k(), HearingTestRecords.unreliable()]
        for record in records { try store.save(record) }
        #expect(records[0].result.flags.isEmpty && records[1].result.flags.isEmpty)
        #expect(records[2].result.flags.contains(.falseAlarms))
        return try (1...3).map { try store.find(id: Int64($0)) }
    }

    @Test func listAndShowAndTheJSONRoundTrip() throws {
        let records = try seed()
        let list = try ribbitd(["audiogram", "list"])
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "id  date              transducer  ears         flags")
        // Newest first: 1 (Nov 24), 3 (Nov 23), 2 (Nov 22).
        #expect(lines.dropFirst().map { $0.prefix(1) } == ["1", "3", "2"])
        #expect(lines[1] == "1   2026-11-24 03:05  consumer    right, left  -")
        #expect(lines[2].hasPrefix("3   2026-11-23 10:00  consumer    right, left  false-alarms") && !lines.contains { $0.hasSuffix(" ") })

        let json = try ribbitd(["audiogram", "list", "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
        #expect(entries.map { $0["id"] as? Int } == [1, 3, 2])
        #expect(entries[1]["unreliable"] as? Bool == true && entries[0]["ears"] as? [String] == ["right", "left"])

        let show = try ribbitd(["audiogram", "show", "1"])
        #expect(show.status == 0)
        #expect(show.stdout.contains(HearingTestRecord.disclaimer))
        #expect(show.stdout.contains("right ear\n  Hz           threshold        noise dB SPL  presentations\n  250 "))
        // The audiogram's 1 kHz, the better of the pair, is marked.
        let oneK = try #require(records[0].result.threshold(ear: .left, frequencyHz: 1000))
        #expect(show.stdout.contains("\(oneK.thresholdDBHL!) dB HL (kept)"))
        #expect(show.stdout.contains("  1000 retest  "))
        #expect(show.stdout.contains("24.5"))  // the noise
        #expect(show.stdout.contains("calibration: profile bench: 0 dBFS at 1 kHz = 104 dB SPL left, 103.5 dB SPL right"))
        #expect(
            show.stdout.contains("false alarms: ") && show.stdout.contains("1 kHz retest: right ")
                && show.stdout.contains("mean response time: "))
        #expect(show.stdout.contains("flags: none"))
        #expect(try ribbitd(["audiogram", "show", "2"]).stdout.contains("  8000         no response at 90"))
        let flagged = try ribbitd(["audiogram", "show", "3"]).stdout
        #expect(flagged.contains("(UNRELIABLE: the thresholds may be wrong)") && flagged.contains("- false alarms: more than 20 %"))

        for (index, record) in records.enumerated() {
            let out = try ribbitd(["audiogram", "show", "\(index + 1)", "--json"])
            #expect(try JSONDecoder().decode(HearingTestRecord.self, from: Data(out.stdout.utf8)) == record)
        }
    }

    @Test func fitWritesAPrescriptionThatRxShowReadsBack() throws {
        let records = try seed()
        let rx = path("self.rx"), png = path("self.png")
        let fit = try ribbitd(["audiogram", "fit", "1", "-o", rx, "--qr", png])
        #expect(fit.status == 0, "\(fit.stderr)")
        #expect(fit.stdout.hasPrefix("proposed \"self-test 2026-11-24\" (quiet), rule camfit, from hearing test 1, unsigned\n"))
        #expect(fit.stdout.contains(HearingTestRecord.disclaimer))
        #expect(fit.stdout.contains("wrote \(rx)") && fit.stdout.contains("wrote \(png)"))
        let shown = try ribbitd(["rx", "show", "--json", rx])
        #expect(shown.status == 0, "\(shown.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as! [String: Any]
        #expect(report["name"] as? String == "self-test 2026-11-24" && report["rule"] as? String == "camfit")
        #expect(report["note"] as? String == HearingTestRecord.disclaimer && report["signature"] as? String == "unsigned")
        let ears = report["ears"] as! [String: [String: Any]]
        for ear in Ear.allCases {
            let expected = Dictionary(
                uniqueKeysWithValues: records[0].result.frequencies.audiogram(ear: ear).map {
                    (String($0.frequencyHz), $0.thresholdDBHL!)
                })
            #expect(ears[ear.rawValue]?["thresholdsDBHL"] as? [String: Int] == expected)
        }
        // The QR code holds the same text.
        #expect(try ribbitd(["rx", "show", "--json", png]).stdout == shown.stdout)

        // No response at 8 kHz: camfit wants far more than +50 dB there: played at +50, and said; nal-r fits it at 90 and says so.
        let deep = try ribbitd(["audiogram", "fit", "2"])
        #expect(deep.status == 0, "\(deep.stderr)")
        let short = try #require(deep.stdout.split(separator: "\n").first { $0.hasPrefix("short of target: ") }, "\(deep.stdout)")
        #expect(short.contains("left 8000 Hz +") && short.contains(" -> +50.0 dB at 50 dB SPL (maximum gain)") && !short.contains("right"))
        #expect(deep.stdout.contains("rule: camfit") && deep.stdout.contains("8000=90nr"))
        let nalR = try ribbitd(["audiogram", "fit", "2", "--rule", "nal-r"])
        #expect(nalR.status == 0)
        #expect(
            nalR.stdout.contains("no response, fitted at the level tested though the real threshold is higher: left 8000 Hz (90 dB HL)"))
        #expect(nalR.stdout.contains("left: ") && nalR.stdout.contains("8000=90nr"))  // printed without -o
    }

    @Test func unreliableMissingAndTrialWithoutADaemonAreOneLineErrors() throws {
        _ = try seed()
        let refused = try ribbitd(["audiogram", "fit", "3", "-o", path("bad.rx")])
        #expect(refused.status == 65)
        #expect(refused.stderr.hasPrefix("ribbitd: error: hearing test 3 is unreliable: too many false alarms ("))
        #expect(refused.stderr.hasSuffix("--force to fit it anyway\n") && refused.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: path("bad.rx")))
        let forced = try ribbitd(["audiogram", "fit", "3", "--force", "--rule", "nal-r", "-o", path("forced.rx")])
        #expect(forced.status == 0 && forced.stdout.contains("warning: the test is flagged (false-alarms"))

        for command in [["show", "9"], ["fit", "9"], ["report", "9", "-o", path("r.html")], ["show", "9", "--json"]] {
            let missing = try ribbitd(["audiogram"] + command)
            #expect(missing.status == 65)
            #expect(missing.stderr == "ribbitd: error: no hearing test 9 is stored; `ribbitd audiogram list` shows them\n")
        }
        let trial = try ribbitd(["audiogram", "fit", "1", "--trial", "15m"])
        #expect(trial.status == 69 && trial.stderr.contains("a trial needs the daemon running"))
        #expect(try ribbitd(["audiogram", "fit", "1", "--trial", "soon"]).status == 64)
        #expect(try ribbitd(["audiogram", "fit", "1", "-o", path("x.txt")]).status == 64)
    }

    @Test func theReportHoldsTheDisclaimerAndTheChart() throws {
        _ = try seed()
        let html = path("report.html")
        let made = try ribbitd(["audiogram", "report", "2", "-o", html])
        #expect(made.status == 0, "\(made.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("<p class=\"disclaimer\" id=\"disclaimer\">\(HearingTestRecord.disclaimer)</p>"))
        #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"audiogram-chart\""))
        #expect(page.contains("class=\"audiogram-right-mark\" data-symbol=\"O\""))
        #expect(
            page.contains("class=\"audiogram-left-mark\" data-symbol=\"X\" data-hz=\"8000\" data-db-hl=\"90\" data-no-response=\"true\""))
        #expect(page.contains("NR 90") && page.contains("@page { size: A4"))
        // Self-contained: no scripts, and the only URL is the SVG namespace.
        #expect(!page.contains("<script") && page.components(separatedBy: "http").count == 2)
        try renderWithChromium(html)
    }

    /// Headless chromium prints the page to PNG (kept at $RIBBIT_AUDIOGRAM_REPORT_PNG when set, to
    /// look at, with the page and the store beside it).
    func renderWithChromium(_ html: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else { return }
        let png = path("report.png")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-crash-reporter",
            "--user-data-dir=\(path("profile"))", "--window-size=794,1123", "--screenshot=\(png)",
            URL(fileURLWithPath: html).absoluteString,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]) && data.count > 20000)
        if let keep = ProcessInfo.processInfo.environment["RIBBIT_AUDIOGRAM_REPORT_PNG"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: png, toPath: keep)
            try? FileManager.default.removeItem(atPath: keep + ".html")
            try FileManager.default.copyItem(atPath: html, toPath: keep + ".html")
            try? FileManager.default.removeItem(atPath: keep + ".sqlite")
            try FileManager.default.copyItem(atPath: storePath, toPath: keep + ".sqlite")
        }
    }

    @Test func thePrescriptionHistoryIsUntouched() throws {
        for sample in ["ski-slope.rx", "mild-presbycusis.rx"] {
            #expect(try ribbitd(["load", TestPaths.prescription(sample).path]).status == 0)
        }
        let history = try PrescriptionStore(path: storePath)
        let before = (try history.all(), try history.activeID())
        #expect(before.0.count == 2 && before.1 == 2)
        let store = try HearingTestStore(path: storePath)
        try store.save(HearingTestRecords.reliable())
        #expect(try ribbitd(["audiogram", "list"]).status == 0)
        #expect(try ribbitd(["audiogram", "fit", "1", "-o", path("a.rx")]).status == 0)
        #expect(try ribbitd(["audiogram", "report", "1", "-o", path("a.html")]).status == 0)
        // Fitting stores nothing; the history reads as before, also through a fresh open and the CLI.
        let reopened = try PrescriptionStore(path: storePath)
        #expect(try reopened.all() == before.0 && reopened.activeID() == before.1 && reopened.integrityCheck() == "ok")
        #expect(try ribbitd(["list"]).stdout.contains("*2  Mild sloping high-frequency loss"))
    }
}
