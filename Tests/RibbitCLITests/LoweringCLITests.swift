import Foundation
import RibbitAudioFile
import RibbitDSP
import RibbitSignals
import RibbitTestSupport
import Testing

/// Frequency lowering through the built binary: `ribbitd process` lowers the ear the
/// prescription lowers and leaves the other, and `rx show` says it, as text and JSON.
@Suite struct LoweringCLITests {
    static let fitting = """
        RIBBIT-RX 2
        name: Lowered right ear
        env: quiet
        rule: camfit
        left: 500=20 1000=25 2000=40 4000=80 8000=90
        right: 500=20 1000=25 2000=40 4000=80 8000=90
        lowering-right: 2500 2

        """

    @Test func processLowersTheRightEarAndRxShowSaysSo() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rxPath = folder.appendingPathComponent("lowered.rx").path
        try Data(Self.fitting.utf8).write(to: URL(fileURLWithPath: rxPath))
        // A 6 kHz tone at -46 dBFS (54 dB SPL uncalibrated) in both channels, 1 s.
        let input = folder.appendingPathComponent("tone.wav").path
        let output = folder.appendingPathComponent("out.wav").path
        let tone = Signals.sine(count: 48000, frequencyHz: 6000, sampleRate: 48000, amplitude: 0.005)
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2))
        try writer.write(channels: [tone, tone])
        try writer.close()
        let result = try Ribbitd.run(["process", input, output, "--rx", rxPath])
        #expect(result.status == 0, "\(result.stderr)")
        let channels = try AudioFileReader(path: output).readAll()
        func strongestHz(_ y: [Float]) -> Double {
            let n = 16384
            let fft = RealFFT(length: n, planning: .estimate)
            let x = RealFFT.allocateReal(n)
            let spectrum = RealFFT.allocateComplex(n / 2 + 1)
            defer {
                RealFFT.free(x)
                RealFFT.free(spectrum)
            }
            for t in 0..<n { x[t] = y[24000 + t] * Float(0.5 - 0.5 * cos(2 * Double.pi * Double(t) / Double(n))) }
            fft.forward(x, spectrum)
            let k = (1..<(n / 2)).max { hypot(spectrum[2 * $0], spectrum[2 * $0 + 1]) < hypot(spectrum[2 * $1], spectrum[2 * $1 + 1]) }!
            return Double(k) * 48000 / Double(n)
        }
        let (left, right) = (strongestHz(channels[0]), strongestHz(channels[1]))
        let mapped = 2500 * (6000.0 / 2500).squareRoot()
        print(String(format: "process: 6000 Hz comes out at %.1f Hz left, %.1f Hz right (the curve: %.1f Hz)", left, right, mapped))
        #expect(abs(left - 6000) < 10)
        #expect(abs(right - mapped) <= 187.5)

        let shown = try Ribbitd.run(["rx", "show", rxPath])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(
            shown.stdout.contains(
                "  lowering     right above 2500 Hz, ratio 2 (Hz: 3000 -> 2739, 4000 -> 3162, 6000 -> 3873, 8000 -> 4472)"),
            "\(shown.stdout)")
        let json = try Ribbitd.run(["rx", "show", "--json", rxPath])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let lowering = try #require(object["lowering"] as? [String: [String: Any]])
        #expect(lowering.keys.sorted() == ["right"])
        #expect(lowering["right"]?["cutoffHz"] as? Double == 2500 && lowering["right"]?["ratio"] as? Double == 2)
        #expect((lowering["right"]?["mappedHz"] as? [String: Double])?["6000"] == 3873)
        // Off by default: no `lowering` at all.
        let plain = folder.appendingPathComponent("plain.rx").path
        try Data(Self.fitting.replacingOccurrences(of: "lowering-right: 2500 2\n", with: "").utf8).write(to: URL(fileURLWithPath: plain))
        let off = try Ribbitd.run(["rx", "show", "--json", plain])
        #expect(try #require(try JSONSerialization.jsonObject(with: Data(off.stdout.utf8)) as? [String: Any])["lowering"] == nil)
        #expect(try !Ribbitd.run(["rx", "show", plain]).stdout.contains("\n  lowering "))
    }
}
