import Foundation
import Glibc
import RibbitAudioFile
import RibbitControl
import RibbitSettings
import RibbitTestSupport
import Testing

/// A `ribbitd run` (release build: what ships, and what the RT audit must judge) in a private
/// directory (XDG_RUNTIME_DIR, XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_DATA_HOME) against a private JACK server.
final class DaemonUnderTest {
    static let binary = Built.product("ribbitd", configuration: "release")
    static let auditLibrary = Built.product("libRibbitRTAudit.so")

    let directory: URL
    let environment: [String: String]
    let auditReport: URL
    private let process: ChildProcess
    private let logURL: URL

    /// - Parameters:
    ///   - audit: preload the RT audit shim, which writes its counts at exit.
    ///   - user: run as this user (setpriv), with the directory handed to them.
    ///   - journal: tell it, as systemd does, that its stderr (the log file) is the journal.
    init(
        server: JackTestServer, arguments: [String] = ["--no-connect"], audit: Bool = false,
        directory: URL? = nil, user: String? = nil, waitUntilReady: Bool = true, extraEnvironment: [String: String] = [:],
        journal: Bool = false, executable: URL = DaemonUnderTest.binary
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw TestSetupError("\(executable.path) is missing: run `swift build -c release --product ribbitd` (make test does)")
        }
        let directory = try directory ?? TestPaths.temporaryDirectory()
        self.directory = directory
        // One report per audio process (%p: its pid), so a restarted one does not overwrite the last.
        auditReport = directory.appendingPathComponent("rtaudit-%p.txt")
        logURL = directory.appendingPathComponent("ribbitd.log")
        let env = try Self.environment(in: directory, server: server)
        var daemonEnv = env.merging(extraEnvironment) { $1 }
        if audit {
            daemonEnv["LD_PRELOAD"] = Self.auditLibrary.path
            daemonEnv["RIBBIT_RTAUDIT_REPORT"] = auditReport.path
        }
        environment = env
        process = ChildProcess()
        if let user {
            guard let entry = getpwnam(user) else { throw TestSetupError("no user \(user)") }
            chownTree(directory, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
            process.executableURL = Built.tool("setpriv")
            process.arguments =
                [
                    "--reuid", "\(entry.pointee.pw_uid)", "--regid", "\(entry.pointee.pw_gid)", "--clear-groups", executable.path, "run",
                ] + arguments
        } else {
            process.executableURL = executable
            process.arguments = ["run"] + arguments
        }
        process.environment = daemonEnv
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        if journal { process.environment?["JOURNAL_STREAM"] = try TestPaths.deviceAndInode(logURL.path) }
        let log = try FileHandle(forWritingTo: logURL)
        process.standardOutput = log
        process.standardError = log
        try process.run()
        if waitUntilReady { try waitForSocket() }
    }

    deinit {
        stopProcess(process)
        // A turn of the daemon's loop that held every client for over a second (a busy
        // machine, or work on the loop), said in the test log: a client's timeout may follow.
        for line in log.split(separator: "\n") where line.contains("one turn of the control loop took") {
            print("ribbitd (\(directory.lastPathComponent)): \(line)")
        }
    }

    /// A private home for ribbitd under `directory` (XDG_RUNTIME_DIR = run, 0700; state,
    /// config, data), on `server`'s JACK, or with no server at all.
    static func environment(in directory: URL, server: JackTestServer? = nil) throws -> [String: String] {
        try TestPaths.privateHome(in: directory, base: server?.environment ?? ProcessInfo.processInfo.environment)
    }

    /// The history file in this daemon's data directory.
    var storePath: String { directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }
    var isRunning: Bool { process.isRunning }
    var pid: Int32 { process.processIdentifier }

    func waitForSocket(timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard process.isRunning else { throw TestSetupError("ribbitd exited: \(log)") }
            if (try? status()) != nil { return }
            usleep(50_000)
        }
        throw TestSetupError("ribbitd did not answer within \(timeout) s: \(log)")
    }

    /// Runs a client command (`status`, `load RX` ...) with the daemon's environment.
    @discardableResult
    func ribbitd(_ arguments: [String]) throws -> RunResult {
        try Built.run(Self.binary, arguments, environment: environment)
    }

    /// The daemon's status, asked on its socket from this process: a `ribbitd status` process
    /// can take over a second to start on a loaded machine, and polls must not wait for that.
    func status() throws -> DaemonStatus {
        let reply = try ControlClient.send(.status, socketPath: socketPath, timeoutSeconds: 30)
        guard reply.ok, let status = reply.status else { throw TestSetupError("status failed: \(reply.error ?? "no status")") }
        return status
    }

    var socketPath: String { RibbitPaths(environment: environment).socketPath }

    /// Polls the status until `done` holds, for up to `seconds`: what the daemon did decides, not
    /// how soon a loaded machine let it.
    func wait(until done: (DaemonStatus) -> Bool, within seconds: Double = 30) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if done(try status()) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Waits until JACK calls the daemon's process callback (its cycle count grows); returns
    /// the seconds it took.
    @discardableResult
    func waitUntilProcessing(timeout: Double = 30) throws -> Double {
        let start = Date()
        var previous: Int?
        while Date().timeIntervalSince(start) < timeout {
            if let cycles = try? status().jack?.cycles {
                if let previous, cycles > previous { return Date().timeIntervalSince(start) }
                previous = cycles
            } else {
                previous = nil
            }
            usleep(20_000)
        }
        throw TestSetupError("ribbitd was not processing within \(timeout) s: \(log)")
    }

    /// Waits up to `seconds` for the daemon to end by itself; its exit status, nil if it runs on.
    func waitForExit(within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// `ribbitd stop`, then waits for the exit; returns the exit status.
    @discardableResult
    func stop() throws -> Int32 {
        _ = try ribbitd(["stop"])
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        stopProcess(process)
        return process.terminationStatus
    }

    /// The RT audit's counts ("malloc" -> n ...), after stop(): every audio process's summed.
    func auditCounts() throws -> [String: Int] { try audit().counts }

    /// The RT audit's reports, after stop(): the counts of every audio process the daemon ran
    /// (summed) and the callers of the first calls counted ("at free SYMBOL OBJECT ADDRESS").
    func audit() throws -> (counts: [String: Int], callers: [String]) {
        let reports = (try FileManager.default.contentsOfDirectory(atPath: directory.path)).filter {
            $0.hasPrefix("rtaudit-") && $0.hasSuffix(".txt")
        }
        guard !reports.isEmpty else { throw TestSetupError("no RT audit report in \(directory.path): did an audio process run?") }
        var counts = [String: Int]()
        var callers = [String]()
        for report in reports {
            for line in try String(contentsOf: directory.appendingPathComponent(report), encoding: .utf8).split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, let n = Int(parts[1]) { counts[String(parts[0]), default: 0] += n }
                if parts.first == "at" { callers.append(String(line)) }
            }
        }
        return (counts, callers)
    }

    /// The audio thread made no call it must never make (after stop()): nothing allocated,
    /// freed, locked or called into the kernel inside any completed process callback, in any
    /// audio process the daemon ran; and at least `callbacks` callbacks ran.
    func expectCleanAudioThread(callbacks: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (counts, callers) = try audit()
        #expect(
            counts["callbacks", default: 0] >= callbacks, "\(counts["callbacks", default: 0]) callbacks", sourceLocation: sourceLocation)
        for name in Self.forbiddenOnTheAudioThread {
            #expect(
                counts[name] == 0, "\(name) was called \(counts[name] ?? -1) times on the RT thread: \(callers.joined(separator: "; "))",
                sourceLocation: sourceLocation)
        }
    }

    static let forbiddenOnTheAudioThread = ["malloc", "calloc", "realloc", "free", "memalign", "pthread_mutex_lock", "syscall"]
}

private func chownTree(_ url: URL, uid: uid_t, gid: gid_t) {
    let paths = [url.path] + (FileManager.default.subpaths(atPath: url.path) ?? []).map { url.path + "/" + $0 }
    for path in paths { chown(path, uid, gid) }
}

/// The test JACK client: plays a signal into ribbit's inputs and records its outputs.
final class Probe {
    static let binary = Built.product("ribbit-probe")
    let output: URL
    private let server: JackTestServer
    private let process: ChildProcess
    private let stdout = Pipe()
    private let stderr = Pipe()

    /// Starts playing; `finish()` waits and returns played (L, R) and recorded (L, R).
    init(
        server: JackTestServer, signal: String, levelDBFS: Double, seconds: Double, extra: [String] = [],
        environment: [String: String]? = nil
    ) throws {
        output = try TestPaths.temporaryDirectory().appendingPathComponent("probe.wav")
        self.server = server
        process = ChildProcess()
        process.executableURL = Self.binary
        process.arguments =
            [
                "--seconds", "\(seconds)", "--signal", signal, "--level", "\(levelDBFS)",
                "--to", "ribbit:in_left,ribbit:in_right", "--from", "ribbit:out_left,ribbit:out_right", "--out", output.path,
            ] + extra
        process.environment = environment ?? server.environment
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
    }

    struct Recording {
        var played: [[Float]]
        var recorded: [[Float]]
        var xruns: Int
        /// CLOCK_MONOTONIC (ns) when frame 0 was played.
        var startNanoseconds = 0
        /// (first frame, CLOCK_MONOTONIC ns) of every callback, in order: when each period was
        /// played and recorded, xruns included.
        var callbacks: [(frame: Int, nanoseconds: Int)] = []
        /// JACK's frame time at each of those callbacks.
        var jackFrames: [UInt32] = []
        /// Frames near which the recording may hold a glitch that is JACK's, not ribbit's: the
        /// position at each xrun JACK reported, each callback after a cycle the probe missed,
        /// and (`finish(besides:)`) each cycle ribbit's audio process missed, where its input skipped.
        var disturbances: [Int] = []

        /// The probe's frame at JACK frame time `frameTime`, from the callback before it
        /// (nil outside the recording).
        func frame(atJackFrame frameTime: UInt32) -> Int? {
            guard let first = jackFrames.first else { return nil }
            let sinceFirst = Int(Int32(bitPattern: frameTime &- first))
            guard sinceFirst >= 0 else { return nil }
            let before = jackFrames.lastIndex { Int(Int32(bitPattern: $0 &- first)) <= sinceFirst } ?? 0
            let frame = callbacks[before].frame + Int(frameTime &- jackFrames[before])
            return frame < (recorded.first?.count ?? 0) ? frame : nil
        }

        /// Whether `frame` lies within `margin` frames of a disturbance.
        func isDisturbed(_ frame: Int, margin: Int) -> Bool {
            disturbances.contains { abs($0 - frame) <= margin }
        }

        /// The largest step between neighbouring recorded samples of `channel` from `start` on
        /// (where, and how many steps were judged), leaving out those within `margin` frames of
        /// a disturbance: a click there may be JACK's, and anywhere else it is ribbit's.
        func steepestStep(channel: Int, from start: Int = 0, margin: Int) -> (step: Double, at: Int, judged: Int) {
            let samples = recorded[channel]
            var steepest = (step: 0.0, at: start, judged: 0)
            for index in start..<max(start, samples.count - 1) where !isDisturbed(index, margin: margin) {
                let step = Double(abs(samples[index + 1] - samples[index]))
                steepest.judged += 1
                if step > steepest.step { (steepest.step, steepest.at) = (step, index) }
            }
            return steepest
        }

        /// When the period holding `frame` was recorded.
        func nanoseconds(atFrame frame: Int) -> Int {
            var low = 0
            var high = callbacks.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if callbacks[middle].frame <= frame { low = middle } else { high = middle - 1 }
            }
            return callbacks.isEmpty ? 0 : callbacks[low].nanoseconds
        }

        /// The first frame recorded at or after `nanoseconds`.
        func frame(atNanoseconds nanoseconds: Int) -> Int {
            callbacks.first { $0.nanoseconds >= nanoseconds }?.frame ?? (callbacks.last?.frame ?? 0)
        }
    }

    func finish() throws -> Recording {
        let out = String(decoding: try stdout.fileHandleForReading.readAll(), as: UTF8.self)
        let err = String(decoding: try stderr.fileHandleForReading.readAll(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError("ribbit-probe failed: \(err)\njackd \(server.name) said last:\n\(server.logTail())")
        }
        let channels = try AudioFileReader(path: output.path).readAll()
        let words = out.split(separator: " ")
        let xruns = words.firstIndex(of: "xruns").flatMap { Int(words[$0 + 1]) } ?? -1
        let start = words.firstIndex(of: "start-ns").flatMap { Int(words[$0 + 1].trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        let lines = ((try? String(contentsOfFile: output.path + ".times", encoding: .utf8)) ?? "").split(separator: "\n")
        let timed = lines.compactMap { line -> (frame: Int, nanoseconds: Int, jackFrame: UInt32)? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let frame = Int(parts[0]), let time = Int(parts[1]), let jack = UInt32(parts[2]) else { return nil }
            return (frame, time, jack)
        }
        // A JACK frame-time step longer than the frames between two callbacks: missed cycles.
        let skipped = zip(timed, timed.dropFirst()).filter { $1.jackFrame &- $0.jackFrame > UInt32($1.frame - $0.frame) }.map(\.1.frame)
        let reported = ((try? String(contentsOfFile: output.path + ".xruns", encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            Int($0)
        }
        return Recording(
            played: Array(channels[0..<2]), recorded: Array(channels[2..<4]), xruns: xruns, startNanoseconds: start,
            callbacks: timed.map { ($0.frame, $0.nanoseconds) }, jackFrames: timed.map(\.jackFrame),
            disturbances: (reported + skipped).sorted())
    }

    /// finish(), with the cycles `daemon`'s audio process missed added to the disturbances: a
    /// period its input lost or got twice moves the recording by a period a latency later,
    /// with no missed cycle of the probe's to mark it (a loaded run once failed on one).
    func finish(besides daemon: DaemonUnderTest) throws -> Recording {
        var recording = try finish()
        let missed = try daemon.status().jack?.missedAtFrameTimes ?? []
        recording.disturbances = (recording.disturbances + missed.compactMap(recording.frame(atJackFrame:))).sorted()
        return recording
    }

    /// Waits until the probe has played its first period (it says so beside its recording).
    func waitUntilPlaying(within seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !FileManager.default.fileExists(atPath: output.path + ".playing") {
            guard process.isRunning, Date() < deadline else { throw TestSetupError("ribbit-probe never played") }
            usleep(10_000)
        }
    }

    /// Stops playing now (by its pid) when what it played is not needed.
    func cancel() {
        stopProcess(process, grace: 0)
    }

    static func record(
        server: JackTestServer, signal: String, levelDBFS: Double, seconds: Double, besides daemon: DaemonUnderTest? = nil
    ) throws -> Recording {
        let probe = try Probe(server: server, signal: signal, levelDBFS: levelDBFS, seconds: seconds)
        return try daemon.map { try probe.finish(besides: $0) } ?? probe.finish()
    }
}

extension Probe {
    /// Plays every hostile input (a full-scale square, DC, NaN, +-Inf, +-3e38, full-scale noise)
    /// into ribbit and returns the loudest recorded sample (NaN if any was not finite).
    static func loudestOutput(_ server: JackTestServer) throws -> Float {
        let recording = try record(server: server, signal: "hostile", levelDBFS: 0, seconds: 1.6)
        let samples = recording.recorded.joined()
        guard samples.allSatisfy(\.isFinite) else { return .nan }
        return samples.map(abs).max() ?? 0
    }

    /// The largest step between neighbouring samples of a sine of peak `amplitude`:
    /// amplitude x 2 pi f / rate. A tone that started or stopped without a ramp would jump by
    /// up to its whole amplitude in one sample.
    static func sineSlope(amplitude: Double, hz: Double, rate: Double) -> Double { amplitude * 2 * .pi * hz / rate }
}
