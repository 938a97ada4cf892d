import Foundation
import Glibc
import Synchronization

/// A finished child process.
public struct RunResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Executables `swift build` made (and tools on PATH), run with their output captured.
public enum Built {
    /// A product of this package: `.build/<configuration>/<name>`; an environment variable
    /// named like the product in capitals (RIBBITD, RIBBITD_RELEASE) overrides.
    public static func product(_ name: String, configuration: String = "debug") -> URL {
        let variable = name.uppercased().replacingOccurrences(of: "-", with: "_") + (configuration == "release" ? "_RELEASE" : "")
        if let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        return TestPaths.packageRoot.appendingPathComponent(".build/\(configuration)/\(name)")
    }

    /// Runs to the end; with `timeoutSeconds`, a child still running then is killed (SIGKILL
    /// gives status 9), so a test of something that must exit fails instead of hanging.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, timeoutSeconds: Double? = nil
    ) throws -> RunResult {
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        // Not the terminal the tests run from: a command that would prompt there must not wait.
        process.standardInput = FileHandle.nullDevice
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let timeoutSeconds {
            Thread {
                let deadline = Date().addingTimeInterval(timeoutSeconds)
                while process.isRunning && Date() < deadline { usleep(20_000) }
                process.signal(SIGKILL)
            }.start()
        }
        // Read stderr on another thread, so a chatty child cannot block on a full pipe.
        nonisolated(unsafe) var stderr: Result<Data, any Error> = .success(Data())
        let done = DispatchSemaphore(value: 0)
        Thread {
            stderr = Result { try err.fileHandleForReading.readAll() }
            done.signal()
        }.start()
        let stdout = Result { try out.fileHandleForReading.readAll() }
        done.wait()
        process.waitUntilExit()
        return RunResult(
            status: process.terminationStatus, stdout: String(decoding: try stdout.get(), as: UTF8.self),
            stderr: String(decoding: try stderr.get(), as: UTF8.self))
    }

    /// A tool from PATH (jackd, jack_lsp, setpriv ...).
    public static func tool(_ name: String) -> URL? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }
}

/// Stops a child by PID: SIGTERM, then SIGKILL after `grace` seconds.
public func stopProcess(_ process: ChildProcess, grace: Double = 5) {
    guard process.isRunning else { return }
    process.signal(SIGTERM)
    let deadline = Date().addingTimeInterval(grace)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    process.signal(SIGKILL)
    process.waitUntilExit()
}

/// A name no other server of this test run has (`ribbit-test-PID-N`): JACK and tmux servers
/// started by tests that run in parallel in one process must not meet (a tmux server shared by
/// two tests was once stopped by the first to finish, under the other's feet).
public enum ServerName {
    private static let serial = Atomic<Int>(0)

    public static func unique() -> String {
        "ribbit-test-\(getpid())-\(serial.add(1, ordering: .relaxed).newValue)"
    }
}

/// A private JACK server for one test: `jackd -n ribbit-test-PID-N --no-realtime -d dummy`,
/// started and stopped by PID.
public final class JackTestServer: @unchecked Sendable {
    public let name: String
    public let period: Int
    private var process: ChildProcess
    private let log: URL

    public init(period: Int = 64, sampleRate: Int = 48000, name: String? = nil) throws {
        self.name = name ?? ServerName.unique()
        self.period = period
        log = TestPaths.runDirectory.appendingPathComponent("\(self.name).jackd.log")
        process = ChildProcess()
        try start(sampleRate: sampleRate)
    }

    /// Servers started at the same moment by parallel suites sometimes miss jack_wait's
    /// window on a loaded machine (seen: "jackd did not come up"); a server that did not come up
    /// is stopped and started again, twice at most. Setup only: no product code is involved.
    private func start(sampleRate: Int) throws {
        for attempt in 1...3 {
            do {
                return try startOnce(sampleRate: sampleRate)
            } catch  where attempt < 3 {
                stopProcess(process, grace: 5)
                usleep(UInt32.random(in: 200_000...800_000))
            }
        }
    }

    private func startOnce(sampleRate: Int) throws {
        guard let jackd = Built.tool("jackd") else { throw TestSetupError("jackd is not installed (apt-get install jackd2)") }
        process = ChildProcess()
        process.executableURL = jackd
        process.arguments = ["-n", name, "--no-realtime", "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        guard let wait = Built.tool("jack_wait") else { throw TestSetupError("jack_wait is missing (jackd2's example clients)") }
        let result = try Built.run(wait, ["-w", "-t", "10"], environment: environment)
        guard result.status == 0, process.isRunning else {
            throw TestSetupError("jackd did not come up: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    /// Environment for clients of this server.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = name
        env["JACK_NO_START_SERVER"] = "1"
        return env
    }

    public var pid: Int32 { process.processIdentifier }

    /// The server's last log lines: why it refused a client, for the failure that met it.
    public func logTail(lines: Int = 12) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Kills the server outright (SIGKILL), as a crash would.
    public func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Starts the same server again after kill().
    public func restart(sampleRate: Int = 48000) throws { try start(sampleRate: sampleRate) }

    /// Stops the server so it leaves JACK's registry (/dev/shm/jack-shm-registry, 8 servers at
    /// most per machine; one killed keeps its entry): a test may have left it stopped (SIGSTOP),
    /// and a server whose client died mid-call waits 5 s for it before it exits on SIGTERM, so
    /// it gets 15 s before SIGKILL.
    public func stop() {
        process.signal(SIGCONT)
        stopProcess(process, grace: 15)
    }

    deinit { stop() }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Built {
    /// Runs a program that leaves a daemon behind (`tmux new-session` starts the tmux server)
    /// and waits for the program itself: the child gets /dev/null for 0-2 and no other
    /// descriptor (`ChildProcess`), so a daemon it leaves holds nothing of the test's open, and
    /// starts with no signal blocked or ignored (a tmux server that inherited the test threads'
    /// mask never ended on its own `kill-server`). Exit code, or 128 + the signal's number.
    public static func runLeavingDaemon(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        let child = ChildProcess()
        child.executableURL = executable
        child.arguments = arguments
        child.environment = environment
        child.standardInput = FileHandle.nullDevice
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        child.waitUntilExit()
        return child.terminationReason == .exit ? child.terminationStatus : 128 + child.terminationStatus
    }
}
