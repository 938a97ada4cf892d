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
        let meter = Process()
        meter.executableURL = DaemonUnderTest.binary
        meter.arguments = ["voice", "--json", "--duration", "4"]
        meter.environment = daemon.environment
        let output = Pipe()
        meter.standardOutput = output
        meter.standardError = Pipe()
        try meter.run()
        usleep(800_000)
        #expect(try daemon.status().voiceListeners == 1)
        let recording = try Probe.record(server: server, signal: "sine:200", levelDBFS: -30, seconds: 2)
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
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
        #expect(Double(pitched.count) >= 0.95 * Double(middle.count), "\(pitched.count) of \(middle.count) frames voiced at 200 Hz ±2 %")
        // The hearing aid played on: the probe heard ribbit's output during the tone.
        let played = recording.recorded[0].suffix(48000).map { abs($0) }.max() ?? 0
        #expect(played > 0.005, "no sound from the hearing aid while the voice was analysed")
        usleep(300_000)
        #expect(try daemon.status().voiceListeners == 0)
        print(
            String(
                format: "voice stream through the daemon: %d frames in %.2f s, level %.2f dBFS for -26.99, %d of %d frames at 200 Hz ±2 %%",
                frames.count, span, level, pitched.count, middle.count))
        #expect(try daemon.stop() == 0)
        let counts = try daemon.auditCounts()
        #expect(counts["callbacks", default: 0] >= 3 * 48000 / 256)
        for name in ["malloc", "calloc", "realloc", "free", "memalign", "pthread_mutex_lock", "syscall"] {
            #expect(counts[name] == 0, "\(name) was called \(counts[name] ?? -1) times on the RT thread")
        }
    }
}
