import Glibc
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSignals

/// The test box's instruments: tone levels, distortion, band levels, envelopes and the
/// speech-like test signal. Levels in dBFS are sine-referenced, as `Calibration` defines them:
/// a sine of peak 1 is 0 dBFS, so any signal's level is 10 log10(2 * mean square).
public enum VerifyAnalysis {
    /// The peak amplitude of the component at `frequencyHz`: a Hann-weighted projection on
    /// cos and sin, 2 |sum w x e^(-i w n)| / sum w (exact for a sine at that frequency over many
    /// periods; neighbours more than two bins away leak below -30 dB).
    public static func amplitude(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double {
        let n = x.count
        guard n > 1 else { return 0 }
        var re = 0.0, im = 0.0, weights = 0.0
        let omega = 2 * Double.pi * frequencyHz / sampleRate
        let start = x.startIndex
        for i in 0..<n {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1))
            let v = Double(x[start + i]) * w
            re += v * cos(omega * Double(i))
            im += v * sin(omega * Double(i))
            weights += w
        }
        return 2 * (re * re + im * im).squareRoot() / weights
    }

    /// Total harmonic distortion in percent: 100 sqrt(A2^2 + ... + A5^2) / A1, harmonics above
    /// Nyquist left out. nil when there is no fundamental.
    public static func thdPercent(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double? {
        let fundamental = amplitude(x, frequencyHz: frequencyHz, sampleRate: sampleRate)
        guard fundamental > 1e-12 else { return nil }
        var power = 0.0
        for k in 2...5 where Double(k) * frequencyHz < sampleRate / 2 {
            let a = amplitude(x, frequencyHz: Double(k) * frequencyHz, sampleRate: sampleRate)
            power += a * a
        }
        return 100 * power.squareRoot() / fundamental
    }

    /// Sine-referenced level in dBFS (10 log10(2 mean square)); nil for digital silence.
    public static func levelDBFS(_ x: ArraySlice<Float>) -> Double? {
        guard !x.isEmpty else { return nil }
        let meanSquare = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        return meanSquare > 0 ? 10 * log10(2 * meanSquare) : nil
    }

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
        stride(from: x.startIndex, to: x.endIndex - window + 1, by: window).map { levelDBFS(x[$0..<($0 + window)]) ?? -300 }
    }

    // MARK: Band levels

    /// Long-term one-third-octave band levels (sine-referenced dBFS) centred on each frequency
    /// (edges f 2^(+-1/6)): Welch's method with a 4096-point Hann window and half overlap, the
    /// power of the bins inside the edges. A band holding no bin gets the nearest bin.
    public static func thirdOctaveLevelsDBFS(_ x: ArraySlice<Float>, centresHz: [Double], sampleRate: Double) -> [Double?] {
        let n = 4096
        guard x.count >= n else { return centresHz.map { _ in nil } }
        let fft = RealFFT(length: n, measure: false)
        let input = RealFFT.allocateReal(n), output = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(input)
            RealFFT.free(output)
        }
        let window = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n)) }
        let windowPower = window.reduce(0) { $0 + $1 * $1 }
        var power = [Double](repeating: 0, count: fft.complexCount)
        var frames = 0
        var start = x.startIndex
        while start + n <= x.endIndex {
            for i in 0..<n { input[i] = Float(Double(x[start + i]) * window[i]) }
            fft.forward(input, output)
            for k in 0..<fft.complexCount {
                let re = Double(output[2 * k]), im = Double(output[2 * k + 1])
                power[k] += re * re + im * im
            }
            frames += 1
            start += n / 2
        }
        // Mean square of the part of x in bins k1...k2 (one-sided, so twice the bin power).
        let scale = 2 / (Double(frames) * Double(n) * windowPower)
        let binHz = sampleRate / Double(n)
        return centresHz.map { fc in
            let low = fc * pow(2, -1.0 / 6), high = fc * pow(2, 1.0 / 6)
            var k1 = Int((low / binHz).rounded(.up)), k2 = Int((high / binHz).rounded(.down))
            if k2 < k1 { (k1, k2) = (Int((fc / binHz).rounded()), Int((fc / binHz).rounded())) }
            k1 = max(1, k1)
            k2 = min(fft.complexCount - 2, k2)
            guard k1 <= k2 else { return nil }
            let meanSquare = power[k1...k2].reduce(0, +) * scale
            return meanSquare > 0 ? 10 * log10(2 * meanSquare) : nil
        }
    }

    // MARK: The speech-like test signal

    /// `SpeechLikeSignal.generate`: the signal the fitting calibrates the detectors with (another seed).
    public static func speechLikeSignal(count: Int, sampleRate: Double, levelDBFS: Double, seed: UInt64) -> [Float] {
        SpeechLikeSignal.generate(count: count, sampleRate: sampleRate, levelDBFS: levelDBFS, seed: seed)
    }
}
