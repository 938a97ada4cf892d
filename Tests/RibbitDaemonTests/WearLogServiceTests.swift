import Foundation
import Logging
import RibbitStore
import RibbitTestSupport
import Testing

@testable import RibbitDaemon

/// The data log's service on its own, on a made-up clock: ten turns a second in the noisy
/// program; the flush at 60 s fails (another writer holds the file), says so in one line and
/// keeps its counts; the flush at 120 s writes them all.
@Suite struct WearLogServiceTests {
    final class Lines: @unchecked Sendable {
        var text = ""
    }

    @Test func aFailedFlushIsLoggedAndItsCountsWrittenByTheNext() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("wearlog.sqlite").path
        let written = Lines()
        let log = Logger(label: "ribbitd") { _ in JournalLogHandler(logLevel: .debug) { written.text += $0 } }
        let state = WearLogService.Now(connected: true, output: .processing, program: "noisy", noiseReduction: true, volumeDB: 0, xruns: 0)
        let service = WearLogService(path: path, log: log) { state }
        try service.start(now: 0)
        for turn in 1...599 { service.tick(now: Double(turn) / 10) }
        // Another writer takes the file (as `log --erase` would) across the 60 s flush.
        let holder = ChildProcess()
        holder.executableURL = try #require(Built.tool("sqlite3"), "sqlite3 (make dev-deps) holds the lock")
        holder.arguments = [path]
        let input = Pipe()
        let answer = Pipe()
        holder.standardInput = input
        holder.standardOutput = answer
        try holder.run()
        input.fileHandleForWriting.write(Data("BEGIN EXCLUSIVE;\nSELECT 1;\n".utf8))
        // Its "1" says it holds the lock, however long a loaded machine took to start it.
        #expect(answer.fileHandleForReading.availableData.starts(with: Data("1".utf8)), "sqlite3 did not take the lock")
        let started = Date()
        service.tick(now: 60)
        let waited = Date().timeIntervalSince(started)
        #expect(written.text.contains("<3>cannot write the data log \(path) ("), "\(written.text)")
        #expect(written.text.contains("its counts are kept and tried again every minute"))
        // The busy timeout (0.5 s), not forever: the upper bound is for a loaded machine.
        #expect(waited >= 0.4 && waited < 10, "the control thread waited \(waited) s")
        input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        for turn in 601...1200 { service.tick(now: Double(turn) / 10) }
        #expect(written.text.contains("<5>the data log \(path) is written again"), "\(written.text)")
        let days = try WearLog(path: path).days()
        // 1199 turns of 0.1 s after the first (which has nothing before it).
        let noisy = days.reduce(0) { $0 + ($1.processingSeconds["noisy"] ?? 0) }
        #expect(abs(noisy - 119.9) < 0.001, "\(days)")
        #expect(abs(days.reduce(0) { $0 + $1.noiseReductionSeconds } - 119.9) < 0.001)
        #expect(days.reduce(0) { $0 + $1.starts } == 1)
        print("data log service: a flush against a held lock failed after \(String(format: "%.2f", waited)) s")
    }
}
