import Foundation
import Glibc
import RibbitAudiometry
import RibbitControl
import RibbitPrescription
import RibbitSettings
import RibbitTestSupport
import Testing

/// The hearing test end to end (terminal and web), its fitting and its trial: one test at a time.
@Suite(.endToEnd) struct HearingTestDaemonTests {}

/// `ribbitd hearing-test` end to end: the real daemon runs the procedure on a dummy JACK server,
/// and a simulated listener (Tests/tools/simulated-listener.py) takes the test in a pty as a
/// person would, hearing the tones through JACK from ribbit's outputs (their level and
/// frequency measured in the samples, not taken from the daemon) and answering through a
/// logistic psychometric function.
extension HearingTestDaemonTests {
    /// What the listener wrote.
    struct ListenerReport: Decodable {
        struct Heard: Decodable {
            var time: Double
            var ear: String
            var hz: Int?
            var levelDBFS: Double?
            var dBHL: Double?
            var answered: Bool?
            /// Masking noise in the other ear when it was judged: where, and its level measured.
            var maskerEar: String?
            var maskerDBEM: Double?
        }
        var presentations: [Heard]
        var presses: [Double]
        var peakDBFS: Double
        var maskerPeakDBFS: Double?
        var exit: Int32?
        var screen: String
    }

    static let listenerScript = TestPaths.packageRoot.appendingPathComponent("Tests/tools/simulated-listener.py")

    /// Runs the listener against `daemon` taking `ribbitd hearing-test ARGUMENTS`; returns what
    /// it heard and the test's final status.
    static func takeHearingTest(
        daemon: DaemonUnderTest, arguments: [String], listener: [String: Any], timeoutSeconds: Double = 300
    ) throws -> (ListenerReport, HearingTestStatus) {
        guard FileManager.default.fileExists(atPath: "/usr/bin/python3") else {
            throw TestSetupError("/usr/bin/python3 is missing: `make install-dev` installs python3-jack-client")
        }
        let out = daemon.directory.appendingPathComponent("listener-\(UUID().uuidString).json")
        var config = listener
        config["command"] = [DaemonUnderTest.binary.path, "hearing-test"] + arguments
        config["ports"] = ["ribbit:out_left", "ribbit:out_right"]
        config["calibrationDBSPL"] = ["left": 100.0, "right": 100.0]  // uncalibrated: the documented default
        config["retspl"] = Dictionary(
            uniqueKeysWithValues: RETSPLTable.standard(.consumer).dBSPLAtZeroHL.map { (String($0.key), $0.value) })
        config["timeoutSeconds"] = timeoutSeconds
        config["out"] = out.path
        let configURL = daemon.directory.appendingPathComponent("listener-\(UUID().uuidString)-config.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        let run = try Built.run(
            URL(fileURLWithPath: "/usr/bin/python3"), [listenerScript.path, configURL.path], environment: daemon.environment,
            timeoutSeconds: timeoutSeconds + 30)
        guard run.status == 0 else {
            throw TestSetupError("the simulated listener failed (\(run.status)): \(run.stderr.suffix(2000))")
        }
        let report = try JSONDecoder().decode(ListenerReport.self, from: Data(contentsOf: out))
        guard let status = try daemon.status().hearingTest else { throw TestSetupError("no hearing test in the status: \(daemon.log)") }
        return (report, status)
    }

    /// A listener with known thresholds (off the 5 dB grid) gets them within 5 dB, through the
    /// terminal UI; every tone it heard was at the level the calibration says (within 0.5 dB of
    /// a 5 dB step, through 100 dB SPL at 0 dBFS and the RETSPL), at the asked frequency, in the
    /// tested ear, and the RT thread stayed clean.
    @Test(.runningLimit(minutes: 8)) func aListenerWithKnownThresholdsGetsThemThroughTheTerminal() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, audit: true)
        try daemon.waitUntilProcessing()
        let truth = ["1000": 32.0, "4000": 51.0]
        let (report, status) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--ear", "right", "--frequencies", "1000,4000,1000", "--seed", "11"],
            listener: ["thresholds": ["right": truth], "seed": 5, "slopePerDB": 1.0, "lapse": 0.02])
        #expect(report.exit == 0, "the CLI ended with \(report.exit.map(String.init) ?? "nothing"): \(report.screen.suffix(800))")
        #expect(status.state == .finished, "\(status)")
        for hz in [1000, 4000] {
            let measured = status.frequencies.kept(ear: .right, frequencyHz: hz)?.thresholdDBHL
            #expect(measured.map { abs(Double($0) - truth[String(hz)]!) <= 5 } == true, "\(hz) Hz: \(String(describing: measured))")
        }
        #expect(status.answers == report.presses.count, "the daemon took \(status.answers) answers of \(report.presses.count) presses")
        #expect(!report.presentations.isEmpty)
        for heard in report.presentations {
            #expect(heard.ear == "right", "a tone in the \(heard.ear) ear at \(heard.time) s")
            #expect([1000, 4000].contains(heard.hz ?? 0), "a tone of \(String(describing: heard.hz)) Hz")
            if let dBHL = heard.dBHL {
                #expect(abs(dBHL - 5 * (dBHL / 5).rounded()) < 0.5, "a tone at \(dBHL) dB HL is off the 5 dB steps")
            }
        }
        // The stored record's log, tone by tone, against what the listener measured at the output.
        let id = try #require(status.recordID, "not stored: \(status.problem ?? "")")
        let shown = try daemon.ribbitd(["audiogram", "show", "\(id)", "--json"])
        let record = try JSONDecoder().decode(HearingTestRecord.self, from: Data(shown.stdout.utf8))
        let played = record.result.log.filter { $0.toneEar != nil }
        #expect(played.count == report.presentations.count, "\(played.count) tones logged, \(report.presentations.count) heard")
        var worst = 0.0
        for (logged, heard) in zip(played, report.presentations) {
            #expect(heard.hz == logged.frequencyHz && heard.ear == logged.toneEar?.rawValue)
            let error = abs((heard.dBHL ?? -100) - Double(logged.levelDBHL))
            worst = max(worst, error)
            #expect(error < 0.5, "logged \(logged.levelDBHL) dB HL at \(logged.frequencyHz) Hz, measured \(heard.dBHL ?? -100)")
            #expect(logged.responded == (heard.answered ?? false), "the answer to the tone at \(heard.time) s")
        }
        // The dummy server's microphone gives digital silence: the room is "not checked", never quiet.
        #expect(record.result.frequencies.allSatisfy { $0.ambientNoiseDBSPL == nil }, "\(record.result.frequencies)")
        let text = try daemon.ribbitd(["audiogram", "show", "\(id)"]).stdout
        #expect(text.contains("room noise: not checked (no microphone signal)") && text.contains(" not checked "), "\(text)")
        print("stored hearing test \(id): \(played.count) tones, worst level error \(String(format: "%.3f", worst)) dB against the log")
        let finishedOnScreen = report.screen.contains("Hearing test finished")
        #expect(finishedOnScreen, "the screen ended with: \(report.screen.suffix(600))")
        print(
            "hearing test through the terminal: \(report.presentations.count) tones heard, \(report.presses.count) presses, "
                + "thresholds \(status.frequencies.map { "\($0.frequencyHz)\($0.isRetest ? "r" : ""):\($0.thresholdDBHL.map(String.init) ?? "-")" }), "
                + "level error of the tones \(String(format: "%.3f", report.presentations.compactMap(\.dBHL).map { abs($0 - 5 * ($0 / 5).rounded()) }.max() ?? -1)) dB, "
                + String(format: "%.0f s", status.elapsedSeconds))
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 1)
    }

    /// Masking end to end: a listener whose right ear is at 72 dB HL and left at 11, hearing a
    /// tone through the head 40 dB down (the least supra-aural headphones give), answers for the
    /// right ear at about the left's 51 when nothing masks. The daemon then tests the right ear
    /// again with narrow-band noise in the left, which the listener hears from the output ports
    /// and measures: the stored audiogram keeps the masked threshold, the noise played was the
    /// level logged (within 1 dB, through the calibration, the RETSPL and ISO 389-4's
    /// correction), only in the left ear while the right was tested, its peak under the
    /// ceiling, the screen told the listener to ignore it, and the RT thread stayed clean.
    @Test(.runningLimit(minutes: 8)) func aCrossHeardEarIsMaskedThroughJack() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, audit: true)
        try daemon.waitUntilProcessing()
        let truth = ["right": ["1000": 72.0], "left": ["1000": 11.0]]
        let (report, status) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--frequencies", "1000", "--seed", "3"],
            listener: ["thresholds": truth, "seed": 7, "slopePerDB": 1.0, "lapse": 0.02, "interauralAttenuationDB": 40.0])
        #expect(report.exit == 0, "the CLI ended with \(report.exit.map(String.init) ?? "nothing"): \(report.screen.suffix(800))")
        #expect(status.state == .finished, "\(status)")
        let right = status.frequencies.filter { $0.ear == .right }
        let unmasked = try #require(right.first { !$0.isMasked }?.thresholdDBHL, "\(right)")
        #expect(unmasked <= 60, "unmasked, the right ear answered at \(unmasked) dB HL: the left ear should have heard it")
        let kept = try #require(status.frequencies.kept(ear: .right, frequencyHz: 1000), "\(status.frequencies)")
        #expect(kept.isMasked && kept.thresholdDBHL.map { abs(Double($0) - 72) <= 5 } == true, "kept \(kept)")
        let left = status.frequencies.kept(ear: .left, frequencyHz: 1000)?.thresholdDBHL
        #expect(left.map { abs(Double($0) - 11) <= 5 } == true, "left \(String(describing: left))")
        #expect(status.findings?.crossHeard.isEmpty == true, "\(status.findings?.lines ?? [])")

        let id = try #require(status.recordID, "not stored: \(status.problem ?? "")")
        let record = try JSONDecoder().decode(
            HearingTestRecord.self, from: Data(try daemon.ribbitd(["audiogram", "show", "\(id)", "--json"]).stdout.utf8))
        let played = record.result.log.filter { $0.toneEar != nil }
        #expect(played.count == report.presentations.count, "\(played.count) tones logged, \(report.presentations.count) heard")
        var maskedTones = 0
        var worst = 0.0
        for (logged, heard) in zip(played, report.presentations) {
            #expect((logged.maskingDBEM != nil) == (heard.maskerDBEM != nil), "tone at \(heard.time) s: logged \(logged), heard \(heard)")
            guard let noise = logged.maskingDBEM, let measured = heard.maskerDBEM else { continue }
            maskedTones += 1
            #expect(heard.ear == "right" && heard.maskerEar == "left")
            worst = max(worst, abs(measured - Double(noise)))
            #expect(abs(measured - Double(noise)) < 1, "noise logged at \(noise) dB EM, measured \(measured)")
        }
        #expect(maskedTones >= 4, "\(maskedTones) masked tones")
        // The noise's peak: under the loudest noise logged (100 dB SPL at 0 dBFS, the consumer
        // table's RETSPL, ISO 389-4's correction) plus the loop's crest over a sine of its power,
        // and over that level plus a sine's (a noise peaks higher than a sine of its power).
        let loudest = Double(try #require(played.compactMap(\.maskingDBEM).max()))
        let loudestDBFS = loudest + RETSPLTable.standard(.consumer).dBSPLAtZeroHL[1000]! + 6 - 100
        let peak = report.maskerPeakDBFS ?? -200
        #expect(peak <= loudestDBFS + 10.06 + 0.05 && peak >= loudestDBFS + 3, "noise peak \(peak) dBFS for \(loudestDBFS) dBFS of noise")
        #expect(report.screen.contains("rushing noise plays in your LEFT ear"), "\(report.screen.suffix(800))")
        let text = try daemon.ribbitd(["audiogram", "show", "\(id)"]).stdout
        #expect(text.contains("masked,"), "\(text)")
        print(
            "masking through JACK: unmasked right \(unmasked) dB HL, masked \(kept.thresholdDBHL ?? -1) at \(kept.maskingDBEM ?? -1) dB EM "
                + "(truth 72, left 11), \(maskedTones) masked tones, noise level within \(String(format: "%.2f", worst)) dB of the log, "
                + "noise peak \(report.maskerPeakDBFS ?? 0) dBFS, \(String(format: "%.0f s", status.elapsedSeconds))")
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 1)
    }

    /// Answers naming the ear (`--name-ear`, the arrow keys) reach the daemon with the ear named,
    /// and an honest listener is not flagged (ProcedureTests score other-ear catch trials).
    @Test(.runningLimit(minutes: 5)) func answersCanNameTheEar() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let (report, status) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--name-ear", "--ear", "right", "--frequencies", "1000,2000", "--seed", "21"],
            listener: [
                "thresholds": ["right": ["1000": 25.0, "2000": 30.0], "left": ["1000": 25.0, "2000": 30.0]], "nameEar": true, "seed": 4,
            ])
        #expect(status.state == .finished, "\(status)")
        #expect(status.answers == report.presses.count)
        let id = try #require(status.recordID)
        let record = try JSONDecoder().decode(
            HearingTestRecord.self, from: Data(try daemon.ribbitd(["audiogram", "show", "\(id)", "--json"]).stdout.utf8))
        let named = record.result.log.filter(\.responded)
        #expect(!named.isEmpty && named.allSatisfy { $0.answeredEar == $0.toneEar }, "answers named \(named.map(\.answeredEar))")
        let otherEar = record.result.log.filter { $0.catchTrial == .otherEar }
        #expect(!status.flags.contains(.falseAlarms), "\(status.flags)")
        for hz in [1000, 2000] {
            let measured = status.frequencies.first { $0.frequencyHz == hz }?.thresholdDBHL
            #expect(measured.map { abs(Double($0) - (hz == 1000 ? 25 : 30)) <= 5 } == true, "\(hz) Hz: \(String(describing: measured))")
        }
        print("named ears: \(named.count) answers, \(otherEar.count) catch trials in the other ear, flags \(status.flags.map(\.rawValue))")
        #expect(try daemon.stop() == 0)
    }

    /// A listener who never answers and one with 30 % false alarms, pressed at random times
    /// between the tones, are flagged through the terminal; the loudest tone stays under the
    /// ceiling in force. (One who says yes to everything is flagged in the daemon's session
    /// with a stepped clock, HearingTestSessionTests, and in the procedure, ProcedureTests.)
    @Test(.runningLimit(minutes: 8)) func unreliableListenersAreFlagged() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let ceiling = try daemon.status().ceilingDBFS ?? 0

        let (never, neverStatus) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--ear", "right", "--frequencies", "1000", "--seed", "4"], listener: ["mode": "never"])
        #expect(neverStatus.flags.contains(.noResponseAnywhere), "never answers: \(neverStatus.flags)")
        #expect(neverStatus.frequencies.first?.status == .noResponse)
        #expect(never.peakDBFS <= ceiling - 1 + 0.01, "the loudest tone peaked at \(never.peakDBFS) dBFS, the ceiling is \(ceiling)")
        #expect(never.presses.isEmpty)

        let (guesser, guesserStatus) = try Self.takeHearingTest(
            daemon: daemon, arguments: ["--ear", "right", "--frequencies", "1000", "--seed", "5"],
            listener: ["thresholds": ["right": ["1000": 30.0, "2000": 30.0]], "falseAlarm": 0.3, "falseAlarmEverySeconds": 1.5, "seed": 9])
        #expect(guesserStatus.flags.contains(.falseAlarms), "30 % false alarms: \(guesserStatus.flags), \(guesser.presses.count) presses")
        print(
            "flags: never \(neverStatus.flags.map(\.rawValue)) "
                + "(loudest \(never.peakDBFS) dBFS, ceiling \(ceiling)); 30 % false alarms \(guesserStatus.flags.map(\.rawValue)) (\(guesser.presses.count) presses)"
        )
        #expect(try daemon.stop() == 0)
    }

    /// Noise at the microphone pauses the test and names the band; quiet resumes it.
    @Test(.runningLimit(minutes: 3)) func aLoudRoomPausesTheTest() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let start = try daemon.ribbitd(["status"])
        #expect(start.status == 0)
        let request = ControlRequest.hearingTestStart(try HearingTestRequest(ears: [.right], frequenciesHz: [1000], seed: 1))
        let socket = daemon.environment["XDG_RUNTIME_DIR"]! + "/ribbit/ribbitd.sock"
        // The test runs while this connection (its owner) stays open.
        let owner = try DaemonConnection(socketPath: socket).hold(request)
        defer { owner.close() }
        #expect(try daemon.wait(until: { $0.hearingTest?.state == .running }))
        // `status` says a test holds the output, not "processing".
        let during = try daemon.ribbitd(["status"])
        #expect(during.stdout.contains("output        a hearing test's tones (the hearing aid is off until it ends)"), "\(during.stdout)")
        #expect(
            during.stdout.contains("\nhearing test  ") && during.stdout.contains(" steps done")
                && during.stdout.contains("`ribbitd hearing-test --stop`"), "\(during.stdout)")
        // White noise at -30 dBFS: about 55 dB SPL in the 500 Hz band through the uncalibrated 100
        // dB SPL, played until the test has paused for it.
        let probe = try Probe(server: server, signal: "noise", levelDBFS: -30, seconds: 60)
        var paused: HearingTestStatus?
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, paused == nil {
            if let test = try daemon.status().hearingTest, test.state == .pausedForNoise { paused = test }
            usleep(50_000)
        }
        probe.cancel()
        #expect(paused != nil, "the test did not pause in noise")
        if let noise = paused?.noise {
            #expect(noise.loudBandHz != nil && (noise.levelDBSPL ?? 0) > (noise.limitDBSPL ?? 200), "\(noise)")
        }
        var resumed = false
        let quietDeadline = Date().addingTimeInterval(30)
        while Date() < quietDeadline, !resumed {
            resumed = try daemon.status().hearingTest?.state == .running
            usleep(100_000)
        }
        #expect(resumed, "the test did not go on once the room was quiet")
        print(
            "noise pause: \(paused.map { "\($0.noise?.loudBandHz ?? 0) Hz band \(String(format: "%.1f", $0.noise?.levelDBSPL ?? 0)) dB SPL over \($0.noise?.limitDBSPL ?? 0)" } ?? "none")"
        )
        #expect(try ControlClient.send(.hearingTestStop, socketPath: socket).ok)
        #expect(try daemon.stop() == 0)
    }

    /// Consumer headphones' biological calibration (`ribbitd audiogram reference`) moves every
    /// tone by the reference listener's threshold: the same presentation, 10 dB louder at 1 kHz
    /// after a reference of 10 dB HL there, measured at ribbit's output.
    @Test(.runningLimit(minutes: 3)) func theBiologicalCalibrationMovesTheLevels() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let socket = daemon.environment["XDG_RUNTIME_DIR"]! + "/ribbit/ribbitd.sock"
        /// The first tone's level (dBFS, its flat part) in the right ear.
        func firstToneDBFS() throws -> Double {
            let request = ControlRequest.hearingTestStart(try HearingTestRequest(ears: [.right], frequenciesHz: [1000], seed: 2))
            // Recording before the test starts: its first tone comes 1-3 s later.
            let probe = try Probe(server: server, signal: "silence", levelDBFS: -100, seconds: 9)
            try probe.waitUntilPlaying()
            let owner = try DaemonConnection(socketPath: socket).hold(request)
            defer { owner.close() }
            let recording = try probe.finish()
            _ = try ControlClient.send(.hearingTestStop, socketPath: socket)
            let right = recording.recorded[1].map(Double.init)
            let onset = try #require(right.firstIndex { abs($0) > 1e-7 }, "no tone in 9 s")
            // 100-175 ms in (past the 25 ms ramp, before the fall): the median level of fifteen
            // 5 ms blocks (five cycles each), so a period an xrun left silent or repeated in the
            // recording spoils two blocks at most, not the reading.
            let blocks = stride(from: onset + 4800, to: onset + 8400, by: 240).map { start in
                10 * log10(2 * right[start..<(start + 240)].reduce(0) { $0 + $1 * $1 } / 240)
            }
            return blocks.sorted()[blocks.count / 2]
        }
        let plain = try firstToneDBFS()
        try HearingReference.save([1000: 10], test: 1, date: "2026-11-24T03:00:00Z", paths: RibbitPaths(environment: daemon.environment))
        let calibrated = try firstToneDBFS()
        // 20 dB HL at 1 kHz through the TDH-39 starting values (7 dB) and 100 dB SPL at 0 dBFS.
        #expect(abs(plain - (20 + 7 - 100)) < 0.1, "\(plain) dBFS")
        #expect(abs(calibrated - plain - 10) < 0.1, "\(plain) -> \(calibrated) dBFS")
        print(
            String(format: "biological calibration: the first tone %.2f -> %.2f dBFS with a 10 dB HL reference at 1 kHz", plain, calibrated)
        )
        #expect(try daemon.stop() == 0)
    }
}
