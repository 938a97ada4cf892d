import Foundation
import Glibc
import Synchronization

/// A child process the tests start and reap themselves, with the part of Foundation's
/// `Process` interface they use. Why not `Process`: on Linux, corelibs Foundation sees a child
/// end through a socket the child inherits and then reaps every child with a blocking
/// `waitpid` on one shared thread; with several end-to-end tests starting and ending processes
/// at once, that thread once blocked on a `ribbitd` still running, and every test waiting for
/// any other process waited with it for good (a clean-clone run hung). Here each child is
/// started by `posix_spawn` with only its own descriptors and waited for on its own PID.
public final class ChildProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String]?
    /// nil: this process's environment.
    public var environment: [String: String]?
    /// A `Pipe`, a `FileHandle` (`FileHandle.nullDevice` included) or nil (this process's own).
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    public private(set) var processIdentifier: Int32 = 0
    /// The raw wait status once reaped.
    private let waitStatus = Mutex<Int32?>(nil)

    public init() {}

    public func run() throws {
        guard let executableURL else { throw TestSetupError("ChildProcess.run: no executable") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams: [(Any?, Int32)] = [(standardInput, 0), (standardOutput, 1), (standardError, 2)]
        for (stream, target) in streams {
            var source: Int32?
            switch stream {
            case let pipe as Pipe: source = (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor
            case let handle as FileHandle where handle === FileHandle.nullDevice:
                guard posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0) == 0 else {
                    throw TestSetupError("ChildProcess.run: cannot open /dev/null")
                }
            case let handle as FileHandle: source = handle.fileDescriptor
            default: break
            }
            // A source below its target may have been replaced by an earlier dup2 already.
            if let source {
                guard source >= target, posix_spawn_file_actions_adddup2(&actions, source, target) == 0 else {
                    throw TestSetupError(
                        "ChildProcess.run: descriptor \(source) (closed, or replaced by an earlier stream) cannot become \(target)")
                }
            }
        }
        // Nothing else crosses over: a pipe another test made a moment ago stays out of this
        // child, or that test's reader would wait for this child to end before it saw EOF.
        guard closeFrom(&actions, 3) else { throw TestSetupError("ChildProcess.run: cannot close the other descriptors") }
        // The test threads block most signals; a child starts as a shell would start it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executableURL.path] + (arguments ?? [])).map { strdup($0) } + [nil]
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let error = posix_spawn(&pid, executableURL.path, &actions, &attributes, argv, envp)
        guard error == 0 else { throw TestSetupError("cannot start \(executableURL.path): \(String(cString: strerror(error)))") }
        processIdentifier = pid
        exitDescriptor = Self.pidfdOpen.map { $0(pid, 0) } ?? -1
        // The child's ends belong to the child now: a reader sees EOF when the child closes its copy.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe, standardError as AnyObject !== standardOutput as AnyObject {
            try? pipe.fileHandleForWriting.close()
        }
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), which Swift's Glibc module
    /// does not declare (_GNU_SOURCE); Debian 12 has glibc 2.36.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFromAction: CloseFrom? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: CloseFrom.self) }

    private func closeFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) -> Bool {
        if let action = Self.closeFromAction { return action(&actions, lowest) == 0 }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int32($0) } ?? []
        for fd in open where fd >= lowest { posix_spawn_file_actions_addclose(&actions, fd) }
        return true
    }

    /// A pidfd (Linux 5.3) for the child: it becomes readable when the child ends and, unlike
    /// the PID, can never name another process once the child has been reaped. -1 without one.
    private var exitDescriptor: Int32 = -1
    private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    private static let pidfdOpen: PidfdOpen? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open")
        .map { unsafeBitCast($0, to: PidfdOpen.self) }

    deinit { if exitDescriptor >= 0 { close(exitDescriptor) } }

    /// Reaps the child if it has ended; with `blocking`, first waits (without reaping) until it has.
    private func reap(blocking: Bool) {
        let pid = processIdentifier
        guard pid > 0 else { return }
        if blocking && exitDescriptor >= 0 {
            var ended = pollfd(fd: exitDescriptor, events: Int16(POLLIN), revents: 0)
            while poll(&ended, 1, -1) < 0 && errno == EINTR {}
        } else if blocking {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        }
        waitStatus.withLock { status in
            guard status == nil else { return }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                status = raw
            } else if result < 0 && errno == ECHILD {
                status = 0x7f00  // reaped by someone else: "exit 127", never "still running"
            }
        }
    }

    public var isRunning: Bool {
        guard processIdentifier > 0 else { return false }
        reap(blocking: false)
        return waitStatus.withLock { $0 == nil }
    }

    public func waitUntilExit() {
        while isRunning { reap(blocking: true) }
    }

    /// Sends SIGTERM unless the child has already been reaped (its PID may then be another's).
    public func terminate() { signal(SIGTERM) }

    /// Sends `signal` to the child while it has not been reaped.
    public func signal(_ number: Int32) {
        waitStatus.withLock { status in
            if status == nil && processIdentifier > 0 { kill(processIdentifier, number) }
        }
    }

    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    private var rawStatus: Int32 {
        waitUntilExit()
        return waitStatus.withLock { $0 ?? 0 }
    }

    /// The exit code, or the signal's number for a child a signal ended (as `Process` says it).
    public var terminationStatus: Int32 {
        let raw = rawStatus
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    public var terminationReason: TerminationReason { rawStatus & 0x7f == 0 ? .exit : .uncaughtSignal }
}
