import Glibc
import RibbitDSP
import RibbitFitting
import RibbitMeasure
import RibbitPrescription
import RibbitSignals

/// The test box's own figures: the high-frequency average, the sweep, attack and release
/// settling, envelopes and the speech-like test signal. Tone levels, distortion and band levels
/// come from the measurement kit (RibbitMeasure), as the dump's do. Levels in dBFS are
/// sine-referenced, as `Calibration` defines them: a sine of peak 1 is 0 dBFS.
public enum VerifyAnalysis {
    /// dB of an amplitude; nil for 0.
    public static func db(_ amplitude: Double) -> Double? { amplitude > 0 ? 20 * log10(amplitude) : nil }

    /// The mean over present values (HFA: 1000, 1600, 2500 Hz); nil when any is missing.
    public static func highFrequencyAverage(_ points: [FrequencyPoint]) -> Double? {
        let values = hfaFrequenciesHz.map { hz in points.first { $0.hz == hz }?.db }
        guard values.allSatisfy({ $0 != nil }) else { return nil }
        return values.map { $0! }.reduce(0, +) / Double(values.count)
    }

    public static let hfaFrequenciesHz: [Double] = [1000, 1600, 2500]

    /// ISO 266 one-third-octave frequencies from 200 Hz to 8 kHz (the sweep).
    public static let sweepHz: [Double] = [
        200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600, 2000, 2500, 3150, 4000, 5000, 6300, 8000,
    ]

    /// Settling time (ms) of an envelope in dB sampled every `stepMs` from `start`: the time until
    /// it stays within `withinDB` of its final level (the mean of its last `tail` values), as
    /// ANSI S3.22 defines attack (3 dB) and release (4 dB).
    public static func settlingMs(_ envelopeDB: [Double], from start: Int, stepMs: Double, withinDB: Double, tail: Int = 20) -> Double {
        let tail = min(tail, envelopeDB.count - start)
        let final = envelopeDB[(envelopeDB.count - tail)...].reduce(0, +) / Double(tail)
        var last = start
        for i in start..<envelopeDB.count where abs(envelopeDB[i] - final) > withinDB { last = i + 1 }
        return Double(last - start) * stepMs
    }

    /// Envelope in dB (sine-referenced dBFS) of consecutive windows of `window` samples.
    public static func envelopeDB(_ x: ArraySlice<Float>, window: Int) -> [Double] {
        stride(from: x.startIndex, to: x.endIndex - window + 1, by: window).map { Levels.dBFS(x[$0..<($0 + window)]) ?? -300 }
    }

    // MARK: The speech-like test signal

    /// `SpeechLikeSignal.generate`: the signal the fitting calibrates the detectors with (another seed).
    public static func speechLikeSignal(count: Int, sampleRate: Double, levelDBFS: Double, seed: UInt64) -> [Float] {
        SpeechLikeSignal.generate(count: count, sampleRate: sampleRate, levelDBFS: levelDBFS, seed: seed)
    }
}
