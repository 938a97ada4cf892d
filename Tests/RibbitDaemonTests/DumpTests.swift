import Foundation
import Glibc
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitMonitor
import RibbitPrescription
import RibbitSettings
import RibbitTestSupport
import Testing

extension DaemonTests {
    /// A 1 kHz tone at -40 dBFS through mild-presbycusis: in the dump, the output level in the
    /// tone's band is the input level plus the target gain within +-1 dB; the frame carries the
    /// prescription's target, the filter's response and the audiogram; CSV and SVG hold what they promise.
    @Test func dumpShowsTheTargetGainOfATone() throws {
        let server = try JackTestServer()
        let rxPath = TestPaths.prescription("mild-presbycusis.rx").path
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", rxPath])
        try daemon.waitUntilProcessing()
        let probe = try Probe(server: server, signal: "sine:1000", levelDBFS: -40, seconds: 60)
        try probe.waitUntilPlaying()
        usleep(500_000)
        let csv = daemon.directory.appendingPathComponent("dump.csv").path
        let svg = daemon.directory.appendingPathComponent("dump.svg").path
        let rx = try Prescription.parse(Data(contentsOf: URL(fileURLWithPath: rxPath)))
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        let band = try #require(DumpAnalyzer.bandCentersHz.firstIndex(of: 1000))
        let bin = Int(1000 / DumpAnalyzer.spectrumBinHz(sampleRate: 48000))  // 21.33 -> bin 21 at 984 Hz
        // Frames whose analysis window JACK glitched are not judged: a period lost or repeated
        // on the way from the probe splices the sine, and the splice spreads its power out of
        // the tone's band (loaded: the input band read -42 dB with the RMS still -40). The xrun
        // count cannot tell them: beside stress-ng JACK counted 40-80 xruns a second with one
        // frame in a hundred spliced, and the count moved in nearly every frame. The signal can:
        // a frame is judged when the tone's band holds the input's whole power (band level within
        // 0.2 dB of the RMS, both ears); its output is then judged whole, so an output that
        // glitched fails the gain. At least five must be, and half of a take's frames; while
        // fewer are, the dump is taken again, each retake printed with its xruns, for up to 50 s
        // (the probe plays 60), and the judged frames of every take count. A dump that read the
        // band wrong leaves none.
        var frames: [DumpFrame] = []
        var clean: [DumpFrame] = []
        let retakesEnd = MonotonicClock.seconds() + 50
        for take in 1... {
            let result = try daemon.ribbitd(["dump", "--json", "--duration", "3", "--csv", csv, "--svg", svg])
            #expect(result.status == 0, "\(result.stderr)")
            frames = try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(DumpFrame.self, from: Data($0.utf8)) }
            // 20 a second on a fixed grid: 3 s gives 60 (61 with one at each end). A loaded machine
            // sends some late or drops some (fewer), or ends the client's 3 s late (62 seen); the
            // rate itself is the grid, read from the frames' own times.
            #expect((30...63).contains(frames.count), "\(frames.count) frames in 3 s")
            guard frames.count >= 3 else { break }
            let gaps = zip(frames, frames.dropFirst()).map { $1.time - $0.time }.sorted()
            let spacing = gaps[gaps.count / 2]
            #expect(abs(spacing - 0.05) < 0.005, "frames every \(spacing) s (median)")
            let cleanHere = frames.filter { frame in frame.ears.values.allSatisfy { abs($0.inputBandsDB[band] - $0.inputRMSDB) < 0.2 } }
            clean += cleanHere
            if (clean.count >= 5 && 2 * cleanHere.count >= frames.count) || result.status != 0 || MonotonicClock.seconds() > retakesEnd {
                break
            }
            print(
                "dump take \(take): \(frames.count - cleanHere.count) of \(frames.count) frames with the tone spliced "
                    + "(\(frames.last!.xruns - frames.first!.xruns) xruns, \(frames.last!.droppedFrames) sample frames dropped); taken again"
            )
        }
        probe.cancel()
        #expect(clean.count >= 5, "\(clean.count) frames with a clean tone in 50 s of takes")
        for frame in clean.suffix(10) {
            #expect(frame.sampleRate == 48000 && frame.latencyFrames == 96 && frame.output == .processing)
            #expect(frame.prescription?.name == rx.name)
            for ear in Ear.allCases {
                let values = try #require(frame.ears[ear.rawValue])
                let measured = values.outputBandsDB[band] - values.inputBandsDB[band]
                let target = fitting.targetGainDB(for: ear, atHz: 1000)
                #expect(abs(measured - target) <= 1, "\(ear): \(measured) dB measured, \(target) dB target")
                #expect(
                    abs(values.inputBandsDB[band] + 40) < 1 && abs(values.inputRMSDB + 40) < 0.5,
                    "\(ear) input \(values.inputBandsDB[band]) dB in the band, \(values.inputRMSDB) dBFS RMS, frame at \(frame.time) s, xruns \(frame.xruns): \(frames.map { "\($0.time): \($0.xruns)" })"
                )
                #expect(abs(values.outputRMSDB - values.inputRMSDB - target) <= 1)
                #expect(abs(try #require(values.targetGainDB[band]) - target) < 0.01)
                let binTarget = fitting.targetGainDB(for: ear, atHz: Double(bin) * 46.875)
                #expect(abs(try #require(values.combinationWindowDB[bin]) - binTarget) < 0.01)
                #expect(abs(values.appliedGainDB[bin] - binTarget) < 1, "the filter's response at \(bin) against the window")
                #expect(values.audiogram.map(\.frequencyHz) == rx.thresholds[ear]!.keys.sorted())
                #expect(values.audiogram.map(\.thresholdDBHL) == rx.thresholds[ear]!.keys.sorted().map { rx.thresholds[ear]![$0]! })
            }
        }
        // The CSV: a header and a row per frame and ear.
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(rows.first?.hasPrefix("time_s,ear,output,input_rms_dbfs") == true)
        #expect(rows.count == 1 + 2 * frames.count)
        // The SVG: well-formed XML with every series, and one mark per audiogram point.
        let ids = try SVGContents(svg)
        for ear in ["left", "right"] {
            for series in ["input-spectrum", "output-spectrum", "target-gain", "applied-gain", "measured-gain"] {
                #expect(ids.ids.contains("\(ear)-\(series)"), "\(ear)-\(series) missing from the SVG")
            }
            #expect(ids.ids.contains("audiogram-\(ear)"))
        }
        #expect(ids.marks == ["X": rx.thresholds[.left]!.count, "O": rx.thresholds[.right]!.count])
        try daemon.stop()
    }

    /// The live view in a real terminal (a 100 x 30 pty from script(1)): each ear's name above
    /// its chart, the right ear on the left, in colour; with NO_COLOR the same view without a
    /// colour escape; with TERM=dumb plain lines and no escape at all: what plays, then a line
    /// of levels a second, right ear first.
    @Test func liveViewFollowsTheTerminal() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path])
        try daemon.waitUntilProcessing()
        let script = try #require(Built.tool("script"), "script(1) is missing (util-linux)")
        func view(_ variables: [String: String], seconds: Double = 2.5) throws -> String {
            var environment = daemon.environment
            environment["NO_COLOR"] = nil  // only where the case sets it
            environment.merge(variables) { $1 }
            let command = "stty cols 100 rows 30; exec '\(DaemonUnderTest.binary.path)' dump --duration \(seconds)"
            let result = try Built.run(script, ["-qec", command, "/dev/null"], environment: environment, timeoutSeconds: 30)
            #expect(result.status == 0, "\(variables): \(result.stdout.suffix(300)) \(result.stderr)")
            return result.stdout
        }
        let colour = /\u{1B}\[[0-9;]*m/
        let full = try view(["TERM": "xterm-256color"])
        #expect(full.contains("\u{1B}[?1049h") && full.contains("\u{1B}[?1049l"), "alternate screen, given back")
        #expect(full.contains("\u{1B}[1;91mRight ear\u{1B}[0m") && full.contains("\u{1B}[1;94mLeft ear\u{1B}[0m"))
        let titles = try #require(full.split(separator: "\r\n").last { $0.contains("Right ear") }, "\(full.suffix(2000))")
        let right = try #require(titles.firstRange(of: "Right ear")), left = try #require(titles.firstRange(of: "Left ear"))
        #expect(right.lowerBound < left.lowerBound, "the right ear on the left: \(titles)")

        let plain = try view(["TERM": "xterm-256color", "NO_COLOR": "1"])
        #expect(plain.contains("\u{1B}[?1049h") && plain.contains("Right ear") && plain.contains("Left ear"))
        #expect(plain.firstMatch(of: colour) == nil, "no colour escape with NO_COLOR")
        // The dB scale: round labels only.
        let labels = plain.matches(of: /(-?\d+)│/).map { Int($0.1)! }
        #expect(!labels.isEmpty && labels.allSatisfy { $0 % 30 == 0 && (-90...0).contains($0) }, "\(Set(labels))")

        // Six seconds: a line a second gives up to six, however late a busy machine starts them.
        let dumb = try view(["TERM": "dumb"], seconds: 6)
        #expect(!dumb.contains("\u{1B}"), "no escape at all on a dumb terminal: \(dumb.debugDescription.prefix(300))")
        let lines = dumb.split(separator: "\r\n").map(String.init)
        #expect(lines.first?.hasPrefix("ribbit dump  Mild sloping high-frequency loss (quiet, nal-r)  processing") == true, "\(lines)")
        // dBFS, then dB SPL through the calibration unless the input is silent.
        let levels = lines.filter {
            $0.firstMatch(
                of: /^\d+\.\d s  right in -?\d+\.\d out -?\d+\.\d dBFS( \(-?\d+\.\d \/ -?\d+\.\d dB SPL\))?  left in .* xruns \d+$/) != nil
        }
        #expect(
            (1...6).contains(levels.count) && lines.count <= 8,
            "a line a second: \(lines) \(dumb.debugDescription) daemon log: \(daemon.log)")
        try daemon.stop()
    }

    /// The dump shows what runs now: after a load its targets, window, filter response and
    /// audiogram are the new prescription's; in bypass a flat 0 dB and no audiogram.
    @Test func dumpFollowsLoadAndBypass() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("mild-presbycusis.rx").path])
        try daemon.waitUntilProcessing()
        let socket = try UnixSocket.connect(to: RibbitPaths(environment: daemon.environment).socketPath)
        defer { close(socket) }
        #expect(UnixSocket.writeAll(socket, ControlProtocol.encode(ControlRequest.dump)))
        let reader = LineReader(fd: socket)
        guard case .line = reader.next(timeoutSeconds: 5) else { Issue.record("no reply"); return }
        /// The first frame (within 30 s) that satisfies `condition`.
        func frame(where condition: (DumpFrame) -> Bool) throws -> DumpFrame? {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, case .line(let line) = reader.next(timeoutSeconds: 1) {
                let frame = try JSONDecoder().decode(DumpFrame.self, from: line)
                if condition(frame) { return frame }
            }
            return nil
        }
        let band4k = try #require(DumpAnalyzer.bandCentersHz.firstIndex(of: 4000))
        let bin4k = Int((4000 / DumpAnalyzer.spectrumBinHz(sampleRate: 48000)).rounded())
        for name in ["mild-presbycusis.rx", "ski-slope.rx"] {
            let rx = try Prescription.parse(Data(contentsOf: TestPaths.prescription(name)))
            if name != "mild-presbycusis.rx" { #expect(try daemon.ribbitd(["load", TestPaths.prescription(name).path]).status == 0) }
            let shown = try #require(try frame { $0.prescription?.name == rx.name }, "no frame with \(rx.name)")
            let fitting = try Fitting(prescription: rx, sampleRate: 48000)
            for ear in Ear.allCases {
                let values = try #require(shown.ears[ear.rawValue])
                let target = fitting.targetGainDB(for: ear, atHz: 4000)
                #expect(abs(values.targetGainDB[band4k]! - target) < 0.01, "\(name) \(ear)")
                let window = fitting.targetGainDB(for: ear, atHz: Double(bin4k) * 46.875)
                #expect(abs(values.combinationWindowDB[bin4k]! - window) < 0.01)
                #expect(abs(values.appliedGainDB[bin4k] - window) < 2, "\(name) \(ear): filter \(values.appliedGainDB[bin4k]) dB")
                #expect(values.audiogram.count == rx.thresholds[ear]!.count)
            }
        }
        #expect(try daemon.ribbitd(["bypass", "on"]).status == 0)
        let bypassed = try #require(try frame { $0.output == .bypassed }, "no bypassed frame")
        for values in bypassed.ears.values {
            #expect(values.targetGainDB.allSatisfy { $0 == 0 } && values.combinationWindowDB.allSatisfy { $0 == 0 })
            #expect(values.appliedGainDB.allSatisfy { abs($0) < 0.01 } && values.audiogram.isEmpty)
        }
        try daemon.stop()
    }

    /// A dump client that stops reading holds up neither the daemon nor another dump client, and
    /// when it reads again every line it gets is whole; once it has gone, the daemon stops
    /// copying for the dump (status shows no listener).
    @Test func aStalledDumpClientCostsNothingAndGetsWholeLines() throws {
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        // Closed once, below (when the client goes away): a second close would close whatever
        // another test opened under the same number since (stop 48's loaded run lost every
        // end-to-end test to that: another test's pipe closed under its read).
        let socket = try UnixSocket.connect(to: RibbitPaths(environment: daemon.environment).socketPath)
        #expect(UnixSocket.writeAll(socket, ControlProtocol.encode(ControlRequest.dump)))
        usleep(3_000_000)  // about 60 frames, more than the socket holds: the daemon has had to wait
        let started = Date()
        #expect(try daemon.status().dumpListeners == 1)
        // A daemon waiting on the stalled client would not answer at all; 5 s is for a busy machine.
        #expect(Date().timeIntervalSince(started) < 5, "status took \(Date().timeIntervalSince(started)) s")
        let other = try daemon.ribbitd(["dump", "--json", "--duration", "1"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(other.stdout.split(separator: "\n").count >= 5)
        // Now read what the stalled client was sent: its reply, then only whole frames.
        let reader = LineReader(fd: socket)
        guard case .line(let first) = reader.next(timeoutSeconds: 2) else {
            close(socket)
            Issue.record("no reply")
            return
        }
        #expect(try JSONDecoder().decode(ControlReply.self, from: first).ok)
        var frames = [DumpFrame]()
        while case .line(let line) = reader.next(timeoutSeconds: 0.5), frames.count < 200 {
            frames.append(try JSONDecoder().decode(DumpFrame.self, from: line))
        }
        #expect(frames.count >= 10)
        #expect(
            frames.allSatisfy { $0.droppedFrames == 0 },
            "samples dropped: the audio thread's ring was full or the daemon fell over 5 s behind")
        close(socket)
        #expect(try daemon.wait(until: { $0.dumpListeners == 0 }))
        try daemon.stop()
    }

    /// The live view at 80 x 24 in tmux: header, bars, names and levels of both ears on screen, no line
    /// wider than 80; after q, and after Ctrl-C, the terminal is back in canonical mode with echo.
    @Test func liveViewFitsEightyByTwentyFourAndRestoresTheTerminal() throws {
        let tmux = try #require(Built.tool("tmux"), "tmux is needed (apt-get install tmux)")
        let server = try JackTestServer()
        let daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("ski-slope.rx").path])
        try daemon.waitUntilProcessing()
        // Plays until the test has seen what it needs (cancelled at the end).
        let probe = try Probe(server: server, signal: "noise", levelDBFS: -40, seconds: 60)
        defer { probe.cancel() }
        let tmuxServer = ServerName.unique()  // a private tmux server, stopped by its own command
        let stty = daemon.directory.appendingPathComponent("stty.txt").path
        let env = ["XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"].map { "\($0)=\(daemon.environment[$0]!)" }
        func tmuxRun(_ arguments: [String]) throws -> RunResult {
            try Built.run(tmux, ["-L", tmuxServer] + arguments)
        }
        defer { _ = try? tmuxRun(["kill-server"]) }
        let command = "env \(env.joined(separator: " ")) \(DaemonUnderTest.binary.path) dump; stty -a > \(stty); sleep 30"
        let tmuxEnvironment = ProcessInfo.processInfo.environment.merging(["TERM": "xterm-256color"]) { $1 }
        let status = try Built.runLeavingDaemon(
            tmux, ["-L", tmuxServer, "new-session", "-d", "-x", "80", "-y", "24", "-s", "dump", command], environment: tmuxEnvironment)
        #expect(status == 0)
        // Polled until both ears' levels are drawn (a loaded machine starts slowly), then judged.
        var pane = ""
        let shown = Date().addingTimeInterval(30)
        while Date() < shown, !(pane.contains("in -") && pane.contains("out -") && pane.contains("Left ear")) {
            usleep(200_000)
            pane = try tmuxRun(["capture-pane", "-p", "-t", "dump"]).stdout
        }
        let lines = pane.split(separator: "\n", omittingEmptySubsequences: false).dropLast()  // after the last newline
        #expect(pane.contains("ribbit dump  Steep ski-slope loss"), "\(pane)")
        #expect(pane.contains("latency 96 samples (2.00 ms)"))
        #expect(pane.contains("░") && pane.contains("█"), "\(pane)")
        #expect(pane.contains("1k") && pane.contains("8k") && pane.contains("in -") && pane.contains("out -"), "\(pane)")
        // Stacked at 80 columns: each ear's name above its chart, the right ear first.
        let right = lines.firstIndex { $0.hasPrefix("Right ear") }, left = lines.firstIndex { $0.hasPrefix("Left ear") }
        #expect(right != nil && left != nil && right! < left!, "\(pane)")
        #expect(lines.allSatisfy { $0.count <= 80 } && lines.count == 24, "\(pane)")
        _ = try tmuxRun(["send-keys", "-t", "dump", "q"])
        // The terminal's settings once the view has gone (written after it by the same shell line).
        var settings = ""
        let deadline = Date().addingTimeInterval(15)
        while !settings.contains(" echo"), Date() < deadline {
            usleep(50_000)
            settings = (try? String(contentsOfFile: stty, encoding: .utf8)) ?? ""
        }
        #expect(settings.contains(" icanon") && !settings.contains("-icanon"), "\(settings)")
        #expect(settings.contains(" echo ") && !settings.contains("-echo "), "\(settings)")
        // Back in the main screen: the view's lines are gone.
        let after = try tmuxRun(["capture-pane", "-p", "-t", "dump"]).stdout
        #expect(!after.contains("ribbit dump  Steep"), "\(after)")
        // Ctrl-C ends it as cleanly (SIGINT, taken by the dump loop, not by a default handler).
        let again = daemon.directory.appendingPathComponent("stty-after-ctrl-c.txt").path
        _ = try tmuxRun(["respawn-pane", "-k", "-t", "dump", command.replacingOccurrences(of: stty, with: again)])
        var respawned = ""
        let drawn = Date().addingTimeInterval(30)
        while Date() < drawn, !respawned.contains("ribbit dump  Steep") {
            usleep(200_000)
            respawned = try tmuxRun(["capture-pane", "-p", "-t", "dump"]).stdout
        }
        #expect(respawned.contains("ribbit dump  Steep"), "\(respawned)")
        _ = try tmuxRun(["send-keys", "-t", "dump", "C-c"])
        var afterInterrupt = ""
        let secondDeadline = Date().addingTimeInterval(15)
        while !afterInterrupt.contains(" echo"), Date() < secondDeadline {
            usleep(50_000)
            afterInterrupt = (try? String(contentsOfFile: again, encoding: .utf8)) ?? ""
        }
        #expect(afterInterrupt.contains(" icanon") && afterInterrupt.contains(" echo "), "\(afterInterrupt)")
        try daemon.stop()
    }
}
