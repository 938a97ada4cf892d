import Dispatch
import Foundation
import Glibc
import RibbitSystem
import Synchronization
import Testing

/// A read interrupted by a signal handler (installed without SA_RESTART, so the kernel returns
/// EINTR instead of restarting the call) goes on reading: the signal is sent only once the
/// reading thread is inside read(2), as /proc says.
@Suite(.serialized) struct SyscallTests {
    static let interrupts = Atomic<Int>(0)

    /// This thread's id in the kernel (the last part of /proc/thread-self's target).
    static func threadID() -> String {
        var target = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/thread-self", &target, target.count - 1)
        return String(decoding: target.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "/").last
            .map(String.init) ?? ""
    }

    @Test func aReadInterruptedBySignalReadsOn() throws {
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in _ = SyscallTests.interrupts.add(1, ordering: .relaxed) }
        action.sa_flags = 0  // no SA_RESTART: the read returns EINTR
        var previous = sigaction()
        #expect(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }
        Self.interrupts.store(0, ordering: .relaxed)

        // The reader is a thread of its own that takes SIGUSR1 (the test pool's threads block
        // signals); this thread waits until /proc shows it inside read(2), then interrupts it.
        struct Outcome: @unchecked Sendable {
            var tid = "", thread = pthread_t(), count = -1, byte: UInt8 = 0
        }
        let outcome = Mutex(Outcome())
        let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let readEnd = pipeEnds[0]
        let reader = Thread {
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            outcome.withLock {
                $0.tid = Self.threadID()
                $0.thread = pthread_self()
            }
            started.signal()
            var byte: UInt8 = 0
            let count = Syscall.retrying { read(readEnd, &byte, 1) }
            outcome.withLock {
                $0.count = count
                $0.byte = byte
            }
            finished.signal()
        }
        reader.start()
        started.wait()
        let (tid, thread) = outcome.withLock { ($0.tid, $0.thread) }
        // x86_64 numbers read 0, arm64 63; /proc/self/task/TID/syscall starts with the number
        // of the call the thread is blocked in.
        let deadline = Date().addingTimeInterval(10)
        var inRead = false
        while !inRead, Date() < deadline {
            let state = (try? String(contentsOfFile: "/proc/self/task/\(tid)/syscall", encoding: .utf8)) ?? ""
            inRead = state.split(separator: " ").first.map { ["0", "63"].contains(String($0)) } ?? false
            if !inRead { usleep(1000) }
        }
        #expect(inRead, "the reader never blocked in read(2)")
        pthread_kill(thread, SIGUSR1)
        usleep(100_000)
        var byte: UInt8 = 42
        _ = write(pipeEnds[1], &byte, 1)
        finished.wait()
        let (count, got) = outcome.withLock { ($0.count, $0.byte) }
        #expect(count == 1 && got == 42)
        #expect(Self.interrupts.load(ordering: .relaxed) == 1, "the signal reached the reader")
    }
}
