import Foundation

/// Writes the daemon's small files (the wearer's volume and program, the copy of the active
/// prescription) on a thread of its own, so the control loop never waits for the disk. Each
/// write ends in an fsync, and on a busy disk ext4 makes a small file's fsync wait for other
/// processes' data: beside `stress-ng --hdd` one took 1.26 s, and in a loaded test run a trial's
/// end held the loop for 11 s, longer than a client waits for its answer. The newest write of a
/// path replaces one still waiting; `finish` writes what is left before the daemon exits.
final class FileWriter: @unchecked Sendable {
    /// A write; returns what went wrong, or nil.
    typealias Job = @Sendable () -> String?

    private let condition = NSCondition()
    private var waiting: [(path: String, job: Job)] = []
    private var outcomes: [(path: String, problem: String?)] = []
    private var writing = false
    private var started = false
    private var closing = false

    func submit(_ path: String, _ job: @escaping Job) {
        condition.lock()
        defer { condition.unlock() }
        waiting.removeAll { $0.path == path }
        waiting.append((path, job))
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "ribbitd-files"
            thread.start()
        }
        condition.broadcast()
    }

    /// What was written since the last call: nil where it went well, else the problem.
    func takeOutcomes() -> [(path: String, problem: String?)] {
        condition.lock()
        defer { condition.unlock() }
        let taken = outcomes
        outcomes = []
        return taken
    }

    /// Waits until everything submitted is written (up to `seconds`), then lets the thread
    /// end; a later `submit` starts it again. False when the disk took longer.
    @discardableResult
    func finish(within seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(seconds, 0))
        condition.lock()
        defer { condition.unlock() }
        while !waiting.isEmpty || writing {
            if !condition.wait(until: deadline) { return false }
        }
        closing = true
        condition.broadcast()
        return true
    }

    private func run() {
        condition.lock()
        while true {
            while waiting.isEmpty, !closing { condition.wait() }
            if waiting.isEmpty {
                started = false
                closing = false
                condition.unlock()
                return
            }
            let next = waiting.removeFirst()
            writing = true
            condition.unlock()
            let problem = next.job()
            condition.lock()
            writing = false
            outcomes.append((next.path, problem))
            condition.broadcast()
        }
    }
}
