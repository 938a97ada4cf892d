import Glibc
import Testing

@testable import RibbitDaemon

/// The control loop's watch: a turn over a second is said, with its slowest part, and a turn
/// spent waiting rather than computing is put down to a busy machine.
@Suite struct TurnWatchTests {
    @Test func aSlowTurnNamesItsSlowestPartAndWhetherItWasWork() {
        var watch = TurnWatch()
        watch.begin()
        watch.part("request status") {}
        watch.part("request load") { usleep(1_100_000) }  // off the CPU: what a starved thread sees
        let line = watch.end()
        #expect(line?.contains("request load took 1.") == true, "\(line ?? "nil")")
        #expect(line?.hasSuffix("(most of it waiting: a busy machine, or I/O)") == true, "\(line ?? "nil")")

        watch.begin()
        var spin = 0.0
        watch.part("request use") {
            let end = TurnWatch.threadCPUSeconds() + 1.1
            while TurnWatch.threadCPUSeconds() < end { spin += 1 }  // on the CPU: work
        }
        let busy = watch.end()
        // The CPU figure, not the label: a loaded machine may stretch the spin's wall time.
        let cpu = busy?.firstMatch(of: /, ([0-9.]+) s of it this thread's CPU/).flatMap { Double($0.1) }
        #expect(busy?.contains("request use took") == true && (cpu ?? 0) >= 1.05, "\(busy ?? "nil") \(spin)")

        watch.begin()
        watch.part("request status") {}
        #expect(watch.end() == nil, "a quick turn says nothing")
    }
}
