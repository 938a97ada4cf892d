import Glibc
import RibbitDSP

/// Long-term spectra by Welch's method: periodic-Hann-windowed segments with half overlap.
public enum Spectra {
    /// Each signal's |X[k]|^2 summed over its segments (the signals are read over their common
    /// length), and how many segments that was.
    static func welchPower(_ signals: [ArraySlice<Float>], segmentLength n: Int) -> (power: [[Double]], segments: Int) {
        // Estimated: timing a 4096 plan costs about 400 ms, more than it saves below hours of audio.
        let fft = RealFFT(length: n, measure: false)
        let frame = RealFFT.allocateReal(n)
        let spectrum = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(frame)
            RealFFT.free(spectrum)
        }
        let window = HannWindow.values(length: n)
        var power = [[Double]](repeating: [Double](repeating: 0, count: fft.complexCount), count: signals.count)
        let count = signals.map(\.count).min() ?? 0
        var segments = 0
        var offset = 0
        while offset + n <= count {
            for (s, signal) in signals.enumerated() {
                let start = signal.startIndex + offset
                for i in 0..<n { frame[i] = Float(Double(signal[start + i]) * window[i]) }
                fft.forward(frame, spectrum)
                for k in 0..<fft.complexCount {
                    let (re, im) = (Double(spectrum[2 * k]), Double(spectrum[2 * k + 1]))
                    power[s][k] += re * re + im * im
                }
            }
            segments += 1
            offset += n / 2
        }
        return (power, segments)
    }

    /// The input and output spectra of a system, for its magnitude response.
    public static func crossSpectra(input x: [Float], output y: [Float], sampleRate: Double, segmentLength: Int = 4096)
        -> CrossSpectra
    {
        let (power, _) = welchPower([x[...], y[...]], segmentLength: segmentLength)
        return CrossSpectra(segmentLength: segmentLength, sampleRate: sampleRate, inputPower: power[0], outputPower: power[1])
    }

    /// Long-term one-third-octave band levels (sine-referenced dBFS) centred on each frequency
    /// (edges f 2^(+-1/6)) with a 4096-point window: the power of the bins inside the edges. A band
    /// holding no bin gets the nearest bin; nil when the band is silent or x is shorter than a window.
    public static func thirdOctaveLevelsDBFS(_ x: ArraySlice<Float>, centresHz: [Double], sampleRate: Double) -> [Double?] {
        let n = 4096
        guard x.count >= n else { return centresHz.map { _ in nil } }
        let (spectra, frames) = welchPower([x], segmentLength: n)
        let power = spectra[0]
        let windowPower = HannWindow.values(length: n).reduce(0) { $0 + $1 * $1 }
        // Mean square of the part of x in bins k1...k2 (one-sided, so twice the bin power).
        let scale = 2 / (Double(frames) * Double(n) * windowPower)
        let binHz = sampleRate / Double(n)
        return centresHz.map { fc in
            let low = fc * pow(2, -1.0 / 6), high = fc * pow(2, 1.0 / 6)
            var k1 = Int((low / binHz).rounded(.up)), k2 = Int((high / binHz).rounded(.down))
            if k2 < k1 { (k1, k2) = (Int((fc / binHz).rounded()), Int((fc / binHz).rounded())) }
            k1 = max(1, k1)
            k2 = min(power.count - 2, k2)
            guard k1 <= k2 else { return nil }
            let meanSquare = power[k1...k2].reduce(0, +) * scale
            return meanSquare > 0 ? 10 * log10(2 * meanSquare) : nil
        }
    }
}

/// A system's input and output power spectra (`Spectra.crossSpectra`).
public struct CrossSpectra: Sendable {
    public let segmentLength: Int
    public let sampleRate: Double
    public let inputPower: [Double]
    public let outputPower: [Double]

    /// The magnitude response |H| = sqrt(Pyy / Pxx) in dB, with both spectra summed over the
    /// bins within +-1/24 octave of `frequencyHz`. For a linear time-invariant system and a
    /// broadband input this needs no alignment of x and y.
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
