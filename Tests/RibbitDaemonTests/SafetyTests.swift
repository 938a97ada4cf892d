import Foundation
import Glibc
import RibbitControl
import RibbitStore
import RibbitTestSupport
import Testing

/// The defects an outside review found (issue 10), each against the real daemon, a real JACK
/// server and real files.
extension DaemonTests {
    /// A prescription whose audiologist keeps the output low: +10 dB everywhere, max-output -20.
    static func quietCeilingPrescription(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("quiet-ceiling.rx")
        try Data(
            """
            RIBBIT-RX 1
            name: Low ceiling
            env: quiet
            rule: explicit
            gain-left: 500=10 1000=10 2000=10 4000=10
            gain-right: 500=10 1000=10 2000=10 4000=10
            max-output: -20

            """.utf8
        ).write(to: url)
        return url
    }

    /// Defect 1: bypass and pass-through kept no ceiling, and +-Inf came out at 1e6. Now every
    /// mode plays under the active prescription's ceiling, or with none the strictest in the
    /// history (at most the default -1 dBFS), for every input.
    @Test func theCeilingHoldsInEveryOutputModeForAnyInput() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let rx = try Self.quietCeilingPrescription(in: directory)
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", rx.path], directory: directory)
        try daemon.waitUntilProcessing()
        let low = Float(pow(10, -20.0 / 20))
        for (mode, command) in [
            ("processing", ["resume"]), ("bypassed", ["bypass", "on"]),
            ("tone", ["calibrate", "--play", "--ear", "left", "--level", "-20", "--seconds", "2.5"]), ("paused", ["pause"]),
        ] {
            let result = try daemon.ribbitd(command)
            #expect(result.status == 0, "\(mode): \(result.stderr)")
            #expect(try daemon.status().ceilingDBFS == -20)
            let loudest = try Probe.loudestOutput(server)
            #expect(loudest <= low, "\(mode): loudest output \(loudest), ceiling \(low)")
            if mode != "paused" { #expect(loudest > low / 2, "\(mode): limited, not muted (\(loudest))") }
        }
        // Frequency lowering adds moved sub-bands to the output after the bands' gains: the
        // same ceiling holds on what they add.
        let lowered = directory.appendingPathComponent("quiet-ceiling-lowering.rx")
        try Data(
            """
            RIBBIT-RX 2
            name: Low ceiling, lowered
            env: quiet
            rule: camfit
            left: 250=20 500=20 750=25 1000=25 1500=35 2000=55 3000=75 4000=95 6000=95 8000=95
            right: 250=20 500=20 750=25 1000=25 1500=35 2000=55 3000=75 4000=95 6000=95 8000=95
            lowering-left: 1500 3
            lowering-right: 1500 3
            max-output: -20

            """.utf8
        ).write(to: lowered)
        #expect(try daemon.ribbitd(["load", lowered.path]).status == 0)
        #expect(try daemon.ribbitd(["resume"]).status == 0)
        #expect(try daemon.status().ceilingDBFS == -20)
        let loudestLowered = try Probe.loudestOutput(server)
        #expect(loudestLowered <= low && loudestLowered > low / 2, "lowering: loudest output \(loudestLowered), ceiling \(low)")
        // What kept it there is the engine's own limiter and the tone's level: the last guard
        // behind every renderer (for NaN and beyond the ceiling) had nothing to change.
        let guarded = try daemon.status().jack?.guardedSamples
        #expect(guarded == 0, "the output guard changed \(guarded.map(String.init) ?? "?") samples")
        try daemon.stop()

        // No prescription, empty history: the default ceiling, -1 dBFS.
        let empty = try DaemonUnderTest(server: server)
        try empty.waitUntilProcessing()
        #expect(try empty.status().ceilingDBFS == -1)
        let defaultCeiling = Float(pow(10, -1.0 / 20))
        let loudest = try Probe.loudestOutput(server)
        #expect(loudest <= defaultCeiling && loudest > defaultCeiling / 2, "pass-through: loudest output \(loudest)")

        // A trial of the low-ceiling fitting that reverts to no prescription: pass-through then
        // keeps the strictest ceiling the history knows, -20.
        #expect(try empty.ribbitd(["load", "--trial", "1s", rx.path]).status == 0)
        #expect(try empty.wait(until: { $0.trial == nil }))
        let status = try empty.status()
        #expect(status.prescription == nil && status.ceilingDBFS == -20)
        let afterTrial = try Probe.loudestOutput(server)
        #expect(afterTrial <= low, "pass-through after the trial: loudest output \(afterTrial)")
        try empty.stop()
    }

    /// Defect 2: a client trusted whatever listened at its socket path. Now it sends nothing
    /// unless the directory is its own with mode 0700 and the listener runs as its user.
    @Test(.enabled(if: getuid() == 0, "needs root to make files and processes of another user"))
    func theClientTrustsOnlyItsOwnDaemon() throws {
        let directory = try TestPaths.temporaryDirectory()
        var environment = try DaemonUnderTest.environment(in: directory)
        let socketDirectory = directory.appendingPathComponent("run/ribbit")
        try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        let socket = socketDirectory.appendingPathComponent("ribbitd.sock").path
        let nobody = try #require(getpwnam("nobody")).pointee.pw_uid

        // 1. The directory is another user's: the impostor's socket is never connected to.
        chmod(socketDirectory.path, 0o700)
        chown(socketDirectory.path, nobody, nobody)
        var impostor = try Impostor(socket: socket, report: directory.appendingPathComponent("first.txt"), listenAs: nil)
        var result = try Built.run(DaemonUnderTest.binary, ["status"], environment: environment)
        #expect(result.status == 69 && result.stderr.contains("belongs to another user"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(impostor.bytesReceived() == nil, "the client connected to a socket in another user's directory")

        // 2. Ours but open to others.
        chown(socketDirectory.path, getuid(), getgid())
        chmod(socketDirectory.path, 0o755)
        result = try Built.run(DaemonUnderTest.binary, ["status"], environment: environment)
        #expect(result.status == 69 && result.stderr.contains("open to others"), "\(result.stderr)")
        #expect(impostor.bytesReceived() == nil)

        // 3. Our private directory, but the process listening is another user's: `load` sends
        // no prescription and does not report it loaded; the history is untouched.
        chmod(socketDirectory.path, 0o700)
        impostor = try Impostor(socket: socket, report: directory.appendingPathComponent("second.txt"), listenAs: "nobody")
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        result = try Built.run(DaemonUnderTest.binary, ["load", TestPaths.prescription("ski-slope.rx").path], environment: environment)
        #expect(result.status == 69 && result.stderr.contains("belongs to another user"), "\(result.stderr)")
        #expect(!result.stdout.contains("loaded"))
        #expect(impostor.bytesReceived() == 0, "the client sent the impostor a request")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path))
    }

    /// Defect 5: with the daemon at another XDG_RUNTIME_DIR, `load` wrote the history behind its
    /// back and a second daemon started on the same history. The daemon now holds a lock on the
    /// data directory. And a JACK client name already taken is named as such.
    @Test func theHistoryCannotDisagreeWithTheDaemon() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("flat.rx").path])
        try daemon.waitUntilProcessing()
        let history = try daemon.ribbitd(["list"]).stdout
        var elsewhere = daemon.environment
        let otherRuntime = daemon.directory.appendingPathComponent("run2")
        try FileManager.default.createDirectory(at: otherRuntime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        elsewhere["XDG_RUNTIME_DIR"] = otherRuntime.path
        for command in [["load", TestPaths.prescription("ski-slope.rx").path], ["use", "1"]] {
            let result = try Built.run(DaemonUnderTest.binary, command, environment: elsewhere)
            #expect(result.status == 69, "\(command): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("a ribbitd is running (pid \(daemon.pid)) but not at"), "\(result.stderr)")
            #expect(result.stderr.contains("XDG_RUNTIME_DIR=\(daemon.directory.appendingPathComponent("run").path)"))
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(try daemon.ribbitd(["list"]).stdout == history)
        #expect(try daemon.status().prescription?.name == "Flat (0 dB, no low-pass)")

        // A second daemon on the same history, listening elsewhere, refuses to start.
        let second = try Built.run(DaemonUnderTest.binary, ["run", "--no-connect"], environment: elsewhere, timeoutSeconds: 10)
        #expect(second.status == 69)
        #expect(second.stderr.contains("another ribbitd is already running (pid \(daemon.pid)"), "\(second.stderr)")

        // A daemon with a history of its own runs, but JACK's name 'ribbit' is taken: it says so.
        let third = try DaemonUnderTest(server: server)
        let deadline = Date().addingTimeInterval(5)
        var problem = try third.status().jackProblem ?? ""
        while !problem.contains("0x") && Date() < deadline {
            usleep(100_000)
            problem = try third.status().jackProblem ?? ""
        }
        #expect(problem.contains("refused the client name 'ribbit'"), "\(problem)")
        #expect(!problem.contains("no JACK server is running"))
        try third.stop()
        try daemon.stop()
    }

    /// Defect 3: a damaged history stopped the daemon before it touched JACK (no sound at all),
    /// and `load` failed the same way. Now the damaged file is moved aside, a new history starts
    /// with the last active prescription from its copy, and status says what happened.
    @Test(arguments: ["garbage header", "truncated", "empty"])
    func aDamagedHistoryDoesNotSilenceTheHearingAid(damage: String) throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        var daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path], directory: directory)
        for name in ["flat.rx", "moderate-flat.rx", "normal-hearing.rx", "asymmetric.rx", "ski-slope.rx"] {
            #expect(try daemon.ribbitd(["load", TestPaths.prescription(name).path]).status == 0)
        }
        let store = daemon.storePath
        try daemon.stop()
        let handle = try #require(FileHandle(forUpdatingAtPath: store))
        switch damage {
        case "garbage header": handle.write(Data(repeating: 0xA5, count: 16))
        case "truncated":
            #expect(try handle.seekToEnd() > 10000)
            try handle.truncate(atOffset: 10000)
        default: try handle.truncate(atOffset: 0)
        }
        try handle.close()

        daemon = try DaemonUnderTest(server: server, directory: directory)
        try daemon.waitUntilProcessing()
        let status = try daemon.status()
        #expect(status.prescription?.name == "Steep ski-slope loss", "\(daemon.log)")
        let problem = try #require(status.historyProblem)
        #expect(problem.contains(damage == "empty" ? "was empty (0 bytes)" : "is damaged"), "\(problem)")
        #expect(problem.contains("moved to") && problem.contains("taken back from its copy"))
        #expect(try daemon.ribbitd(["status"]).stdout.contains("history"))
        #expect(daemon.log.contains("moved to"))
        let data = directory.appendingPathComponent("data/ribbit")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).contains { $0.hasPrefix("ribbit.sqlite.damaged-") })
        // The wearer can go on: load works, and the new history holds the recovered entry.
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("flat.rx").path]).status == 0)
        #expect(try PrescriptionStore(path: store).all().map(\.name) == ["Steep ski-slope loss", "Flat (0 dB, no low-pass)"])
        try daemon.stop()
    }

    /// A digit changed on disk inside a stored prescription: the history's SQLite stays sound,
    /// but the checksum catches it. The daemon plays the intact copy, and show, export and use
    /// refuse the damaged entry in one line.
    @Test func aFlippedDigitInTheHistoryIsCaught() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let rx = try Self.quietCeilingPrescription(in: directory)
        var daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", rx.path], directory: directory)
        let store = daemon.storePath
        try daemon.stop()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let needle = Data("gain-left: 500=10".utf8)
        let at = try #require(bytes.range(of: needle))
        bytes[at.upperBound - 2] = UInt8(ascii: "4")  // +40 dB where the audiologist wrote +10
        try bytes.write(to: URL(fileURLWithPath: store))

        daemon = try DaemonUnderTest(server: server, directory: directory)
        let status = try daemon.status()
        #expect(status.prescription?.name == "Low ceiling", "\(daemon.log)")
        #expect(status.historyProblem?.contains("is damaged: its text no longer matches its checksum") == true, "\(status)")
        #expect(try daemon.ribbitd(["list"]).stdout.contains("DAMAGED"))
        for command in [["show", "1"], ["export", "1", "-o", directory.appendingPathComponent("out.rx").path]] {
            let result = try daemon.ribbitd(command)
            #expect(result.status == 65 && result.stderr.contains("damaged"), "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.rx").path))
        try daemon.stop()
    }

    /// `load` with no daemon on a damaged history: moved aside, stored in a new one, said once.
    @Test func loadWithoutADaemonRecoversADamagedHistory() throws {
        let directory = try TestPaths.temporaryDirectory()
        let environment = try DaemonUnderTest.environment(in: directory)
        var result = try Built.run(DaemonUnderTest.binary, ["load", TestPaths.prescription("ski-slope.rx").path], environment: environment)
        #expect(result.status == 0)
        let store = directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path
        try Data("not a database at all, but long enough to look like a header".utf8).write(to: URL(fileURLWithPath: store))
        result = try Built.run(DaemonUnderTest.binary, ["load", TestPaths.prescription("flat.rx").path], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("is damaged") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(try PrescriptionStore(path: store).all().map(\.name) == ["Steep ski-slope loss", "Flat (0 dB, no low-pass)"])
    }

    /// Defect 10: the history (patient names, audiograms) was created world-readable. Now the
    /// file and its copy are 0600, the directory 0700, and a symbolic link in its place is
    /// refused without touching what it points to.
    @Test func theHistoryIsPrivate() throws {
        let directory = try TestPaths.temporaryDirectory()
        let environment = try DaemonUnderTest.environment(in: directory)
        let data = directory.appendingPathComponent("data/ribbit")
        // Under the usual umask, which let an older version make the history 0644.
        let shell = try #require(Built.tool("sh"))
        let load = try Built.run(
            shell, ["-c", "umask 022; exec \"$0\" load \"$1\"", DaemonUnderTest.binary.path, TestPaths.prescription("ski-slope.rx").path],
            environment: environment)
        #expect(load.status == 0, "\(load.stderr)")
        let mode = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1 }
        #expect(mode(data.path) == 0o700)
        for file in ["ribbit.sqlite", "last-active.json", "ribbitd.lock"] {
            #expect(
                mode(data.appendingPathComponent(file).path) == 0o600,
                "\(file): \(String(mode(data.appendingPathComponent(file).path), radix: 8))")
        }
        // A file an older version made world-readable is made private at the next use.
        chmod(data.appendingPathComponent("ribbit.sqlite").path, 0o644)
        #expect(try Built.run(DaemonUnderTest.binary, ["list"], environment: environment).status == 0)
        #expect(mode(data.appendingPathComponent("ribbit.sqlite").path) == 0o600)

        // A symbolic link in the history's place: refused, and its target is not written.
        let elsewhere = try TestPaths.temporaryDirectory()
        let linkDirectory = elsewhere.appendingPathComponent("data/ribbit")
        try FileManager.default.createDirectory(at: linkDirectory, withIntermediateDirectories: true)
        let target = elsewhere.appendingPathComponent("target.txt")
        try Data("precious".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(
            atPath: linkDirectory.appendingPathComponent("ribbit.sqlite").path, withDestinationPath: target.path)
        let linked = try DaemonUnderTest.environment(in: elsewhere)
        let result = try Built.run(DaemonUnderTest.binary, ["load", TestPaths.prescription("flat.rx").path], environment: linked)
        #expect(result.status != 0 && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(try String(contentsOf: target, encoding: .utf8) == "precious")
    }
}

extension DaemonTests {
    /// Defect 4: jack_client_open against a server that accepts and never answers (stopped)
    /// froze the control loop: no status, no watchdog, no stop. Now the worker waits for JACK
    /// and the loop serves on; the daemon connects once the server answers, and stops promptly
    /// even while JACK is stuck.
    @Test func aStoppedJackServerHoldsNothingUp() throws {
        let server = try JackTestServer()
        kill(server.pid, SIGSTOP)
        defer { kill(server.pid, SIGCONT) }
        let directory = try TestPaths.temporaryDirectory()
        let notify = try NotifySocket(path: directory.appendingPathComponent("notify").path)
        var daemon = try DaemonUnderTest(
            server: server, directory: directory, waitUntilReady: false,
            extraEnvironment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
        try daemon.waitForSocket(timeout: 10)
        let asked = Date()
        var status = try daemon.status()
        #expect(Date().timeIntervalSince(asked) < 2, "status waited for the stuck server")
        #expect(status.jack == nil)
        usleep(1_500_000)
        status = try daemon.status()
        #expect(status.jackProblem?.contains("has not answered") == true, "\(status.jackProblem ?? "nil")")
        let messages = notify.messages(for: 30) {
            $0.contains { $0.hasPrefix("READY=1") } && $0.filter { $0 == "WATCHDOG=1" }.count >= 2
        }
        #expect(messages.contains { $0.hasPrefix("READY=1") }, "\(messages)")
        #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 2, "\(messages)")

        kill(server.pid, SIGCONT)
        try daemon.waitUntilProcessing()

        // Stopped again while connected: `stop` still ends the daemon within a few seconds.
        kill(server.pid, SIGSTOP)
        let stopping = Date()
        #expect(try daemon.stop() == 0)
        #expect(Date().timeIntervalSince(stopping) < 5)

        // And SIGTERM while the first open is stuck.
        daemon = try DaemonUnderTest(server: server, directory: directory, waitUntilReady: true)
        let terminating = Date()
        kill(daemon.pid, SIGTERM)
        while daemon.isRunning && Date().timeIntervalSince(terminating) < 10 { usleep(20_000) }
        #expect(!daemon.isRunning)
        #expect(Date().timeIntervalSince(terminating) < 5)
        kill(server.pid, SIGCONT)
    }

    /// Defect 9: the 30 s limit on a partial request restarted with every byte, so clients
    /// trickling a byte a second held all 32 slots for hours. Now a request line must be
    /// complete 5 s after its first byte, and a new client always gets a slot.
    @Test func tricklingClientsHoldNoSlot() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        let socket = daemon.directory.appendingPathComponent("run/ribbit/ribbitd.sock").path
        var tricklers = [Int32]()
        for _ in 0..<40 {
            let fd = try UnixSocket.connect(to: socket)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            tricklers.append(fd)
        }
        defer { tricklers.forEach { close($0) } }
        let start = Date()
        var answered = 0
        var closed = Set<Int32>()
        // 8 s of trickling and at least 8 requests (a loaded machine may take longer for them).
        while Date().timeIntervalSince(start) < 60 && (Date().timeIntervalSince(start) < 8 || answered < 8) {
            for fd in tricklers where !closed.contains(fd) {
                if send(fd, "{", 1, Int32(MSG_NOSIGNAL)) < 0 && errno != EAGAIN { closed.insert(fd) }
            }
            // A client that writes its request at once is always served, and quickly (asked on
            // a new connection from this process: a `ribbitd status` process would time its start).
            let asked = Date()
            #expect(try daemon.status().pid > 0)
            #expect(Date().timeIntervalSince(asked) < 2)
            answered += 1
            usleep(400_000)
        }
        #expect(answered >= 8)
        // Every trickling connection is closed by the daemon (EOF, or a refused write).
        let closing = Date().addingTimeInterval(30)
        while closed.count < tricklers.count && Date() < closing {
            for fd in tricklers where !closed.contains(fd) {
                var byte: UInt8 = 0
                let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
                if n == 0 || (n < 0 && errno != EAGAIN) { closed.insert(fd) }
            }
            usleep(100_000)
        }
        #expect(closed.count == tricklers.count, "\(tricklers.count - closed.count) trickling connections still open")
        #expect(daemon.log.contains("stayed incomplete"))
        try daemon.stop()
    }
}

/// A process pretending to be ribbitd: listens on `socket` (as root, or bound as root and
/// then listening as another user), answers a request with a fake "trusted" status, and writes
/// how many bytes each client sent.
private final class Impostor {
    private let process = ChildProcess()
    private let report: URL

    init(socket: String, report: URL, listenAs user: String?) throws {
        unlink(socket)
        self.report = report
        _ = FileManager.default.createFile(atPath: report.path, contents: nil, attributes: [.posixPermissions: 0o666])
        let uid = try user.map { try #require(getpwnam($0)).pointee.pw_uid }
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            os.chmod(sys.argv[1], 0o666)
            if sys.argv[3] != "-":
                os.setgid(int(sys.argv[3])); os.setuid(int(sys.argv[3]))  # SO_PEERCRED tells listen()'s uid
            s.listen(4)
            print("ready", flush=True)
            while True:
                c, _ = s.accept()
                data = c.recv(65536)
                if data:
                    c.sendall(b'{"ok":true,"status":{"pid":1,"version":"0.1.0","uptimeSeconds":1,"output":"processing","totalXruns":0,'
                              b'"prescription":{"name":"Fake","environment":"quiet","rule":"nal-r","signature":"signed by Dr. Trusted (trusted)"}}}\\n')
                    data += c.recv(65536)
                open(sys.argv[2], "a").write("%d\\n" % len(data))
                c.close()
            """
        process.executableURL = try #require(Built.tool("python3"))
        process.arguments = ["-c", script, socket, report.path, uid.map { String($0) } ?? "-"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = out.fileHandleForReading.availableData  // "ready"
    }

    deinit { stopProcess(process, grace: 1) }

    /// What the last client sent, in bytes; nil when none connected.
    func bytesReceived() -> Int? {
        usleep(200_000)
        return (try? String(contentsOf: report, encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) }
    }
}
