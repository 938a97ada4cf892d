import Foundation
import RibbitStore
import RibbitTestSupport
import Testing

/// `ribbitd verify` as built: the JSON and the HTML report for a sample prescription, its exit
/// codes, and what it says without a prescription or a daemon.
@Suite struct VerifyCLITests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    /// A debug build's verify takes about 11 s of CPU; a test machine running the other suites
    /// beside it can stretch that many times over, so the limit only catches a hang.
    func ribbitd(_ arguments: [String]) throws -> RunResult {
        try Built.run(Ribbitd.binary, arguments, environment: environment, timeoutSeconds: 400)
    }

    /// flat.rx: 0 dB everywhere, linear, no low-pass. Full on is the volume's top, +10 dB; the
    /// target (0 dB) matches at every level, so the exit code is 0.
    @Test func flatSampleGivesJSONAndHTML() throws {
        let html = directory.appendingPathComponent("report.html").path
        let result = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "--json", "-o", html])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["prescriptionName"] as? String == "Flat (0 dB, no low-pass)")
        #expect((json["calibration"] as? [String: Any])?["label"] as? String == "uncalibrated, +-20 dB")
        let ears = try #require(json["ears"] as? [[String: Any]])
        #expect(ears.map { $0["ear"] as? String } == ["right", "left"])
        for ear in ears {
            let hfa = try #require(ear["hfaFullOnGainDB"] as? Double)
            #expect(abs(hfa - 10) <= 0.3, "HFA full-on gain \(hfa)")
            #expect((ear["targetMatch"] as? [[String: Any]])?.count == 3)
        }
        let latency = try #require(json["latency"] as? [String: Any])
        #expect(latency["measuredFrames"] as? Int == latency["reportedFrames"] as? Int)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        for id in ["ospl90", "full-on-gain", "io-right", "io-left", "target-50", "target-65", "target-80"] {
            #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(id)\""), "no plot \(id)")
        }
        #expect(page.contains("ribbit test-box print-out") && page.contains("What the print-out measures"))
        // Written whole (AtomicFile): no temporary file stays beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") } == [])
    }

    /// `--print-out` writes the two pages alone (no definitions, target tables or prescription
    /// behind them); without a file to write it is refused in one line, before measuring.
    @Test func thePrintOutAlone() throws {
        let file = directory.appendingPathComponent("print-out.html").path
        let result = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "--print-out", "-o", file])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOfFile: file, encoding: .utf8)
        #expect(page.contains("ribbit test-box print-out") && page.contains("id=\"io-left\""))
        #expect(!page.contains("What the print-out measures") && !page.contains("id=\"target-50\""))
        let refused = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "--print-out"])
        #expect(refused.status != 0 && refused.stderr.contains("add -o FILE.html"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }

    /// The report's log section reads the data log on this machine: two days written through
    /// the store's own API come back summed, with their level bins, in the HTML and the JSON;
    /// without a log the section says there is none.
    @Test func theReportSaysWhatTheWearersDaysSoundLike() throws {
        let bare = directory.appendingPathComponent("bare.html").path
        #expect(try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "-o", bare]).status == 0)
        #expect(try String(contentsOfFile: bare, encoding: .utf8).contains("No data log on this machine"))

        let dataDirectory = try #require(environment["XDG_DATA_HOME"]) + "/ribbit"
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        var days: [WearLog.Day] = []
        for (offset, hours) in [(2.0, 3.0), (1.0, 5.0)] {
            var day = WearLog.Day(date: formatter.string(from: Date().addingTimeInterval(-offset * 86400)))
            day.processingSeconds = ["noisy": hours * 3600 / 2, "quiet": hours * 3600 / 2]
            day.noiseReductionSeconds = hours * 3600 / 2
            day.levelSeconds = [60: 3000, 70: 1000]
            day.programSwitches = 2
            days.append(day)
        }
        try WearLog(path: WearLog.path(dataDirectory: dataDirectory)).add(days)
        let html = directory.appendingPathComponent("worn.html").path
        let result = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "--json", "-o", html])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let wear = try #require(json["wear"] as? [String: Any])
        #expect(wear["days"] as? Int == 2 && wear["programSwitches"] as? Int == 4)
        #expect(abs((wear["noiseReductionHours"] as? Double ?? 0) - 4) < 1e-9)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(
            page.contains("What the wearer's days sound like")
                && page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"210\" id=\"wear-levels\">"))
        #expect(page.contains("8.0 (4.0 a day)"), "8 hours over 2 days")
        #expect(
            page.contains("Median / 90th percentile input level</th><td class=\"l\">65 dB SPL / 75 dB SPL"),
            "3000 s at 60-65, 1000 at 70-75")
    }

    @Test func summaryWithoutJSON() throws {
        let result = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "--program", "music"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("program music"))
        #expect(result.stdout.contains("OSPL90"))
        #expect(result.stdout.contains("target match  50 dB SPL pass, 65 dB SPL pass, 80 dB SPL pass"))
    }

    @Test func withoutAPrescriptionOrADaemon() throws {
        let result = try ribbitd(["verify"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("--rx RX"), "\(result.stderr)")
        let missing = try ribbitd(["verify", "--rx", directory.appendingPathComponent("none.rx").path])
        #expect(missing.status == 66, "\(missing.stderr)")
        let unwritable = try ribbitd(["verify", "--rx", TestPaths.prescription("flat.rx").path, "-o", "/nonexistent/dir/r.html"])
        #expect(unwritable.status == 73, "\(unwritable.stderr)")
    }
}
