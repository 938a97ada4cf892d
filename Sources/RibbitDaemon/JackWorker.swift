import Dispatch
import Foundation
import RibbitControl
import Synchronization

/// Runs the libjack calls that wait for the server (open, activate, connect, close) on a thread
/// of their own, one at a time and in order. libjack waits without a deadline: a stopped jackd
/// or a stuck PipeWire must not hold the control loop, which serves the socket, the watchdog
/// and SIGTERM. The control loop starts a job and collects its result later (`Mailbox`).
final class JackWorker: Sendable {
    private let queue = DispatchQueue(label: "ribbitd.jack")
    private let unfinished = Atomic<Int>(0)

    /// Runs `job` after every job started before it.
    func run(_ job: @escaping @Sendable () -> Void) {
        unfinished.add(1, ordering: .relaxed)
        queue.async {
            job()
            self.unfinished.subtract(1, ordering: .releasing)
        }
    }

    /// Waits until every job has finished, at most `seconds`; false when one is still stuck.
    func waitUntilIdle(seconds: Double) -> Bool {
        let deadline = MonotonicClock.seconds() + seconds
        while unfinished.load(ordering: .acquiring) > 0 {
            if MonotonicClock.seconds() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}

/// One value handed from the worker to the control thread. The values (a JACK session) are not
/// Sendable because they are used by one thread at a time; this is the hand-over between them.
final class Mailbox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    func put(_ newValue: Value) { lock.withLock { value = newValue } }

    func take() -> Value? {
        lock.withLock {
            defer { value = nil }
            return value
        }
    }
}
