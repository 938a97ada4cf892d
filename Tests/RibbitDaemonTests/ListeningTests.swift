import Foundation
import Glibc
import RibbitControl
import RibbitTestSupport
import Testing

/// The wearer's volume and programs on the real daemon and a dummy JACK server: each change is a
/// crossfade (no click), the volume moves the level by what it says and stays in its range,
/// bad requests change nothing, both survive a restart, and the RT thread stays clean.
extension DaemonTests {
    /// The RMS of `samples[range]` in dB.
    static func rmsDB(_ samples: [Float], _ range: Range<Int>) -> Double {
        let slice = samples[range].map { Double($0) * Double($0) }
        return 10 * log10(slice.reduce(0, +) / Double(slice.count))
    }

    @Test func volumeAndProgramCrossfadeStayInRangeAndAreRemembered() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], audit: true,
            directory: directory)
        try daemon.waitUntilProcessing()
        let status = try daemon.status()
        let listening = try #require(status.listening)
        #expect(listening.program == .quiet && listening.chosenBy == .prescription && listening.volumeDB == 0)
        #expect(listening.compressing && listening.bands == 10, "camfit compresses in 10 bands: \(listening)")

        // A steady 1 kHz tone at 60 dB SPL (uncalibrated: -40 dBFS); 1.2 s after it plays, the
        // volume goes up by 6 dB; 1.5 s later, the music program (slow detectors, no expansion)
        // takes over. Where each change falls in the recording is read from the probe's clock.
        let rate = 48000
        let probe = try Probe(server: server, signal: "sine:1000", levelDBFS: -40 - 10 * log10(2.0), seconds: 6)
        try probe.waitUntilPlaying()
        usleep(1_200_000)
        let volumeAsked = Int(MonotonicSeconds.now() * 1e9)
        let up = try daemon.ribbitd(["volume", "+6"])
        let volumeDone = Int(MonotonicSeconds.now() * 1e9)
        #expect(up.status == 0 && up.stdout.contains("volume +6 dB (-10 to +10)"), "\(up.stdout)\(up.stderr)")
        usleep(1_500_000)
        let musicAsked = Int(MonotonicSeconds.now() * 1e9)
        let music = try daemon.ribbitd(["program", "music"])
        #expect(music.status == 0 && music.stdout.contains("program music (your choice)"), "\(music.stdout)\(music.stderr)")
        let recording = try probe.finish(besides: daemon)
        let left = recording.recorded[0]

        // The level up to 0.7 s before the volume was asked against 0.7 s ending when the
        // program was asked, starting at least 0.3 s after the volume's reply (its crossfade).
        let beforeEnd = recording.frame(atNanoseconds: volumeAsked)
        let afterStart = recording.frame(atNanoseconds: volumeDone) + Int(0.3 * Double(rate))
        let afterEnd = recording.frame(atNanoseconds: musicAsked)
        let window = Int(0.7 * Double(rate))
        try #require(beforeEnd >= window + rate / 4 && afterEnd - afterStart >= window / 2, "frames \(beforeEnd) \(afterStart) \(afterEnd)")
        let before = Self.rmsDB(left, (beforeEnd - window)..<beforeEnd)
        let after = Self.rmsDB(left, max(afterStart, afterEnd - window)..<afterEnd)
        #expect(abs(after - before - 6) < 1, "the volume moved the level by \(after - before) dB, not 6")
        // No click: no step between neighbouring samples beyond the loudest sine's steepest,
        // from 0.5 s on (the tone's own onset overshoots while the detectors attack).
        let settled = Array(left[(rate / 2)...])
        let peak = Double(settled.map(abs).max() ?? 0)
        // An xrun breaks the probe's own signal (a discontinuity the compressor's high bands,
        // quiet until then, amplify); that is JACK's click, not the crossfade's (make test saw
        // one once, at the moment the new program was built): the steps within four periods of
        // one are not judged, every other one is.
        let (steepest, at, judged) = recording.steepestStep(channel: 0, from: rate / 2, margin: 4 * server.period)
        #expect(judged > settled.count / 2, "\(recording.xruns) xruns left \(judged) of \(settled.count) steps to judge")
        #expect(
            steepest <= Probe.sineSlope(amplitude: peak, hz: 1000, rate: Double(rate)) * 1.05,
            "a step of \(steepest) at \(Double(at) / Double(rate)) s (peak \(peak), xruns \(recording.xruns)): \(left[max(0, at - 4)...min(left.count - 1, at + 4)])"
        )

        // The range holds; nonsense changes nothing.
        #expect(try daemon.ribbitd(["volume", "+20"]).stdout.contains("volume +10 dB (-10 to +10); at the top"))
        let nonsense = try daemon.ribbitd(["volume", "loud"])
        #expect(nonsense.status == 64 && nonsense.stderr.contains("not a volume"), "\(nonsense.stderr)")
        let noProgram = try daemon.ribbitd(["program", "party"])
        #expect(noProgram.status == 64, "\(noProgram.stderr)")
        let kept = try #require(try daemon.status().listening)
        #expect(kept.volumeDB == 10 && kept.program == .music)
        #expect(try daemon.ribbitd(["status"]).stdout.contains("volume        +10 dB (-10 to +10)"))

        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 4 * rate / 256)

        // Remembered across a restart; a new prescription starts again from its own program at 0 dB.
        let next = try DaemonUnderTest(server: server, directory: directory)
        try next.waitUntilProcessing()
        let again = try #require(try next.status().listening)
        #expect(again.volumeDB == 10 && again.program == .music && again.chosenBy == .wearer, "\(again)")
        // ... and it plays: the new audio process starts at +10, 10 dB over the same tone at 0.
        let replay = try Probe(server: server, signal: "sine:1000", levelDBFS: -40 - 10 * log10(2.0), seconds: 4)
        try replay.waitUntilPlaying()
        usleep(1_500_000)
        let zeroAsked = Int(MonotonicSeconds.now() * 1e9)
        #expect(try next.ribbitd(["volume", "0"]).status == 0)
        let zeroDone = Int(MonotonicSeconds.now() * 1e9)
        let heard = try replay.finish()
        let (tenEnd, zeroStart) = (heard.frame(atNanoseconds: zeroAsked), heard.frame(atNanoseconds: zeroDone) + Int(0.3 * Double(rate)))
        try #require(tenEnd >= window && zeroStart + window / 2 <= heard.recorded[0].count, "frames \(tenEnd) \(zeroStart)")
        let atTen = Self.rmsDB(heard.recorded[0], (tenEnd - window)..<tenEnd)
        let atZero = Self.rmsDB(heard.recorded[0], zeroStart..<min(zeroStart + window, heard.recorded[0].count))
        #expect(abs(atTen - atZero - 10) < 1, "after the restart +10 played \(atTen - atZero) dB over 0")
        #expect(try next.ribbitd(["load", TestPaths.prescription("camfit-ucl.rx").path]).status == 0)
        let fresh = try #require(try next.status().listening)
        #expect(fresh.volumeDB == 0 && fresh.chosenBy == .prescription, "\(fresh)")
        #expect(try next.stop() == 0)
    }

    /// The volume belongs to the prescription it was set for: `ribbitd use` of another one
    /// while the daemon is down starts that one at 0 dB, and a remembered volume never plays
    /// outside the active prescription's `volume-range`, however the file says it.
    @Test func theRememberedVolumeBelongsToItsPrescriptionAndStaysInItsRange() throws {
        let server = try JackTestServer(period: 256)
        let directory = try TestPaths.temporaryDirectory()
        let narrow = directory.appendingPathComponent("narrow.rx")
        try String(contentsOf: TestPaths.prescription("camfit-sloping.rx"), encoding: .utf8)
            .replacingOccurrences(of: "name: ", with: "volume-range: 6\nname: Narrow ")
            .write(to: narrow, atomically: true, encoding: .utf8)
        var daemon = try DaemonUnderTest(server: server, arguments: ["--no-connect", "--rx", narrow.path], directory: directory)
        try daemon.waitUntilProcessing()
        #expect(try daemon.ribbitd(["load", TestPaths.prescription("mild-presbycusis.rx").path]).status == 0)
        #expect(try daemon.ribbitd(["volume", "+9"]).status == 0)
        #expect(try daemon.status().listening?.volumeDB == 9)
        #expect(try daemon.stop() == 0)

        // While it is down, the wearer picks the narrow one again: it starts at its own 0 dB.
        let use = try daemon.ribbitd(["use", "1"])
        #expect(use.status == 0, "\(use.stderr)")
        daemon = try DaemonUnderTest(server: server, directory: directory)
        try daemon.waitUntilProcessing()
        var listening = try #require(try daemon.status().listening)
        #expect(listening.volumeDB == 0 && listening.volumeMaxDB == 6, "\(listening)")
        #expect(try daemon.ribbitd(["volume", "+5"]).status == 0)
        #expect(try daemon.stop() == 0)

        // A damaged or edited file asks for far more: the prescription's range holds.
        let file = directory.appendingPathComponent("state/ribbit/listening.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("\"volumeDB\":5") && text.contains("\"prescription\""), "\(text)")
        for asked in ["1e308", "20", "-300"] {
            try text.replacingOccurrences(of: "\"volumeDB\":5", with: "\"volumeDB\":\(asked)").write(
                to: file, atomically: true, encoding: .utf8)
            daemon = try DaemonUnderTest(server: server, directory: directory)
            try daemon.waitUntilProcessing()
            listening = try #require(try daemon.status().listening)
            #expect(listening.volumeDB == (asked.hasPrefix("-") ? -6 : 6), "\(asked): \(listening)")
            #expect(try daemon.stop() == 0)
        }
    }

    /// `program auto` on live sound: steady noise at about 72 dB SPL (uncalibrated) makes it
    /// pick noisy within the classifier's window and hold time, status says why, and the RT
    /// thread stays clean while the compressor meters the bands for it.
    @Test func theAutomaticProgramPicksNoisyInSteadyNoise() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(
            server: server, arguments: ["--no-connect", "--rx", TestPaths.prescription("camfit-sloping.rx").path], audit: true)
        try daemon.waitUntilProcessing()
        let auto = try daemon.ribbitd(["program", "auto"])
        #expect(auto.status == 0 && auto.stdout.contains("program quiet (picked automatically"), "\(auto.stdout)\(auto.stderr)")
        // The classifier's window (4 s) and hold (3 s) are counted in audio: so is the test, in
        // the probe's frames up to the moment status first said noisy.
        let probe = try Probe(server: server, signal: "noise", levelDBFS: -28, seconds: 16)
        try probe.waitUntilPlaying()
        var picked: DaemonStatus.Listening?
        var seen = 0
        let start = Date()
        while Date().timeIntervalSince(start) < 30 {
            usleep(100_000)
            let listening = try daemon.status().listening
            if listening?.program == .noisy {
                picked = listening
                seen = Int(MonotonicSeconds.now() * 1e9)
                break
            }
        }
        // What the stages do (status `activity`), once noisy plays in the steady noise: the
        // bands' gain follows speech, not the noise, and noise reduction turns the noise down.
        var acting: (activity: DaemonStatus.Activity, text: String, nanoseconds: Int)?
        var last: DaemonStatus.Activity?
        while picked != nil, acting == nil, Date().timeIntervalSince(start) < 40 {
            usleep(100_000)
            last = try daemon.status().listening?.activity
            if let activity = last, activity.followingSpeech.contains(where: { $0 >= 0.5 }),
                let reduction = activity.noiseReductionDB, reduction.contains(where: { $0 <= -1 })
            {
                acting = (activity, try daemon.ribbitd(["status"]).stdout, Int(MonotonicSeconds.now() * 1e9))
            }
        }
        let recording = try probe.finish(besides: daemon)
        let noisy = try #require(picked, "auto did not pick noisy within 30 s of steady noise")
        let heard = Double(recording.frame(atNanoseconds: seen)) / 48000
        #expect(heard < 8, "auto picked noisy after \(heard) s of noise (window 4 s, hold 3 s)")
        #expect(noisy.chosenBy == .auto && noisy.reason?.hasPrefix("noisy: ") == true, "\(noisy)")
        #expect(noisy.noiseReduction == 1, "the noisy program brings noise reduction")
        let (activity, text, when) = try #require(
            acting, "status never said the noisy program's stages acted on the noise: \(String(describing: last))")
        print("activity in the noisy program: \(activity)")
        // Seen while the noise still played (the probe's frames, not the scheduler).
        #expect(recording.callbacks.contains { $0.nanoseconds >= when }, "the stages were seen acting only after the noise ended")
        #expect(activity.inputDBSPL.count == activity.bandCentresHz.count && activity.outputLimitDB.allSatisfy { $0 <= 0 })
        #expect(text.contains("program       noisy (picked automatically: noisy: "))
        #expect(text.contains("\nsteady noise  in ") && text.contains("\nnoise         reduced by up to "), "\(text)")
        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 1)
    }
}
