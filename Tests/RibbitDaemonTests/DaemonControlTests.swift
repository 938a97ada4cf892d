import Foundation
import Glibc
import RibbitControl
import RibbitDSP
import RibbitSettings
import RibbitStore
import RibbitTestSupport
import Testing

/// The daemon's life: real-time rules, JACK restarts, state, and its control socket.
extension DaemonTests {
    /// The audio thread in every mode the daemon has, at period 64 with noise playing: each
    /// program and the automatic one, program and volume changes in the middle of a crossfade,
    /// prescription switches (one to frequency lowering), a trial and its automatic revert,
    /// pause storms, bypass, a dump and a voice client, a calibration tone, a hearing test
    /// (held, then let go), period
    /// changes and a JACK restart (a new audio process, audited too). An LD_PRELOAD shim around
    /// JACK's process callback counts malloc, free, mutex locks and system calls made inside
    /// it (`expectCleanAudioThread`): none. The live measurement's own JACK client is audited
    /// in `liveAgreesWithOfflineAndPutsEverythingBack`.
    @Test(.runningLimit(minutes: 5)) func theAudioThreadStaysCleanInEveryMode() throws {
        let server = try JackTestServer(period: 64)
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], audit: true)
        try daemon.waitUntilProcessing()
        let socket = RibbitPaths(environment: daemon.environment).socketPath
        var probe = try Probe(server: server, signal: "noise", levelDBFS: -30, seconds: 30)
        let dump = ChildProcess()
        dump.executableURL = DaemonUnderTest.binary
        dump.arguments = ["dump", "--json", "--duration", "6"]
        dump.environment = daemon.environment
        dump.standardOutput = FileHandle.nullDevice
        try dump.run()
        func run(_ commands: [[String]], pause seconds: Double = 0.3) throws {
            for command in commands {
                let result = try daemon.ribbitd(command)
                #expect(result.status == 0, "\(command): \(result.stderr)")
                usleep(useconds_t(seconds * 1e6))
            }
        }
        // Every program; changes back to back land in the middle of the last one's crossfade.
        try run([["program", "noisy"], ["program", "outdoor"], ["program", "music"], ["program", "quiet"]])
        try run([["program", "noisy"], ["volume", "+3"], ["program", "music"], ["volume", "-3"], ["program", "auto"]], pause: 0)
        try run([["volume", "+2"], ["volume", "0"]], pause: 0)
        usleep(2_000_000)  // auto listens to the noise
        try run([
            ["load", TestPaths.prescription("ski-slope.rx").path], ["load", TestPaths.prescription("steep-lowering.rx").path],
            ["program", "noisy"], ["volume", "+2"], ["load", TestPaths.prescription("mild-presbycusis.rx").path],
        ])
        try run([["load", "--trial", "2s", TestPaths.prescription("asymmetric.rx").path]])
        #expect(try daemon.wait(until: { $0.trial == nil }), "the trial did not revert by itself")
        for _ in 0..<10 { try run([["pause"], ["resume"]], pause: 0) }
        try run([["bypass", "on"], ["bypass", "off"]])
        let voice = try VoiceStream.open(socketPath: socket)
        for _ in 0..<50 { _ = voice.next(timeoutSeconds: 0.05) }
        try run([["calibrate", "--play", "--ear", "left", "--seconds", "1"]])
        usleep(1_200_000)
        let test = ControlRequest.hearingTestStart(try HearingTestRequest(ears: [.right], frequenciesHz: [1000], seed: 5))
        let owner = try DaemonConnection(socketPath: socket).hold(test)
        usleep(2_000_000)
        owner.close()  // the test ends with its owner
        dump.waitUntilExit()
        _ = try probe.finish()

        // Period changes, then a JACK restart: a new audio process, with its own report.
        let bufsize = try #require(Built.tool("jack_bufsize"))
        probe = try Probe(server: server, signal: "noise", levelDBFS: -30, seconds: 3)
        for period in [128, 256, 64] {
            #expect(try Built.run(bufsize, ["\(period)"], environment: server.environment).status == 0)
            usleep(500_000)
        }
        _ = try probe.finish()
        server.kill()
        try server.restart()
        try daemon.waitUntilProcessing()
        try run([["program", "noisy"], ["pause"], ["resume"]])
        let recording = try Probe.record(server: server, signal: "noise", levelDBFS: -30, seconds: 2)
        #expect(recording.recorded[0].contains { $0 != 0 }, "no sound after the restart")
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 40 * 48000 / 256)
        let reports = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path).filter { $0.hasPrefix("rtaudit-") }
        #expect(reports.count == 2, "one report per audio process: \(reports)")
    }

    /// The audit must be able to fail: a client that allocates in its callback is caught.
    @Test func auditCatchesAnAllocatingCallback() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let report = directory.appendingPathComponent("probe-audit.txt")
        var environment = server.environment
        environment["LD_PRELOAD"] = DaemonUnderTest.auditLibrary.path
        environment["RIBBIT_RTAUDIT_REPORT"] = report.path
        let result = try Built.run(
            Probe.binary,
            [
                "--seconds", "0.5", "--allocate-in-process", "--to", "system:playback_1,system:playback_2", "--from",
                "system:capture_1,system:capture_2", "--out", directory.appendingPathComponent("p.wav").path,
            ],
            environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let text = try String(contentsOf: report, encoding: .utf8)
        #expect(text.contains("callbacks "))
        let mallocs = text.split(separator: "\n").first { $0.hasPrefix("malloc ") }.flatMap { Int($0.split(separator: " ")[1]) }
        #expect((mallocs ?? 0) > 0)
    }

    @Test func comesBackWithinFiveSecondsWhenTheServerRestarts() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        server.kill()
        let lost = Date()
        while try daemon.status().jack != nil {
            #expect(Date().timeIntervalSince(lost) < 5, "the daemon did not notice the server was gone")
            if Date().timeIntervalSince(lost) > 5 { break }
            usleep(50_000)
        }
        #expect(daemon.isRunning)
        #expect(try daemon.status().jackProblem != nil)
        try server.restart()
        let back = try daemon.waitUntilProcessing()
        #expect(back < 5, "the promise: back within 5 s of the server")
        let status = try daemon.status()
        #expect(status.prescription?.name == "Steep ski-slope loss")
        #expect(status.jack?.latencyFrames == 96)

        // A server at another rate: the engine is prepared again for it.
        server.kill()
        try server.restart(sampleRate: 44100)
        try daemon.waitUntilProcessing()
        #expect(try daemon.status().jack?.sampleRate == 44100)
        #expect(try daemon.status().prescription?.name == "Steep ski-slope loss")
        try daemon.stop()
    }

    /// jack_bufsize while running: the engine follows, latency is re-reported, no restart.
    @Test func followsPeriodChanges() throws {
        let server = try JackTestServer(period: 64)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let bufsize = try #require(Built.tool("jack_bufsize"))
        let geometry = EngineGeometry.standard(sampleRate: 48000)
        // 96 + hop - gcd(period, hop): 96, 128 (32 < hop), 156, 96, 144.
        for period in [128, 32, 100, 4096, 16] {
            let latency = geometry.latencyFrames(blockSize: period)
            #expect(try Built.run(bufsize, ["\(period)"], environment: server.environment).status == 0)
            var status = try daemon.status()
            let deadline = Date().addingTimeInterval(30)
            while status.jack?.period != period && Date() < deadline {
                usleep(50_000)
                status = try daemon.status()
            }
            #expect(status.jack?.period == period)
            #expect(status.jack?.latencyFrames == latency)
            try daemon.waitUntilProcessing()
        }
        try daemon.stop()
    }

    @Test func startsWithTheLastActivePrescriptionAndKeepsItOnBadLoads() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        var daemon = try DaemonUnderTest(server: server, directory: directory)
        #expect(try daemon.status().prescription == nil)
        #expect(try daemon.ribbitd(["status"]).stdout.contains("none loaded: sound passes through unchanged"))
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("ski-slope.rx").path]).status == 0)
        let history = try daemon.ribbitd(["list"]).stdout
        #expect(history.contains("*1  Steep ski-slope loss"))

        // Bad input: a missing file, not a prescription, an out-of-range value.
        let bad = directory.appendingPathComponent("bad.rx")
        try Data("RIBBIT-RX 1\nname: x\nenv: quiet\nrule: nal-r\nleft: 500=20,1000=130,2000=30,4000=40\n".utf8).write(to: bad)
        for path in ["/nonexistent.rx", TestPaths.packageRoot.appendingPathComponent("Makefile").path, bad.path] {
            let result = try daemon.ribbitd(["load", path])
            #expect(result.status != 0)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        // The daemon validates too: a raw request with a broken prescription.
        let reply = try ControlClient.send(
            .load(PrescriptionUpload(text: "RIBBIT-RX 1\nname: x\n", source: "raw")),
            socketPath: directory.appendingPathComponent("run/ribbit/ribbitd.sock").path)
        #expect(!reply.ok)
        #expect(reply.error?.contains("the active prescription is unchanged") == true)
        #expect(try daemon.status().prescription?.name == "Steep ski-slope loss")
        #expect(try daemon.ribbitd(["list"]).stdout == history)

        // A second daemon for the same user refuses to start and leaves the first alone.
        let second = try Built.run(DaemonUnderTest.binary, ["run", "--no-connect"], environment: daemon.environment)
        #expect(second.status == 69)
        #expect(second.stderr.contains("another ribbitd is already running"))
        #expect(try daemon.status().prescription?.name == "Steep ski-slope loss")

        try daemon.stop()
        daemon = try DaemonUnderTest(server: server, directory: directory)
        #expect(try daemon.status().prescription?.name == "Steep ski-slope loss")
        try daemon.stop()

        // An earlier version's state file is taken into the history once.
        let older = try TestPaths.temporaryDirectory()
        let legacy = older.appendingPathComponent("state/ribbit/active.rx")
        try FileManager.default.createDirectory(at: legacy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contentsOf: TestPaths.prescription("mild-presbycusis.rx")).write(to: legacy)
        daemon = try DaemonUnderTest(server: server, directory: older)
        #expect(try daemon.status().prescription?.name == "Mild sloping high-frequency loss")
        #expect(!FileManager.default.fileExists(atPath: legacy.path))
        try daemon.stop()
    }

    /// A trial reverts when its time is up, also across a daemon restart; keep and revert end it.
    @Test(.runningLimit(minutes: 5)) func trialsRevertOnTimeAndSurviveRestarts() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        var daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path], directory: directory)
        // Long enough that a loaded machine restarts the daemon before it ends (10 s was not,
        // with three lanes of tests beside stress-ng).
        #expect(try daemon.ribbitd(["load", "--trial", "30s", TestPaths.prescription("ski-slope.rx").path]).status == 0)
        var status = try daemon.status()
        #expect(status.prescription?.name == "Steep ski-slope loss")
        #expect(status.trial?.revertsTo == "Mild sloping high-frequency loss")
        #expect(try daemon.ribbitd(["status"]).stdout.contains("then back to Mild sloping high-frequency loss"))
        try daemon.stop()
        daemon = try DaemonUnderTest(server: server, directory: directory)
        status = try daemon.status()
        #expect(status.prescription?.name == "Steep ski-slope loss")
        #expect((status.trial?.secondsLeft ?? 0) > 0 && (status.trial?.secondsLeft ?? 99) < 30)
        #expect(try daemon.wait(until: { $0.trial == nil }, within: 60), "the trial did not end after the restart")
        status = try daemon.status()
        #expect(status.trial == nil)
        #expect(status.prescription?.name == "Mild sloping high-frequency loss")
        #expect(daemon.log.contains("trial the trial time is up"))

        #expect(try daemon.ribbitd(["load", "--trial", "10m", TestPaths.prescription("flat.rx").path]).status == 0)
        #expect(try daemon.ribbitd(["keep"]).status == 0)
        #expect(try daemon.status().prescription?.name == "Flat (0 dB, no low-pass)")
        #expect(try daemon.ribbitd(["load", "--trial", "10m", TestPaths.prescription("ski-slope.rx").path]).status == 0)
        #expect(try daemon.ribbitd(["revert"]).status == 0)
        #expect(try daemon.status().prescription?.name == "Flat (0 dB, no low-pass)")
        let none = try daemon.ribbitd(["keep"])
        #expect(none.status == 65 && none.stderr.contains("no trial is running"))
        try daemon.stop()
    }

    /// After any sequence of commands the daemon plays what the history calls active, and a QR
    /// photo loads through the daemon like a file.
    @Test func daemonAndHistoryAgree() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        let png = daemon.directory.appendingPathComponent("code.png").path
        #expect(try daemon.ribbitd(["rx", "make", TestPaths.prescription("asymmetric.rx").path, "-o", png]).status == 0)
        let samples = ["mild-presbycusis.rx", "ski-slope.rx", "moderate-flat-music.rx", "flat.rx"].map { TestPaths.prescription($0).path }
        var random = SystemRandomNumberGenerator()
        let storePath = daemon.directory.appendingPathComponent("data/ribbit/ribbit.sqlite").path
        for step in 0..<24 {
            let count = (try? PrescriptionStore(path: storePath).all().count) ?? 0
            let command: [String] =
                switch Int.random(in: 0..<7, using: &random) {
                case 0: ["load", png]
                case 1: ["load", samples.randomElement(using: &random)!]
                case 2: ["load", "--trial", "10m", samples.randomElement(using: &random)!]
                case 3: ["use", "\(Int.random(in: 1...max(1, count + 1), using: &random))"]
                case 4: ["use", "--env", ["quiet", "music", "outdoor", "nowhere"].randomElement(using: &random)!]
                case 5: [["keep"], ["revert"]].randomElement(using: &random)!
                default: ["remove", "\(Int.random(in: 1...max(1, count), using: &random))"]
                }
            _ = try daemon.ribbitd(command)
            let store = try PrescriptionStore(path: storePath)
            let status = try daemon.status()
            #expect(status.prescription?.id == (try store.activeID()), "step \(step) after \(command)")
            #expect(status.prescription?.name == (try store.active()?.name))
            #expect((status.trial != nil) == ((try store.trial()) != nil))
        }
        try daemon.stop()
    }

    /// systemd's notify protocol: READY=1 once the ports are up, STATUS= with the prescription,
    /// WATCHDOG=1 at half the interval systemd asks for, STOPPING=1 on the way out.
    @Test func tellsSystemdWhenReadyAndWhatItDoes() throws {
        let server = try JackTestServer()
        let directory = try TestPaths.temporaryDirectory()
        let notify = try NotifySocket(path: directory.appendingPathComponent("notify").path)
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path],
            directory: directory, extraEnvironment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
        let ready = { (messages: [String]) in
            messages.contains { $0.hasPrefix("READY=1\n") && $0.contains("STATUS=processing: Steep ski-slope loss (quiet)") }
        }
        var messages = notify.messages(for: 30) { ready($0) && $0.filter { $0 == "WATCHDOG=1" }.count >= 2 }
        #expect(ready(messages))
        #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 2)
        try daemon.ribbitd(["pause"])
        try daemon.stop()
        messages = notify.messages(for: 10) { $0.contains("STOPPING=1") }
        #expect(messages.contains("STATUS=paused: Steep ski-slope loss (quiet)"))
        #expect(messages.contains("STOPPING=1"))
    }

    @Test func clientCommandsWithoutADaemonSaySoInOneLine() throws {
        let directory = try TestPaths.temporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory.path
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        for command in [["status"], ["pause"], ["resume"], ["bypass", "on"], ["stop"], ["keep"], ["revert"]] {
            let result = try Built.run(DaemonUnderTest.binary, command, environment: environment)
            #expect(result.status == 69)
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(result.stderr.contains("not running"))
        }
        // load and use work on the history alone and say the daemon will pick it up.
        let load = try Built.run(DaemonUnderTest.binary, ["load", TestPaths.prescription("ski-slope.rx").path], environment: environment)
        #expect(load.status == 0)
        #expect(load.stdout.contains("ribbitd is not running and will use it when it starts"))
        let trial = try Built.run(
            DaemonUnderTest.binary, ["load", "--trial", "5m", TestPaths.prescription("flat.rx").path], environment: environment)
        #expect(trial.status == 69)
        #expect(trial.stderr.contains("a trial needs the daemon running"))
    }

    @Test func socketIsPrivateAndSurvivesBadClients() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        let socketPath = daemon.directory.appendingPathComponent("run/ribbit/ribbitd.sock").path
        let directoryMode =
            try FileManager.default.attributesOfItem(atPath: (socketPath as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        let socketMode = try FileManager.default.attributesOfItem(atPath: socketPath)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        #expect(socketMode == 0o600)

        // A client that sends half a request and keeps the connection open.
        let halfWritten = try UnixSocket.connect(to: socketPath)
        defer { close(halfWritten) }
        #expect(UnixSocket.writeAll(halfWritten, Data(#"{"command": "sta"#.utf8)))
        // Garbage, wrong types, unknown commands: each gets an error reply.
        for line in ["hello", "{}", #"{"command": "explode"}"#, #"{"command": "bypass"}"#, #"{"command": 7}"#, "[1,2]"] {
            let reply = try rawRequest(socketPath, Data((line + "\n").utf8))
            #expect(reply?.ok == false, "\(line)")
            #expect(reply?.error?.isEmpty == false)
        }
        // Another protocol version is refused with what to do, whatever its command; this
        // one, and none (a line typed by hand), are served.
        for line in [#"{"version": 2, "command": "status"}"#, #"{"version": 0, "command": "warp"}"#] {
            let reply = try rawRequest(socketPath, Data((line + "\n").utf8))
            #expect(reply?.ok == false && reply?.error?.contains("restart the daemon") == true, "\(line): \(String(describing: reply))")
        }
        for line in [#"{"version": \#(ControlProtocol.version), "command": "status"}"#, #"{"command": "status"}"#] {
            #expect(try rawRequest(socketPath, Data((line + "\n").utf8))?.ok == true, "\(line)")
        }
        // Over 64 KiB without a newline: refused and closed.
        let huge = try rawRequest(socketPath, Data(repeating: UInt8(ascii: "x"), count: 70 * 1024))
        #expect(huge == nil || huge?.ok == false)
        // Many clients at once, while the half-written one still hangs.
        let results = (0..<12).map { _ in
            let fd = try? UnixSocket.connect(to: socketPath)
            return fd
        }
        for fd in results.compactMap({ $0 }) {
            #expect(UnixSocket.writeAll(fd, ControlProtocol.encode(ControlRequest.status)))
        }
        for fd in results.compactMap({ $0 }) {
            #expect(readReply(fd)?.ok == true)
            close(fd)
        }
        #expect(try daemon.status().pid == daemon.pid)
        try daemon.stop()
    }

    /// SO_PEERCRED: another uid is refused. As root, root's socket is closed to `nobody` by the
    /// file modes; root itself can connect anywhere, so a daemon run as `nobody` must refuse
    /// root by its peer credentials.
    @Test(.enabled(if: getuid() == 0, "needs root to run processes as another user"))
    func anotherUserIsRefused() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        var asNobody = daemon.environment
        asNobody["HOME"] = "/tmp"
        let setpriv = try #require(Built.tool("setpriv"))
        let result = try Built.run(
            setpriv, ["--reuid", "nobody", "--regid", "nogroup", "--clear-groups", DaemonUnderTest.binary.path, "status"],
            environment: asNobody)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("another user") || result.stderr.contains("not running"))
        try daemon.stop()

        let nobodyDaemon = try DaemonUnderTest(server: server, user: "nobody", waitUntilReady: false)
        let socketPath = nobodyDaemon.directory.appendingPathComponent("run/ribbit/ribbitd.sock").path
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socketPath) && Date() < deadline { usleep(50_000) }
        #expect(nobodyDaemon.isRunning, "\(nobodyDaemon.log)")
        // Our client does not even connect: the directory is not root's.
        #expect(throws: ControlClientError.self) { try ControlClient.send(.status, socketPath: socketPath) }
        // A raw connection (root may connect anywhere) is refused by the daemon's SO_PEERCRED check.
        let reply = try rawRequest(socketPath, ControlProtocol.encode(ControlRequest.status))
        #expect(reply?.ok == false)
        #expect(reply?.error?.hasPrefix("refused") == true)
        #expect(reply?.status == nil)
        #expect(nobodyDaemon.log.contains("refused a control connection from uid 0"))
    }
}

/// A datagram socket standing in for systemd's NOTIFY_SOCKET.
final class NotifySocket {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestSetupError("cannot bind \(path)") }
        UnixSocket.setTimeout(fd, seconds: 0.2)
    }

    deinit { close(fd) }

    /// Every message received within `seconds`.
    /// What arrives within `seconds`, or until `enough` says so.
    func messages(for seconds: Double, until enough: ([String]) -> Bool = { _ in false }) -> [String] {
        var result = [String]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && !enough(result) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { result.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        return result
    }
}

/// Sends raw bytes and reads one reply line (nil if the daemon closed without one).
func rawRequest(_ socketPath: String, _ bytes: Data) throws -> ControlReply? {
    let fd = try UnixSocket.connect(to: socketPath)
    defer { close(fd) }
    _ = UnixSocket.writeAll(fd, bytes)
    return readReply(fd)
}

private func readReply(_ fd: Int32) -> ControlReply? {
    UnixSocket.setTimeout(fd, seconds: 5)
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !data.contains(0x0A) {
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { break }
        data.append(contentsOf: buffer[0..<n])
    }
    guard let end = data.firstIndex(of: 0x0A) else { return nil }
    return try? JSONDecoder().decode(ControlReply.self, from: data[..<end])
}
