import Foundation
import RibbitControl
import RibbitTestSupport
import RibbitVoice
import Testing

extension DaemonTests {
    /// `ribbitd voice --json` against a real daemon while a JACK client sings a 200 Hz tone into
    /// ribbit's inputs: the frames come 100 a second with the level and pitch played, the
    /// status counts the listener while it listens, the hearing aid keeps playing, and the RT
    /// thread only copies (audited).
    @Test func theVoiceStreamHearsTheMicrophoneWhileTheHearingAidPlays() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, audit: true)
        try daemon.waitUntilProcessing()
        let meter = ChildProcess()
        meter.executableURL = DaemonUnderTest.binary
        meter.arguments = ["voice", "--json"]
        meter.environment = daemon.environment
        let output = Pipe()
        meter.standardOutput = output
        meter.standardError = Pipe()
        try meter.run()
        // Listening before the tone, and to its end (SIGTERM ends it, as Ctrl-C would).
        #expect(try daemon.wait(until: { $0.voiceListeners == 1 }))
        let recording = try Probe.record(server: server, signal: "sine:200", levelDBFS: -30, seconds: 2, besides: daemon)
        usleep(300_000)
        kill(meter.processIdentifier, SIGTERM)
        let lines = String(decoding: try output.fileHandleForReading.readAll(), as: UTF8.self).split(separator: "\n")
        meter.waitUntilExit()
        #expect(meter.terminationStatus == 0)
        let frames = lines.compactMap { try? JSONDecoder().decode(VoiceFrame.self, from: Data($0.utf8)) }
        #expect(frames.count == lines.count)
        let span = (frames.last?.time ?? 0) - (frames.first?.time ?? 0)
        #expect(abs(Double(frames.count) - span * 100) <= 2, "\(frames.count) frames over \(span) s")
        // The sine's middle second: no frame at its edges (onset, offset).
        let loud = frames.filter { $0.levelDB > -40 }
        let middle = Array(loud.dropFirst(30).dropLast(30))
        #expect(middle.count > 100, "only \(loud.count) frames heard the tone")
        let levels = middle.map(\.levelDB).sorted()
        let level = levels.isEmpty ? .nan : levels[levels.count / 2]
        // The probe's -30 is the sine's RMS; ribbit's levels are sine-referenced (a full-scale sine
        // is 0 dBFS), so the sine reads 3.01 dB more.
        #expect(abs(level - (-30 + 3.01)) <= 1, "level \(level) dBFS for a sine of -30 dB RMS")
        #expect(middle.allSatisfy { !$0.calibrated })
        let pitched = middle.filter { $0.voiced && abs(($0.f0Hz ?? 0) / 200 - 1) <= 0.02 }
        // 95 %; a disturbance in the input (a period an xrun dropped, repeated or silenced)
        // spoils the 15 ms pitch window for up to 4 frames and voicing takes 3 more to confirm:
        // 8 frames more are forgiven for each, never below 80 %.
        let needed = max(0.8 * Double(middle.count), 0.95 * Double(middle.count) - 8 * Double(recording.disturbances.count))
        #expect(
            Double(pitched.count) >= needed,
            "\(pitched.count) of \(middle.count) frames voiced at 200 Hz ±2 % (\(recording.disturbances.count) disturbances)")
        // The hearing aid played on: the probe heard ribbit's output during the tone.
        let played = recording.recorded[0].suffix(48000).map { abs($0) }.max() ?? 0
        #expect(played > 0.005, "no sound from the hearing aid while the voice was analysed")
        #expect(try daemon.wait(until: { $0.voiceListeners == 0 }))
        print(
            String(
                format: "voice stream through the daemon: %d frames in %.2f s, level %.2f dBFS for -26.99, %d of %d frames at 200 Hz ±2 %%",
                frames.count, span, level, pitched.count, middle.count))
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 2 * 48000 / 256)  // at least the probe's 2 s
    }
}

extension DaemonTests {
    /// `ribbitd voice` at 80 x 24 in tmux while a 220 Hz tone plays into the inputs: the scale,
    /// the level, the pitch with its note and the pitch strip fit; q gives the terminal back.
    @Test func theVoiceMeterFitsEightyByTwentyFourAndRestoresTheTerminal() throws {
        let tmux = try #require(Built.tool("tmux"), "tmux is needed (apt-get install tmux)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        // Plays until the test has seen what it needs (cancelled below): a start slowed by a busy
        // machine must not outlast the tone.
        let probe = try Probe(server: server, signal: "sine:220", levelDBFS: -30, seconds: 60)
        defer { probe.cancel() }
        let tmuxServer = ServerName.unique()  // a private tmux server, stopped by its own command
        let stty = daemon.directory.appendingPathComponent("stty.txt").path
        let env = ["XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"].map { "\($0)=\(daemon.environment[$0]!)" }
        func tmuxRun(_ arguments: [String]) throws -> RunResult { try Built.run(tmux, ["-L", tmuxServer] + arguments) }
        defer { _ = try? tmuxRun(["kill-server"]) }
        let command = "env \(env.joined(separator: " ")) \(DaemonUnderTest.binary.path) voice; stty -a > \(stty); sleep 30"
        let tmuxEnvironment = ProcessInfo.processInfo.environment.merging(["TERM": "xterm-256color"]) { $1 }
        let status = try Built.runLeavingDaemon(
            tmux, ["-L", tmuxServer, "new-session", "-d", "-x", "80", "-y", "24", "-s", "voice", command], environment: tmuxEnvironment)
        #expect(status == 0)
        // The meter shows the tone's level and pitch once the analysis has settled on it: polled
        // with a deadline a loaded machine meets, and judged on what the screen shows.
        var pane = ""
        let level = [" -27.0", " -26.9", " -27.1"]
        let shown = Date().addingTimeInterval(30)
        while Date() < shown, !(pane.contains("220 Hz  A3") && level.contains(where: pane.contains)) {
            usleep(200_000)
            pane = try tmuxRun(["capture-pane", "-p", "-t", "voice"]).stdout
        }
        let lines = pane.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(pane.contains("ribbit voice  dBFS (no calibration: relative levels)"), "\(pane)")
        #expect(level.contains(where: pane.contains), "\(pane)")
        #expect(pane.contains("220 Hz  A3") && pane.contains("•"), "\(pane)")
        #expect(lines.allSatisfy { $0.count <= 80 } && lines.count <= 24, "\(pane)")
        _ = try tmuxRun(["send-keys", "-t", "voice", "q"])
        // The terminal's settings once the meter has gone (written after it by the same shell line).
        var settings = ""
        let deadline = Date().addingTimeInterval(15)
        while !settings.contains(" echo"), Date() < deadline {
            usleep(50_000)
            settings = (try? String(contentsOfFile: stty, encoding: .utf8)) ?? ""
        }
        #expect(settings.contains(" icanon") && settings.contains(" echo "), "\(settings)")
        #expect(!(try tmuxRun(["capture-pane", "-p", "-t", "voice"]).stdout.contains("ribbit voice  dBFS")))
        try daemon.stop()
    }
}
