import Foundation
import RibbitTestSupport
import Testing

/// `ribbitd verify` without --rx: what the running daemon plays (its history entry), in its
/// program, at JACK's sample rate.
/// Serialized: JACK servers started at once by parallel tests can miss their start-up window.
@Suite(.endToEnd) struct VerifyDaemonTests {
    @Test func verifiesTheActivePrescription() throws {
        let server = try JackTestServer(sampleRate: 44100)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(server: server)
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("mild-presbycusis.rx").path]).status == 0)
        #expect(try daemon.ribbitd(["program", "music"]).status == 0)
        let result = try daemon.ribbitd(["verify", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["prescriptionName"] as? String == "Mild sloping high-frequency loss")
        #expect(json["program"] as? String == "music")
        #expect(json["sampleRate"] as? Double == 44100)
        #expect((json["prescriptionText"] as? String)?.hasPrefix("RIBBIT-RX 1") == true)
    }

    /// `--live` drives the running daemon over JACK and must read what the offline engine reads:
    /// every level and gain within 0.5 dB, the times within a millisecond, the latency exactly.
    /// It must put back the microphone and earphone connections, the program and the volume,
    /// and the audio thread stays clean while it sets them (the RT audit). A 2048-frame period
    /// keeps a loaded machine's xruns rare (a signal an xrun breaks is played again).
    @Test(.runningLimit(minutes: 10)) func liveAgreesWithOfflineAndPutsEverythingBack() throws {
        // A long period: a busy machine (load 10 on two cores) broke 12 tries in a row at 512.
        let period = 2048
        let server = try JackTestServer(period: period)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(server: server, arguments: [], audit: true)
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("camfit-sloping.rx").path]).status == 0)
        _ = try daemon.waitUntilProcessing()
        #expect(try daemon.ribbitd(["volume", "2"]).status == 0)
        #expect(try daemon.ribbitd(["program", "auto"]).status == 0)
        let lsp = try #require(Built.tool("jack_lsp"))
        let connected = try Built.run(lsp, ["-c"], environment: server.environment).stdout
        #expect(connected.contains("system:capture_1\n   ribbit:in_left"), "\(connected)")

        // While it measures, the earphones and the microphone are off the daemon: only the test
        // client is wired to it.
        // The measurement's own JACK client (ribbit-verify) is audited too, in a report of its own.
        let loopbackReport = daemon.directory.appendingPathComponent("loopback-audit.txt")
        let running = try Self.start(
            daemon, ["verify", "--live", "--json", "--program", "quiet"],
            environment: ["LD_PRELOAD": DaemonUnderTest.auditLibrary.path, "RIBBIT_RTAUDIT_REPORT": loopbackReport.path])
        try Self.waitUntilTaken(server)
        let during = try Built.run(lsp, ["-c"], environment: server.environment).stdout
        #expect(!during.contains("system:playback_1\n   ribbit:out_left") && !during.contains("system:playback_2\n   ribbit:out_right"))
        #expect(!during.contains("system:capture_1\n   ribbit:in_left") && !during.contains("system:capture_2\n   ribbit:in_right"))
        let live = try running.finish(timeoutSeconds: 600)
        #expect([0, 1].contains(live.status), "\(live.stderr)")
        let offline = try daemon.ribbitd(["verify", "--json", "--program", "quiet"])
        #expect([0, 1].contains(offline.status), "\(offline.stderr)")
        let a = try #require(try JSONSerialization.jsonObject(with: Data(live.stdout.utf8)) as? [String: Any])
        let b = try #require(try JSONSerialization.jsonObject(with: Data(offline.stdout.utf8)) as? [String: Any])
        #expect(a["live"] as? Bool == true && b["live"] as? Bool == false)
        #expect((a["measuredThrough"] as? String)?.hasPrefix("live: through the running daemon over JACK (client ribbit") == true)

        let levels = Self.figures(a), expected = Self.figures(b)
        #expect(levels.count == expected.count && levels.count > 250)
        let worst =
            expected.filter { !$0.key.hasSuffix("Ms") && levels[$0.key] != nil }.map { abs(levels[$0.key]! - $0.value) }.max() ?? .nan
        print("live against offline: \(expected.count) figures, worst level difference \(worst) dB")
        for (name, value) in expected {
            let tolerance = name.hasSuffix("Ms") ? 1.0 : name.contains("thd") ? 0.05 : 0.5
            #expect(abs((levels[name] ?? .nan) - value) <= tolerance, "\(name): live \(levels[name] ?? .nan), offline \(value)")
        }
        let latency = try #require(a["latency"] as? [String: Any])
        #expect(
            latency["measuredFrames"] as? Int == 96 && latency["reportedFrames"] as? Int == 96 && latency["loopFrames"] as? Int == period)

        // Everything as it was.
        #expect(try Built.run(lsp, ["-c"], environment: server.environment).stdout == connected)
        let listening = try #require(try daemon.status().listening)
        #expect(listening.volumeDB == 2 && listening.chosenBy == .auto)
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 1)
        let loopback = try String(contentsOf: loopbackReport, encoding: .utf8)
        for name in DaemonUnderTest.forbiddenOnTheAudioThread {
            #expect(loopback.contains("\n\(name) 0\n") || loopback.hasPrefix("\(name) 0\n"), "ribbit-verify's JACK client: \(loopback)")
        }
        #expect(!loopback.contains("callbacks 0\n"), "\(loopback)")
    }

    /// Ctrl-C in the middle of a live measurement: exit 130, and the connections, the program
    /// and the volume are as they were.
    @Test func liveStopsOnCtrlCAndPutsEverythingBack() throws {
        let server = try JackTestServer(period: 512)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(server: server, arguments: [])
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("camfit-sloping.rx").path]).status == 0)
        try daemon.waitUntilProcessing()
        #expect(try daemon.ribbitd(["volume", "4"]).status == 0)
        let lsp = try #require(Built.tool("jack_lsp"))
        let connected = try Built.run(lsp, ["-c"], environment: server.environment).stdout
        let running = try Self.start(daemon, ["verify", "--live"])
        try Self.waitUntilTaken(server)
        sleep(3)  // in the OSPL90 sweep: full on
        kill(running.process.processIdentifier, SIGINT)
        let result = try running.finish(timeoutSeconds: 20)
        #expect(result.status == 130 && result.stderr.contains("interrupted"), "\(result.status): \(result.stderr)")
        #expect(try Built.run(lsp, ["-c"], environment: server.environment).stdout == connected)
        let listening = try #require(try daemon.status().listening)
        #expect(listening.volumeDB == 4 && listening.chosenBy == .prescription, "\(listening)")
    }

    /// A client command left running, its output in files (a report's JSON outgrows a pipe).
    struct Running {
        let process: ChildProcess
        let stdout: URL
        let stderr: URL

        func finish(timeoutSeconds: Double) throws -> RunResult {
            let deadline = Date().addingTimeInterval(timeoutSeconds)
            while process.isRunning && Date() < deadline { usleep(100_000) }
            if process.isRunning { stopProcess(process) }
            return RunResult(
                status: process.terminationStatus, stdout: (try? String(contentsOf: stdout, encoding: .utf8)) ?? "",
                stderr: (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
        }
    }

    static func start(_ daemon: DaemonUnderTest, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Running {
        let directory = try TestPaths.temporaryDirectory()
        let (out, err) = (directory.appendingPathComponent("stdout"), directory.appendingPathComponent("stderr"))
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = DaemonUnderTest.binary
        process.arguments = arguments
        process.environment = daemon.environment.merging(extra) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        return Running(process: process, stdout: out, stderr: err)
    }

    /// Until the test client is wired to the daemon (at most 20 s).
    static func waitUntilTaken(_ server: JackTestServer) throws {
        let lsp = try #require(Built.tool("jack_lsp"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if try Built.run(lsp, ["-c"], environment: server.environment).stdout.contains("ribbit-verify:out_left\n   ribbit:in_left") {
                return
            }
            usleep(100_000)
        }
        throw TestSetupError("verify --live never took the daemon's ports")
    }

    /// --live with --rx, or with a paused hearing aid: one line, nothing touched.
    @Test func liveRefusesWhatItCannotMeasure() throws {
        let server = try JackTestServer()
        defer { server.stop() }
        let daemon = try DaemonUnderTest(server: server, arguments: [])
        let rx = TestPaths.prescription("camfit-sloping.rx").path
        #expect(try daemon.ribbitd(["load", rx]).status == 0)
        _ = try daemon.waitUntilProcessing()
        let lsp = try #require(Built.tool("jack_lsp"))
        let connected = try Built.run(lsp, ["-c"], environment: server.environment).stdout
        let withRx = try daemon.ribbitd(["verify", "--live", "--rx", rx])
        #expect(withRx.status == 64 && withRx.stderr.contains("--live measures what the daemon plays"), "\(withRx.stderr)")
        #expect(try daemon.ribbitd(["pause"]).status == 0)
        let paused = try daemon.ribbitd(["verify", "--live"])
        #expect(paused.status == 65 && paused.stderr.contains("paused; `ribbitd resume` first"), "\(paused.stderr)")
        #expect(paused.stderr.split(separator: "\n").count == 1)
        #expect(try Built.run(lsp, ["-c"], environment: server.environment).stdout == connected)
    }

    /// Every figure of a report by name: levels, gains, times, distortion.
    static func figures(_ report: [String: Any]) -> [String: Double] {
        var result: [String: Double] = [:]
        for case let ear as [String: Any] in report["ears"] as? [Any] ?? [] {
            let side = ear["ear"] as? String ?? "?"
            for key in ["hfaOSPL90DBSPL", "hfaFullOnGainDB", "referenceVolumeDB", "referenceHFAGainDB", "attackMs", "releaseMs"] {
                result["\(side) \(key)"] = ear[key] as? Double
            }
            for key in ["ospl90", "fullOnGain", "frequencyResponse"] {
                for case let point as [String: Any] in ear[key] as? [Any] ?? [] {
                    result["\(side) \(key) \(point["hz"] ?? "")"] = point["db"] as? Double
                }
            }
            for case let d as [String: Any] in ear["distortion"] as? [Any] ?? [] {
                result["\(side) thd \(d["hz"] ?? "")"] = d["thdPercent"] as? Double
            }
            result["\(side) ein"] = (ear["noise"] as? [String: Any])?["einDBSPL"] as? Double
            for case let curve as [String: Any] in ear["ioCurves"] as? [Any] ?? [] {
                for case let point as [String: Any] in curve["points"] as? [Any] ?? [] {
                    result["\(side) io \(curve["hz"] ?? "") \(point["inputDBSPL"] ?? "")"] = point["outputDBSPL"] as? Double
                }
            }
            for case let match as [String: Any] in ear["targetMatch"] as? [Any] ?? [] {
                for case let row as [String: Any] in match["rows"] as? [Any] ?? [] {
                    result["\(side) match \(match["levelDBSPL"] ?? "") \(row["hz"] ?? "")"] = row["measuredGainDB"] as? Double
                }
            }
        }
        return result
    }
}
