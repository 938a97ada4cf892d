import Foundation
import Glibc
import Synchronization
import Testing

@testable import RibbitDaemon

/// The daemon's file writer: writes happen off the caller's thread, the newest write of a path
/// replaces one still waiting, every outcome comes back once, and `finish` waits for the disk.
@Suite struct FileWriterTests {
    @Test func theNewestWriteWinsAndFinishWaitsForIt() throws {
        let writer = FileWriter()
        let written = Mutex<[String]>([])
        let gate = Mutex(true)
        // The first job holds the thread until the gate opens, so the next three wait behind it.
        writer.submit("a") {
            let until = Date().addingTimeInterval(5)  // bounded: a writer that runs jobs inline fails, not hangs
            while gate.withLock({ $0 }), Date() < until { usleep(1000) }
            written.withLock { $0.append("a1") }
            return nil
        }
        writer.submit("b") {
            written.withLock { $0.append("b1") }
            return "b failed"
        }
        writer.submit("b") {
            written.withLock { $0.append("b2") }
            return nil
        }
        writer.submit("c") {
            written.withLock { $0.append("c1") }
            return nil
        }
        #expect(written.withLock { $0 }.isEmpty, "a write ran on the caller's thread")
        #expect(!writer.finish(within: 0.05), "finish returned while a write was still waiting")
        gate.withLock { $0 = false }
        #expect(writer.finish(within: 10))
        let order = written.withLock { $0 }
        // "a" may have been taken before or after "b" and "c" were queued; b1 never runs.
        #expect(order.contains("a1") && order.contains("b2") && order.contains("c1") && !order.contains("b1"), "\(order)")
        let outcomes = writer.takeOutcomes()
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.problem == nil }, "\(outcomes)")
        #expect(writer.takeOutcomes().isEmpty)
    }

    @Test func aProblemComesBackAndTheWriterRestartsAfterFinish() {
        let writer = FileWriter()
        writer.submit("x") { "the disk is full" }
        #expect(writer.finish(within: 10))
        #expect(writer.takeOutcomes().map(\.problem) == ["the disk is full"])
        writer.submit("x") { nil }
        #expect(writer.finish(within: 10))
        #expect(writer.takeOutcomes().map(\.problem) == [nil])
    }
}
