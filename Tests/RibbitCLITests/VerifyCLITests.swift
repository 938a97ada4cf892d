import Foundation
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

    func ribbitd(_ arguments: [String]) throws -> RunResult {
        try Built.run(Ribbitd.binary, arguments, environment: environment, timeoutSeconds: 120)
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
        for id in ["ospl90", "full-on-gain", "frequency-response", "io-right", "io-left", "target-50", "target-65", "target-80"] {
            #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(id)\""), "no plot \(id)")
        }
        #expect(!FileManager.default.fileExists(atPath: html + ".partial"))
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
