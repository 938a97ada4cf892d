import Foundation
import RibbitStore
import RibbitTestSupport
import Testing

/// `ribbitd log` on a data log written here (no daemon): text, --since, --json, --erase.
@Suite struct LogCLITests {
    let directory: URL
    let environment: [String: String]
    var path: String { directory.appendingPathComponent("data/ribbit/wearlog.sqlite").path }

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }

    /// Two days: 2 h of noisy and 1 h of quiet, 20 min bypassed; 3600 s at 60-65, 1800 at 70-75.
    func write() throws {
        var first = WearLog.Day(date: "2026-11-20")
        first.processingSeconds = ["noisy": 7200, "quiet": 3600]
        first.noiseReductionSeconds = 7200
        first.bypassedSeconds = 1200
        first.levelSeconds = [60: 3600, 70: 1800]
        (first.programSwitches, first.volumeChanges, first.xruns, first.starts) = (3, 1, 2, 1)
        var second = WearLog.Day(date: "2026-11-22")
        second.processingSeconds = ["music": 1800]
        second.starts = 2
        try WearLog(path: path).add([first, second])
    }

    @Test func nothingLoggedIsSaidAndCreatesNothing() throws {
        let shown = try ribbitd(["log"])
        #expect(shown.status == 0 && shown.stdout.hasPrefix("nothing logged yet"), "\(shown.stdout)")
        #expect(try (JSONSerialization.jsonObject(with: Data(ribbitd(["log", "--json"]).stdout.utf8)) as? [Any])?.isEmpty == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func textJSONSinceAndErase() throws {
        try write()
        let text = try ribbitd(["log"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "2026-11-20  worn 3.3 h: noisy 2.0 h, quiet 1.0 h, bypassed 0.3 h")
        #expect(lines[1] == "  noise reduction 2.0 h, 3 program switches, 1 volume change, 2 xruns, 1 start")
        #expect(lines[2] == "  input level, dB SPL (1-s levels, 1.5 h measured):")
        // 3600 s is the most: 30 marks; 1800 s: 15; the empty bin between: none.
        #expect(lines[3] == "  60-65   67%  " + String(repeating: "#", count: 30))
        #expect(lines[4] == "  65-70    0%  ")
        #expect(lines[5] == "  70-75   33%  " + String(repeating: "#", count: 15))
        #expect(
            text.stdout.contains(
                "2026-11-22  worn 0.5 h: music 0.5 h\n  noise reduction 0.0 h, 0 program switches, 0 volume changes, 0 xruns, 2 starts\n"))

        let since = try ribbitd(["log", "--since", "2026-11-21", "--json"])
        let days = try #require(try JSONSerialization.jsonObject(with: Data(since.stdout.utf8)) as? [[String: Any]])
        #expect(days.count == 1 && days[0]["date"] as? String == "2026-11-22" && days[0]["starts"] as? Int == 2)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(ribbitd(["log", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(all.count == 2 && all[0]["wornSeconds"] as? Double == 12000)
        #expect((all[0]["levelSeconds"] as? [String: Int]) == ["60": 3600, "70": 1800])
        #expect((all[0]["processingSeconds"] as? [String: Double]) == ["noisy": 7200, "quiet": 3600])
        // The documented fields are the printed ones.
        let doc = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/json-output.md"), encoding: .utf8)
        for key in all[0].keys { #expect(doc.contains("`\(key)`"), "\(key)") }

        let bad = try ribbitd(["log", "--since", "20 Nov"])
        #expect(bad.status == 64 && bad.stderr.contains("--since takes a date as YYYY-MM-DD"), "\(bad.stderr)")
        #expect(try ribbitd(["log", "--erase", "--json"]).status == 64)
        // Not a terminal: --erase does not ask.
        let erased = try ribbitd(["log", "--erase"])
        #expect(erased.status == 0 && erased.stdout == "erased the data log (2 days)\n", "\(erased.stdout)\(erased.stderr)")
        #expect(try WearLog(path: path).days().isEmpty)
        // Erased means gone from the file's bytes too (secure_delete, VACUUM, WAL truncated).
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.range(of: Data("2026-11-20".utf8)) == nil)
    }
}
