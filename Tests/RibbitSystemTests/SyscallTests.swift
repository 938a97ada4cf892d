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

/// The one way ribbit replaces a file: whole, with the mode asked, no temporary file left, and a
/// failure that names the call and the file.
@Suite struct AtomicFileTests {
    let directory: String = {
        var template = Array("/tmp/ribbit-atomic-XXXXXX".utf8CString)
        return String(cString: mkdtemp(&template)!)
    }()

    func contents(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        return Array(bytes[0..<max(0, read(fd, &bytes, bytes.count))])
    }

    func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] }

    /// This process's umask, read without changing it (it is the whole process's: other tests
    /// create files meanwhile).
    static var umaskNow: mode_t {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") } ?? "Umask: 0022"
        return mode_t(line.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func replacesAFileWholeWithTheModeAsked() throws {
        let path = directory + "/settings.toml"
        try AtomicFile.write(Array("old".utf8), to: path, mode: 0o644)
        let big = (0..<300_000).map { UInt8($0 % 251) }
        try AtomicFile.write(big, to: path, mode: 0o646)
        #expect(contents(path) == big)
        #expect(mode(path) == 0o646 & ~Self.umaskNow)  // a new file's mode: the umask applies
        try AtomicFile.write([], to: path, mode: 0o646, exactly: true)
        #expect(contents(path) == [])
        #expect(mode(path) == 0o646, "exactly the mode asked, whatever the umask (\(String(Self.umaskNow, radix: 8)))")
        #expect(names() == ["settings.toml"])
    }

    @Test func aFailureNamesTheCallAndTheFileAndLeavesTheOldOne() throws {
        let path = directory + "/kept"
        try AtomicFile.write(Array("kept".utf8), to: path, mode: 0o644)
        // A directory in the way of the rename: it fails after everything was written.
        let blocked = directory + "/blocked"
        #expect(mkdir(blocked, 0o700) == 0 && mkdir(blocked + "/inside", 0o700) == 0)
        #expect(throws: SyscallError(call: "rename", subject: blocked, code: EISDIR)) {
            try AtomicFile.write(Array("new".utf8), to: blocked, mode: 0o644)
        }
        let missing = directory + "/no/such/dir/file"
        do {
            try AtomicFile.write(Array("x".utf8), to: missing, mode: 0o644)
            Issue.record("wrote into a directory that does not exist")
        } catch {
            #expect(error.call == "open" && error.code == ENOENT)
            #expect(
                error.description.hasPrefix("cannot write \(directory)/no/such/dir/.file.")
                    && error.description.hasSuffix(": No such file or directory (open)"))
        }
        #expect(contents(path) == Array("kept".utf8))
        #expect(names().sorted() == ["blocked", "kept"])
    }
}
