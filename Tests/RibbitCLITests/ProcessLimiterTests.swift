import Foundation
import RibbitAudioFile
import RibbitDSP
import RibbitSignals
import RibbitTestSupport
import Testing

/// `ribbitd process` on input far too loud for its fitting: the ceiling holds on every sample,
/// and the share of samples the limiter acted on is a share (it once counted the engine's tail
/// against the samples written and said 100.66 %).
@Suite struct ProcessLimiterTests {
    /// +40 dB at every frequency under a -6 dBFS ceiling: 0 dBFS noise would come out near
    /// +35 dBFS, so the limiter acts on almost every sample.
    static let loudFitting = """
        RIBBIT-RX 1
        name: Loud test fitting
        env: test
        rule: explicit
        gain-left: 250=40 500=40 1000=40 2000=40 4000=40 8000=40
        gain-right: 250=40 500=40 1000=40 2000=40 4000=40 8000=40
        lowpass: none
        max-output: -6

        """
    static let ceiling = Float(pow(10, -6.0 / 20))

    @Test(arguments: [false, true])
    func loudNoiseStaysUnderTheCeilingAndTheShareIsAtMostAll(keepLatency: Bool) throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rxPath = folder.appendingPathComponent("loud.rx").path
        try Data(Self.loudFitting.utf8).write(to: URL(fileURLWithPath: rxPath))
        // 0 dBFS white noise, 2 s; 96000 frames is not a multiple of process's 4096-frame block.
        let input = folder.appendingPathComponent("noise.wav").path
        let output = folder.appendingPathComponent("out.wav").path
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2))
        try writer.write(channels: [
            Signals.uniformNoise(count: 96000, peak: 1, seed: 7), Signals.uniformNoise(count: 96000, peak: 1, seed: 8),
        ])
        try writer.close()

        let result = try Ribbitd.run(["process", input, output, "--rx", rxPath] + (keepLatency ? ["--keep-latency"] : []))
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("the limiter acted on") }, "\(result.stdout)")
        let percent = try #require(Double(line.components(separatedBy: "acted on ")[1].prefix { $0 != " " }), "\(line)")
        #expect(percent <= 100, "\(line)")
        #expect(percent > 90, "\(line)")

        // Float WAV in, float WAV out: the samples as the engine made them, no rounding.
        let channels = try AudioFileReader(path: output).readAll()
        #expect(channels.count == 2)
        for y in channels {
            #expect(y.count == 96000 + (keepLatency ? 96 : 0))
            let peak = y.map(abs).max() ?? 0
            #expect(peak <= Self.ceiling, "peak \(peak) above the ceiling \(Self.ceiling)")
            #expect(peak > Self.ceiling * 0.7, "peak \(peak): the output should reach near the ceiling")
        }
    }
}
