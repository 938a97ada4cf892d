import Foundation
import Synchronization
import Testing

/// The trait of the end-to-end suites (a real jackd, ribbitd, a browser, a package build): each
/// test runs on a thread of its own, and at most `RIBBIT_END_TO_END_AT_ONCE` of them (default 2)
/// run at a time, across suites.
///
/// Why: these tests are synchronous and spend most of their time waiting for sound played in
/// real time. On swift-testing's thread pool (one thread per core) two of them filled a 2-core
/// machine's pool while the CPU stood 70-95 % idle (a 15-minute run measured in 5 s steps), and
/// a test that had ended could not even report it until a thread came free. On threads of their
/// own they wait without holding the pool; the gate keeps as many at once as the machine can
/// carry without starving their JACK servers (`scripts/swift-test.sh` chooses it from the cores
/// and how idle they are).
public struct EndToEndTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        let limit = test.traits.lazy.compactMap { $0 as? RunningLimitTrait }.first
        await EndToEndGate.shared.enter(priority: limit?.duration ?? .zero)
        defer { EndToEndGate.shared.leave() }
        let executor = OwnThreadExecutor(name: test.name)
        defer { executor.finish() }
        let started = ContinuousClock.now
        try await withTaskExecutorPreference(executor) { try await function() }
        // Counted from when the test got its turn: swift-testing's `.timeLimit` would count the
        // wait at the gate too.
        let took = ContinuousClock.now - started
        // What the test itself took (its "passed after" counts the wait at the gate too).
        print("⏱ \(test.name) ran \(took.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))) once let in")
        if let limit, took > limit.duration {
            Issue.record("\(test.name) ran \(took), over its limit of \(limit.duration)")
        }
    }
}

/// How long an end-to-end test may run once it has its turn (`.endToEnd` checks it). The long
/// tests carry one, and the gate lets the longest limits in first: the run ends when its last
/// test does, and a long test let in last makes it end late (seen: the 2-minute hearing test
/// admitted after 5 minutes of waiting).
public struct RunningLimitTrait: TestTrait {
    public let duration: Duration
}

extension Trait where Self == RunningLimitTrait {
    public static func runningLimit(minutes: Int) -> RunningLimitTrait { RunningLimitTrait(duration: .seconds(60 * minutes)) }
}

extension Trait where Self == EndToEndTrait {
    /// An end-to-end test: on its own thread, a bounded number at a time.
    public static var endToEnd: EndToEndTrait { EndToEndTrait() }
}

/// A counting gate whose waiters suspend (they hold no thread while they wait); of those
/// waiting, the one with the highest priority goes in first, then the first to arrive.
final class EndToEndGate: Sendable {
    static let shared = EndToEndGate(width: width(from: ProcessInfo.processInfo.environment["RIBBIT_END_TO_END_AT_ONCE"]))

    static func width(from text: String?) -> Int {
        guard let text, let width = Int(text), width >= 1 else { return 2 }
        return width
    }

    private struct Waiter {
        var priority: Duration
        var continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var free: Int
        var waiting: [Waiter] = []
    }
    private let state: Mutex<State>

    init(width: Int) { state = Mutex(State(free: width)) }

    func enter(priority: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(Waiter(priority: priority, continuation: continuation))
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let top = state.waiting.indices.max(by: { state.waiting[$0].priority < state.waiting[$1].priority }) else {
                state.free += 1
                return nil
            }
            return state.waiting.remove(at: top).continuation
        }
        next?.resume()
    }
}

/// A task executor with one thread: the jobs given to it run there, in order, until `finish`.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`
    private var finished = false  // guarded by `condition`

    init(name: String) {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        thread.stackSize = 8 << 20  // a main thread's, not a pool thread's
        thread.start()
    }

    func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The thread ends once the jobs already given have run.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            let job = jobs.isEmpty ? nil : jobs.removeFirst()
            condition.unlock()
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
