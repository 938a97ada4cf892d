import Glibc
import RibbitDSP

/// Offline measurements: levels, THD+N, and the magnitude response between two recordings.
public enum Analysis {
    public static func rms<C: Collection>(_ x: C) -> Double where C.Element == Float {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    public static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// THD+N of a sine of known frequency, in dB relative to the fundamental: the least-squares
    /// fit of a sin + b cos + dc at that frequency is removed; what remains is harmonics + noise.
    public static func thdPlusNoiseDB(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double {
        let omega = 2 * Double.pi * frequencyHz / sampleRate
        // Normal equations of the 3-parameter fit (sin, cos, 1).
        var m = [Double](repeating: 0, count: 9)
        var b = [Double](repeating: 0, count: 3)
        for (i, v) in x.enumerated() {
            let basis = [sin(omega * Double(i)), cos(omega * Double(i)), 1.0]
            for r in 0..<3 {
                b[r] += basis[r] * Double(v)
                for c in 0..<3 { m[r * 3 + c] += basis[r] * basis[c] }
            }
        }
        let coefficients = LinearPhaseFIR.solveSymmetricPositiveDefinite(m, b, n: 3)
        var residualPower = 0.0
        var fundamentalPower = 0.0
        for (i, v) in x.enumerated() {
            let fit = coefficients[0] * sin(omega * Double(i)) + coefficients[1] * cos(omega * Double(i))
            let residual = Double(v) - fit - coefficients[2]
            residualPower += residual * residual
            fundamentalPower += fit * fit
        }
        return 10 * log10(residualPower / fundamentalPower)
    }

    /// Power spectra of x and y averaged over Hann-windowed segments with 50 % overlap (Welch).
    public struct CrossSpectra {
        public let segmentLength: Int
        public let sampleRate: Double
        public let inputPower: [Double]
        public let outputPower: [Double]

        /// The magnitude response |H| = sqrt(Pyy / Pxx) in dB, with both spectra summed over the
        /// bins within +-1/24 octave of `frequencyHz`. For a linear time-invariant system and
        /// a broadband input this needs no alignment of x and y.
        public func gainDB(atHz frequencyHz: Double) -> Double {
            let band = bins(around: frequencyHz)
            return 10 * log10(outputPower[band].reduce(0, +) / inputPower[band].reduce(0, +))
        }

        /// The input's power around `frequencyHz` (same band as gainDB), in dB of arbitrary
        /// reference: for comparing bands with each other.
        public func inputPowerDB(atHz frequencyHz: Double) -> Double {
            let band = bins(around: frequencyHz)
            return 10 * log10(max(inputPower[band].reduce(0, +), 1e-300) / Double(band.count))
        }

        /// The bins within +-1/24 octave of a frequency (at least one).
        func bins(around frequencyHz: Double) -> ClosedRange<Int> {
            let binHz = sampleRate / Double(segmentLength)
            let lo = min(inputPower.count - 1, max(1, Int((frequencyHz * pow(2, -1.0 / 24) / binHz).rounded(.down))))
            let hi = min(inputPower.count - 1, Int((frequencyHz * pow(2, 1.0 / 24) / binHz).rounded(.up)))
            return lo...max(lo, hi)
        }
    }

    public static func crossSpectra(input x: [Float], output y: [Float], sampleRate: Double, segmentLength: Int = 4096)
        -> CrossSpectra
    {
        let n = segmentLength
        // Estimated: timing a 4096 plan costs about 400 ms, more than it saves below hours of audio.
        let fft = RealFFT(length: n, measure: false)
        let frame = RealFFT.allocateReal(n)
        let spectrum = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(frame)
            RealFFT.free(spectrum)
        }
        let window = HannWindow.values(length: n).map { Float($0) }
        var px = [Double](repeating: 0, count: fft.complexCount)
        var py = px
        let count = min(x.count, y.count)
        var start = 0
        while start + n <= count {
            for (signal, accumulator) in [(x, 0), (y, 1)] {
                for i in 0..<n { frame[i] = signal[start + i] * window[i] }
                fft.forward(frame, spectrum)
                for k in 0..<fft.complexCount {
                    let p = Double(spectrum[2 * k]) * Double(spectrum[2 * k]) + Double(spectrum[2 * k + 1]) * Double(spectrum[2 * k + 1])
                    if accumulator == 0 { px[k] += p } else { py[k] += p }
                }
            }
            start += n / 2
        }
        return CrossSpectra(segmentLength: n, sampleRate: sampleRate, inputPower: px, outputPower: py)
    }
}
