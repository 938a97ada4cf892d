import Glibc
import RibbitControl

/// Times the poll loop's turns. Every request and every service shares one thread, so a turn
/// that takes long holds all of them: clients time out (the CLI after 10 s, the web after 5 s)
/// and the dump stops. A turn over `reportSeconds` is said in the journal with its slowest part
/// and how much of the turn was this thread's CPU, which tells work (a fitting designed) from
/// waiting (a machine too busy to run the daemon, a disk, a pause confirmed).
struct TurnWatch {
    static let reportSeconds = 1.0
    private var started = 0.0
    private var cpuStarted = 0.0
    private var slowest: (what: String, seconds: Double)?

    mutating func begin() {
        started = MonotonicClock.seconds()
        cpuStarted = Self.threadCPUSeconds()
        slowest = nil
    }

    /// Runs one part of the turn, timed under `what` ("request load", "JACK session").
    mutating func part<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) rethrows -> T {
        let start = MonotonicClock.seconds()
        defer {
            let seconds = MonotonicClock.seconds() - start
            if seconds > slowest?.seconds ?? 0 { slowest = (what(), seconds) }
        }
        return try body()
    }

    /// The line to log when the turn took more than `reportSeconds`, else nil.
    func end() -> String? {
        let seconds = MonotonicClock.seconds() - started
        guard seconds > Self.reportSeconds else { return nil }
        let cpu = Self.threadCPUSeconds() - cpuStarted
        let part = slowest.map { String(format: "; %@ took %.2f s of it", $0.what, $0.seconds) } ?? ""
        return String(format: "one turn of the control loop took %.2f s, %.2f s of it this thread's CPU%@", seconds, cpu, part)
            + (cpu < seconds / 2 ? " (most of it waiting: a busy machine, or I/O)" : "")
    }

    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
