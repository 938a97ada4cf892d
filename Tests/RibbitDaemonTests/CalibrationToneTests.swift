import Foundation
import Glibc
import RibbitControl
import RibbitSettings
import RibbitTestSupport
import Testing

/// The calibration tone on the real daemon and a dummy JACK server: what comes out, how it
/// starts and stops, what the microphone reading stores, and that the RT thread stays clean.
extension CalibrationDaemonTests {
    @Test func theCalibrationToneIsClampedRampedAndStopsByItself() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, audit: true)
        try daemon.waitUntilProcessing()
        let rate = 48000.0
        let hz = 1000.0
        // The probe plays a quiet 250 Hz sine (peak 0.02) that the hearing aid passes through
        // before and after the tone; its steps are far smaller than the tone's.
        // The command refuses a loud level; the daemon clamps one sent to it directly: asked
        // for -3 dBFS, it plays -20 (peak 0.1), under the default ceiling (-1).
        let loud = try daemon.ribbitd(["calibrate", "--play", "--ear", "left", "--level", "-10"])
        #expect(loud.status == 64 && loud.stderr.contains("--level is from -80 to -20 dBFS"), "\(loud.stderr)")
        // Long enough for the 2 s tone however late it is asked for on a loaded machine.
        let probe = try Probe(server: server, signal: "sine:250", levelDBFS: -34 - 10 * log10(2.0), seconds: 6)
        try probe.waitUntilPlaying()
        usleep(500_000)
        let missedBefore = try daemon.status().jack?.missedCycles ?? 0
        let reply = try ControlClient.send(
            .tone(.play(try ToneSignal(frequencyHz: hz, levelDBFS: -3, ear: .left, timing: .steady(seconds: 2)))),
            socketPath: RibbitPaths(environment: daemon.environment).socketPath)
        #expect(reply.ok && reply.status?.tone?.levelDBFS == -20, "\(reply)")
        let recording = try probe.finish(besides: daemon)
        let (left, right) = (recording.recorded[0].map(Double.init), recording.recorded[1].map(Double.init))
        let amplitude = 0.1
        // The tone: where it sounds (above half its amplitude), and its middle.
        // (Not within four periods of an xrun: JACK may hand on a stale buffer there.)
        let margin = 4 * server.period
        let loudSamples = left.indices.filter { abs(left[$0]) > amplitude / 2 && !recording.isDisturbed($0, margin: margin) }
        let (first, last) = (try #require(loudSamples.first), try #require(loudSamples.last))
        #expect(first > Int(0.3 * rate), "the tone sounded before it was asked for")
        // The tone lasts 2 s of frames the audio process rendered: a cycle it missed inside it
        // (a loaded run missed 17 in a row) lets JACK's clock run on without it, so the span may
        // be longer by the missed frames, never shorter.
        let missed = (try daemon.status().jack?.missedCycles ?? 0) - missedBefore
        let missedInside = recording.disturbances.contains { $0 > first && $0 <= last } ? missed * server.period : 0
        let sounding = Double(last - first) / rate
        #expect(
            sounding > 2 - 0.05 && sounding < 2 + 0.05 + Double(missedInside) / rate,
            "the tone sounded \(sounding) s of 2 s; the audio process missed \(missed) cycles meanwhile, \(missedInside) frames inside it")
        // Level and frequency over the tone's middle, every pair of neighbouring samples with no
        // disturbance near (a period dropped, repeated or left silent moves both): the mean
        // square, and the rising zero crossings per second of pairs judged.
        let pairs = ((first + 4800)..<(last - 4800)).filter {
            !recording.isDisturbed($0, margin: margin) && !recording.isDisturbed($0 + 1, margin: margin)
        }
        #expect(pairs.count > Int(rate), "\(recording.xruns) xruns left \(pairs.count) frames of the tone to judge")
        let rms = (pairs.reduce(0) { $0 + left[$1] * left[$1] } / Double(max(pairs.count, 1))).squareRoot()
        let levelDBFS = 20 * log10(rms * 2.0.squareRoot())
        #expect(abs(levelDBFS - -20) < 0.05, "tone level \(levelDBFS) dBFS")
        let crossings = pairs.filter { left[$0] < 0 && left[$0 + 1] >= 0 }.count
        let measuredHz = Double(crossings) / (Double(max(pairs.count, 1)) / rate)
        #expect(abs(measuredHz - hz) < 2, "tone at \(measuredHz) Hz")
        // Never above the tone's clamp (nor the ceiling); no click anywhere (a step larger than
        // the sine's steepest is one); the right ear silent while the tone plays.
        let peak = left.map(abs).max() ?? 0
        #expect(peak <= amplitude * 1.0001, "peak \(peak)")
        // An xrun breaks the probe's own signal (JACK's click, not the tone's; a loaded CI run
        // once had 3, and a step in the probe's sine before the tone): the steps within four
        // periods of one are not judged, every other one is.
        let (steepest, at, judged) = recording.steepestStep(channel: 0, margin: margin)
        #expect(judged > left.count / 2, "\(recording.xruns) xruns left \(judged) of \(left.count) steps to judge")
        #expect(
            steepest <= Probe.sineSlope(amplitude: amplitude, hz: hz, rate: rate) * 1.02,
            "a step of \(steepest) at \(at) (tone \(first)...\(last)), xruns \(recording.xruns): \(left[max(0, at - 3)...min(left.count - 1, at + 3)])"
        )
        let rightDuringTone = (first...last).filter { !recording.isDisturbed($0, margin: margin) }.map { abs(right[$0]) }.max() ?? 1
        #expect(rightDuringTone < 1e-6, "the right ear got \(rightDuringTone)")
        // It stopped by itself after 2 s, and the hearing aid plays again afterwards.
        let after = Array(left[min(left.count, last + Int(0.3 * rate))...])
        #expect(after.count > Int(0.3 * rate), "the recording ended too soon after the tone")
        #expect((after.map(abs).max() ?? 0) > 0.015, "no sound after the tone: the hearing aid did not come back")
        #expect((right[(last + Int(0.3 * rate))...].map(abs).max() ?? 0) > 0.015)
        let status = try daemon.status()
        #expect(status.tone == nil)
        #expect(status.calibration?.profile == nil && status.calibration?.uncertaintyDB == CalibrationProfile.uncalibratedUncertaintyDB)

        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 3 * 48000 / 256)
    }

    /// The microphone: a "calibrator" (the probe's 1 kHz sine at -30 dBFS peak) read as 94 dB SPL
    /// gives 124 dB SPL at 0 dBFS; a meter reading of 83 dB SPL for a -20 dBFS tone gives 103 dB
    /// SPL at the left ear, and 80.5 at 4 kHz a response of -2.5 dB re 1 kHz. Both land in calibration.toml and the next daemon reports the profile.
    @Test func calibrateStoresWhatItMeasured() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let daemon = try DaemonUnderTest(server: server, directory: directory)
        try daemon.waitUntilProcessing()
        // Each probe plays until the command has listened (and is stopped then), however long a
        // loaded machine takes to start it.
        let probe = try Probe(server: server, signal: "sine:1000", levelDBFS: -30 - 10 * log10(2.0), seconds: 30)
        try probe.waitUntilPlaying()
        usleep(300_000)
        let mic = try daemon.ribbitd(["calibrate", "--microphone", "--calibrator", "94", "--profile", "test-set"])
        probe.cancel()
        #expect(mic.status == 0, "\(mic.stderr)")
        #expect(
            try daemon.ribbitd(["calibrate", "--reading", "83", "--ear", "left", "--level", "-20", "--profile", "test-set"]).status == 0)
        #expect(
            try daemon.ribbitd([
                "calibrate", "--reading", "80.5", "--ear", "left", "--level", "-20", "--frequency", "4000", "--profile", "test-set",
            ])
            .status == 0)
        let paths = RibbitPaths(environment: daemon.environment)
        let config = try DaemonConfig.load(paths: paths)
        let profile = try #require(config.calibrationProfile)
        #expect(profile.name == "test-set")
        #expect(abs(profile.inputDBSPL - 124) <= 0.1, "input \(profile.inputDBSPL)")
        #expect(profile.outputLeftDBSPL == 103)
        #expect(profile.outputRightDBSPL == CalibrationProfile.uncalibratedDBSPL)
        #expect(profile.responseLeft == [4000: -2.5])
        #expect(try daemon.stop() == 0)

        let next = try DaemonUnderTest(server: server, directory: directory)
        try next.waitUntilProcessing()
        let calibration = try #require(try next.status().calibration)
        #expect(calibration.profile == "test-set" && calibration.outputLeftDBSPL == 103 && calibration.uncertaintyDB == nil)
        #expect(
            try next.ribbitd(["status"]).stdout.contains("calibration   test-set (input 124 dB SPL, output 103 / 100 dB SPL at 0 dBFS)"))
        #expect(try next.stop() == 0)
    }

    /// The review's typos and slips: a meter reading of 100 typed as 10 (40 dB SPL at 0 dBFS),
    /// a response point far off, and `--microphone --calibrator 114` with the calibrator not on
    /// the microphone (the room's -46 dBFS would store 160 dB SPL). Each is refused in one line
    /// that says how far it is from the default, and nothing is stored; a real calibrator tone
    /// is still taken.
    @Test func calibrateRefusesWhatNoHeadphoneOrMicrophoneGives() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server)
        try daemon.waitUntilProcessing()
        let file = RibbitPaths(environment: daemon.environment).configDirectory + "/calibration.toml"

        let typo = try daemon.ribbitd(["calibrate", "--ear", "left", "--reading", "10", "--level", "-30"])
        #expect(typo.status == 65, "\(typo)")
        #expect(typo.stderr.contains("40.0 dB SPL at 0 dBFS, 60.0 dB below the uncalibrated default of 100.0"), "\(typo.stderr)")
        #expect(typo.stderr.contains("nothing stored") && typo.stderr.split(separator: "\n").count == 1, "\(typo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try daemon.ribbitd(["calibrate", "--ear", "left", "--reading", "70", "--level", "-30"]).status == 0)
        let stored = try String(contentsOfFile: file, encoding: .utf8)
        let response = try daemon.ribbitd(["calibrate", "--ear", "left", "--reading", "95", "--level", "-30", "--frequency", "4000"])
        #expect(response.status == 65 && response.stderr.contains("outside the -20 to +20 dB a headphone gives"), "\(response.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == stored)

        // The room, not a calibrator: pink-ish noise at -46 dBFS.
        let room = try Probe(server: server, signal: "noise", levelDBFS: -46, seconds: 30)
        try room.waitUntilPlaying()
        usleep(300_000)
        let noCalibrator = try daemon.ribbitd(["calibrate", "--microphone", "--calibrator", "114"])
        room.cancel()
        #expect(noCalibrator.status == 65, "\(noCalibrator)")
        #expect(noCalibrator.stderr.contains("no steady 1 kHz tone well above the room"), "\(noCalibrator.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == stored)

        // A calibrator's 94 dB SPL reading -20 dBFS (a sine of -23 dB RMS): 114 dB SPL at 0 dBFS.
        let calibrator = try Probe(server: server, signal: "sine:1000", levelDBFS: -20 - 10 * log10(2.0), seconds: 30)
        try calibrator.waitUntilPlaying()
        usleep(300_000)
        let taken = try daemon.ribbitd(["calibrate", "--microphone", "--calibrator", "94"])
        calibrator.cancel()
        #expect(taken.status == 0, "\(taken)")
        let profile = try #require(try DaemonConfig.load(paths: RibbitPaths(environment: daemon.environment)).calibrationProfile)
        #expect(abs(profile.inputDBSPL - 114) <= 0.2, "input \(profile.inputDBSPL)")
        #expect(try daemon.stop() == 0)

        // The next start logs the profile it uses and how far it is from the default.
        let next = try DaemonUnderTest(server: server, directory: daemon.directory)
        try next.waitUntilProcessing()
        #expect(next.log.contains("calibration profile headphones"), "\(next.log)")
        #expect(next.log.contains("dB from the uncalibrated 100.0"), "\(next.log)")
        #expect(try next.stop() == 0)
    }
}
