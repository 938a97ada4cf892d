import Foundation
import Glibc
import RibbitStore
import RibbitTestSupport
import Testing

/// The data log through the real daemon: noise through a camfit prescription on a dummy JACK
/// server, then `ribbitd log --json` after the daemon stopped (its final flush).
@Suite(.endToEnd) struct WearLogDaemonTests {
    /// White noise at -30.5 dBFS RMS per channel: uncalibrated (100 dB SPL for a full-scale
    /// sine, RMS 1/sqrt(2)), 100 - 30.5 + 10 log10(2) = 72.5 dB SPL, the middle of the 70-75 bin.
    static let noiseDBFS = -30.5
    static var noiseDBSPL: Double { 100 + noiseDBFS + 10 * log10(2.0) }

    @Test func noiseThroughCamfitIsLoggedInItsProgramAndLevelBin() throws {
        let server = try JackTestServer(period: 256)
        let started = Date()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--log-level", "debug", "--rx", TestPaths.prescription("camfit-sloping.rx").path],
            audit: true)
        try daemon.waitUntilProcessing()
        let noisy = try daemon.ribbitd(["program", "noisy"])
        #expect(noisy.status == 0, "\(noisy.stderr)")
        _ = try Probe.record(server: server, signal: "noise", levelDBFS: Self.noiseDBFS, seconds: 4)
        let xruns = try daemon.status().totalXruns
        #expect(try daemon.stop() == 0)
        let wallSeconds = Date().timeIntervalSince(started)
        // Nothing new on the audio thread: the levels are the stats it already sent.
        try daemon.expectCleanAudioThread(callbacks: 1)
        let flushLine = daemon.log.split(separator: "\n").first { $0.contains("data log: ") && $0.contains(" written in ") }
        #expect(flushLine != nil, "the final flush is logged at debug level: \(daemon.log)")
        print("daemon: \(flushLine ?? "no flush line")")

        let result = try daemon.ribbitd(["log", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let days = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout)")
        #expect(days.count == 1 || days.count == 2, "one day (two across midnight): \(days.count)")
        func total(_ key: String) -> Double { days.reduce(0) { $0 + (($1[key] as? NSNumber)?.doubleValue ?? 0) } }
        func sum(_ key: String) -> [String: Double] {
            days.reduce(into: [:]) { all, day in
                for (name, value) in day[key] as? [String: NSNumber] ?? [:] { all[name, default: 0] += value.doubleValue }
            }
        }
        let programs = sum("processingSeconds")
        let levels = sum("levelSeconds")
        // The noise played 4 s in the noisy program (with noise reduction), within the time the daemon ran.
        let inNoisy = programs["noisy"] ?? 0
        #expect(inNoisy >= 3.8 && total("wornSeconds") <= wallSeconds, "\(programs), \(wallSeconds) s")
        #expect(abs(total("noiseReductionSeconds") - inNoisy) < 0.001, "noise reduction runs exactly while noisy plays")
        #expect(Set(programs.keys).isSubset(of: ["quiet", "noisy"]), "\(programs)")
        #expect(total("programSwitches") == 1 && total("volumeChanges") == 0 && total("starts") == 1)
        #expect(total("xruns") >= Double(xruns))
        // Its 1-s levels are in the 70-75 dB SPL bin; none above it (a second half noise,
        // half silence is quieter, never louder).
        #expect(WearLogBins.bin(Self.noiseDBSPL) == 70)
        #expect((levels["70"] ?? 0) >= 3, "\(levels)")
        #expect(levels.filter { (Int($0.key) ?? 0) >= 75 }.isEmpty, "\(levels)")
        print(
            "data log after 4 s of \(Self.noiseDBSPL) dB SPL noise: \(programs) s, levels \(levels.sorted { Int($0.key)! < Int($1.key)! })")
    }

    /// The flush every `log-interval` (5 s here, 60 by default): the first one is in the file
    /// while the daemon runs (read while it writes: WAL), within the interval of what played;
    /// a SIGKILL then loses nothing of it.
    @Test func theFirstIntervalIsWrittenWhileRunningAndSurvivesSIGKILL() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let config = directory.appendingPathComponent("config/ribbit/ribbitd.conf")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "log-interval = 5\n".write(to: config, atomically: true, encoding: .utf8)
        let started = Date()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], directory: directory)
        try daemon.waitUntilProcessing()
        let path = daemon.directory.appendingPathComponent("data/ribbit/wearlog.sqlite").path
        var running: [WearLog.Day] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, running.reduce(0, { $0 + ($1.processingSeconds["quiet"] ?? 0) }) == 0 {
            usleep(200_000)
            running = (try? WearLog(path: path).days()) ?? []
        }
        let quiet = running.reduce(0) { $0 + ($1.processingSeconds["quiet"] ?? 0) }
        #expect(quiet >= 1 && quiet <= Date().timeIntervalSince(started) + 0.5, "\(running)")
        #expect(running.reduce(0) { $0 + $1.starts } == 1)
        kill(daemon.pid, SIGKILL)
        while daemon.isRunning { usleep(20_000) }
        let log = try WearLog(path: path)
        #expect(try log.integrityCheck() == "ok")
        // Nothing written is lost (a later flush may have added to it before the kill landed).
        let after = try log.days()
        #expect(after.reduce(0) { $0 + ($1.processingSeconds["quiet"] ?? 0) } >= quiet, "\(after) after \(running)")
        #expect(after.reduce(0) { $0 + $1.starts } == 1)
    }

    /// The calibration tone replaces the hearing aid: its 3 s are not wear.
    @Test func theCalibrationToneIsNotWear() throws {
        let server = try JackTestServer(period: 256)
        let started = Date()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path])
        try daemon.waitUntilProcessing()
        let tone = try daemon.ribbitd(["calibrate", "--play", "--ear", "left", "--level", "-30", "--seconds", "3"])
        #expect(tone.status == 0, "\(tone.stderr)")
        usleep(4_000_000)
        #expect(try daemon.stop() == 0)
        let wall = Date().timeIntervalSince(started)
        let worn = try WearLog(path: daemon.directory.appendingPathComponent("data/ribbit/wearlog.sqlite").path).days()
            .reduce(0) { $0 + $1.wornSeconds }
        #expect(worn > 0.5 && worn <= wall - 2.9, "worn \(worn) s of \(wall) s with a 3 s tone")
    }

    /// `log = false` in ribbitd.conf: the daemon makes no data log.
    @Test func logFalseInTheConfigLogsNothing() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let config = directory.appendingPathComponent("config/ribbit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("log = false\n".utf8).write(to: config.appendingPathComponent("ribbitd.conf"))
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], directory: directory)
        try daemon.waitUntilProcessing()
        #expect(try daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: daemon.storePath))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/ribbit/wearlog.sqlite").path))
        #expect(try (JSONSerialization.jsonObject(with: Data(daemon.ribbitd(["log", "--json"]).stdout.utf8)) as? [Any])?.isEmpty == true)
    }
}

/// The bin rule of WearLog.bin, written again: 5 dB bins by their lower edge.
enum WearLogBins {
    static func bin(_ dbSPL: Double) -> Int { min(120, max(15, Int(floor(dbSPL / 5)) * 5)) }
}
