import Foundation
import Glibc
import RibbitStore
import RibbitTestSupport
import Testing

/// The data log on its own: the tally, flushes that add up, a year's size, and what a SIGKILL
/// or a full disk in the middle of writing leaves.
@Suite struct WearLogTests {
    func log() throws -> WearLog {
        try WearLog(path: try TestPaths.temporaryDirectory().appendingPathComponent("wearlog.sqlite").path)
    }

    /// Day i as ribbit-wearlog-writer writes it (its own copy of the formula).
    static func sampleDay(_ i: Int) -> WearLog.Day {
        var day = WearLog.Day(date: WearLog.date(of: Date(timeIntervalSince1970: 1_577_880_000 + Double(i) * 86400), timeZone: .gmt))
        day.processingSeconds = ["quiet": Double(3600 + i), "noisy": Double(1800 + 2 * i)]
        day.noiseReductionSeconds = Double(1800 + 2 * i)
        day.bypassedSeconds = Double(i % 60)
        day.levelSeconds = Dictionary(uniqueKeysWithValues: stride(from: 15, through: 120, by: 5).map { ($0, $0 * 10 + i) })
        day.programSwitches = i % 7
        day.volumeChanges = i % 5
        day.xruns = i % 3
        day.starts = 1
        return day
    }

    @Test func binsAreFiveDecibelsWideWithOpenEnds() {
        #expect(WearLog.bin(levelDBSPL: 62.4) == 60 && WearLog.bin(levelDBSPL: 65) == 65 && WearLog.bin(levelDBSPL: 64.999) == 60)
        #expect(WearLog.bin(levelDBSPL: 3) == 15 && WearLog.bin(levelDBSPL: 19.9) == 15 && WearLog.bin(levelDBSPL: 20) == 20)
        #expect(WearLog.bin(levelDBSPL: 133) == 120 && WearLog.binEdges.first == 15 && WearLog.binEdges.last == 120)
        #expect(WearLog.date(of: Date(timeIntervalSince1970: 1_577_880_000), timeZone: .gmt) == "2020-01-01")
        // 23:30 UTC on 1 January is 2 January in Tokyo: the wearer's local day.
        let lateUTC = Date(timeIntervalSince1970: 1_577_836_800 + 23.5 * 3600)
        #expect(WearLog.date(of: lateUTC, timeZone: TimeZone(identifier: "Asia/Tokyo")!) == "2020-01-02")
    }

    /// Ten 100-ms levels a second: their power average, not their mean in dB, picks the bin.
    /// 50 and 70 dB SPL alternating: 10 log10((10^5 + 10^7) / 2) = 67.03 dB SPL (bin 65),
    /// where the mean in dB would say 60.
    @Test func oneSecondLevelsArePowerAverages() {
        var tally = WearLog.Tally()
        for k in 0..<30 { tally.addLevel(k % 2 == 0 ? 50 : 70, now: 100 + Double(k) * 0.1, date: "2026-11-23") }
        tally.addLevel(-200, now: 103.05, date: "2026-11-23")  // no compressor ran: not a level
        tally.closeLevels(now: 103.1, date: "2026-11-23")
        let days = tally.take()
        #expect(days.count == 1 && days[0].levelSeconds == [65: 3], "\(days)")
        #expect(tally.take().isEmpty)
    }

    @Test func flushesAddUpAndReadBack() throws {
        let log = try log()
        var tally = WearLog.Tally()
        tally.add(seconds: 60, mode: .processing(program: "noisy", noiseReduction: true), date: "2026-11-22")
        tally.add(seconds: 30, mode: .processing(program: "quiet", noiseReduction: false), date: "2026-11-22")
        tally.add(seconds: 5, mode: .paused, date: "2026-11-22")
        tally.count(date: "2026-11-22", programSwitches: 1, volumeChanges: 2, xruns: 3, starts: 1)
        try log.add(tally.take())
        tally.add(seconds: 40, mode: .processing(program: "noisy", noiseReduction: true), date: "2026-11-22")
        tally.add(seconds: 7, mode: .bypassed, date: "2026-11-23")
        tally.count(date: "2026-11-23", programSwitches: 4)
        try log.add(tally.take())
        let days = try log.days()
        #expect(days.map(\.date) == ["2026-11-22", "2026-11-23"])
        var expected = WearLog.Day(date: "2026-11-22")
        expected.processingSeconds = ["noisy": 100, "quiet": 30]
        expected.noiseReductionSeconds = 100
        expected.pausedSeconds = 5
        (expected.programSwitches, expected.volumeChanges, expected.xruns, expected.starts) = (1, 2, 3, 1)
        #expect(days[0] == expected)
        #expect(days[0].wornSeconds == 135 && days[1].bypassedSeconds == 7 && days[1].programSwitches == 4)
        #expect(try log.days(since: "2026-11-23").map(\.date) == ["2026-11-23"])
        // The read API for other readers: by data directory; none there is no days, and no file.
        let directory = (log.path as NSString).deletingLastPathComponent
        #expect(try WearLog.days(dataDirectory: directory) == days)
        #expect(try WearLog.days(dataDirectory: directory + "/none").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory + "/none"))
        try log.erase()
        #expect(try log.days().isEmpty && (try log.integrityCheck()) == "ok")
    }

    /// A file that is no SQLite database is moved aside and a new log started, with a line saying so.
    @Test func aDamagedLogIsMovedAsideAndStartedAgain() throws {
        let directory = try TestPaths.temporaryDirectory()
        let path = directory.appendingPathComponent("wearlog.sqlite").path
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let (log, recovery) = try WearLog.openRecovering(path: path)
        let line = try #require(recovery)
        #expect(line.hasPrefix("the data log \(path) is damaged") && line.contains("a new log was started"), "\(line)")
        try log.add([Self.sampleDay(0)])
        #expect(try log.days() == [Self.sampleDay(0)])
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("wearlog.sqlite.damaged-") }
        #expect(aside.count == 1, "\(aside)")
        #expect(try WearLog.openRecovering(path: path).recovery == nil)
    }

    /// A year of full days (every program, every level bin, every counter): the file stays
    /// far under 10 MB; and what one flush costs (a day's tally added to its rows, fsync'd).
    @Test func aYearIsSmallAndAFlushIsCheap() throws {
        let log = try log()
        for i in 0..<366 {
            var day = Self.sampleDay(i)
            day.processingSeconds = ["quiet": 20000, "noisy": 9000, "outdoor": 4000, "music": 3000]
            try log.add([day])
        }
        try log.add([Self.sampleDay(0)])  // adding to existing rows does not grow them
        let days = try log.days()
        #expect(days.count == 366 && days[0].levelSeconds.count == WearLog.binEdges.count)
        #expect(days[0].levelSeconds[15] == 300 && days[0].starts == 2)
        func size(_ suffix: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: log.path + suffix)[.size] as? Int) ?? 0 }
        let bytes = size("") + size("-wal")
        print("data log: 366 days = \(size("")) bytes + WAL \(size("-wal")) bytes")
        #expect(bytes < 1_000_000, "a year is \(bytes) bytes")

        var tally = WearLog.Tally()
        let start = Date()
        let flushes = 100
        for _ in 0..<flushes {
            tally.add(seconds: 60, mode: .processing(program: "noisy", noiseReduction: true), date: "2027-06-01")
            for k in 0..<60 { tally.addLevel(Double(40 + k), now: Double(k), date: "2027-06-01") }
            tally.count(date: "2027-06-01", xruns: 1)
            try log.add(tally.take())
        }
        print(String(format: "data log: one flush %.2f ms (mean of %d)", Date().timeIntervalSince(start) * 1000 / Double(flushes), flushes))
        #expect(try log.days(since: "2027-06-01").first?.xruns == flushes)
    }

    /// A child writing day after day (one transaction each) is SIGKILLed mid-stream: every
    /// day it reported committed is there, whole; the file passes SQLite's integrity check.
    @Test func aSIGKILLWhileWritingLosesNoEarlierDay() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("wearlog.sqlite").path
        let process = ChildProcess()
        process.executableURL = Built.product("ribbit-wearlog-writer")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            text += String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            if text.split(separator: "\n").count > 150 { break }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        let committed = text.split(separator: "\n").compactMap { Int($0) }.max() ?? -1
        #expect(committed >= 150)
        let log = try WearLog(path: path)
        #expect(try log.integrityCheck() == "ok")
        let days = try log.days()
        #expect(days.count >= committed + 1 && days.count <= committed + 2, "\(days.count) days, \(committed) reported")
        for (i, day) in days.enumerated() { #expect(day == Self.sampleDay(i), "day \(i)") }
    }

    /// The same child under a file-size limit (RLIMIT_FSIZE: what a full disk does to write()):
    /// the write fails with a line saying so, and the days written before are all there.
    @Test func aFullDiskFailsTheWriteAndKeepsEarlierDays() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("wearlog.sqlite").path
        let writer = Built.product("ribbit-wearlog-writer").path
        // dash's ulimit -f counts 512-byte blocks: 400 KB.
        let result = try Built.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -f 800 && exec \"$0\" \"$1\"", writer, path], timeoutSeconds: 120)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("data log: cannot write \(path): "), "\(result.stderr)")
        let committed = result.stdout.split(separator: "\n").compactMap { Int($0) }.max() ?? -1
        #expect(committed > 10)
        let log = try WearLog(path: path)
        #expect(try log.integrityCheck() == "ok")
        let days = try log.days()
        #expect(days.count == committed + 1, "\(days.count) days, \(committed) reported")
        for (i, day) in days.enumerated() { #expect(day == Self.sampleDay(i), "day \(i)") }
        print("data log: the file-size limit stopped the writer after \(committed + 1) days: \(result.stderr)")
    }
}
