import Foundation

/// What the debug dump shows of one ear at one moment: levels, third-octave bands and a
/// magnitude spectrum of the input and the output. Pure math on sample windows.
public struct EarDump: Codable, Sendable, Equatable {
    /// RMS and peak over the samples since the previous frame, dBFS (a full-scale sine is -3 dB RMS).
    public var inputRMSDB: Double
    public var inputPeakDB: Double
    public var outputRMSDB: Double
    public var outputPeakDB: Double
    /// Band levels at DumpAnalyzer.bandCentersHz, dBFS RMS of what falls in each band.
    public var inputBandsDB: [Double]
    public var outputBandsDB: [Double]
    /// Per FFT bin (spacing `spectrumBinHz`, from 0 Hz), dBFS RMS per bin.
    public var inputSpectrumDB: [Double]
    public var outputSpectrumDB: [Double]
}

public enum DumpAnalyzer {
    /// Third-octave bands from 125 Hz to 8 kHz (IEC 61260 nominal centres).
    public static let bandCentersHz: [Double] = [
        125, 160, 200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600, 2000, 2500, 3150, 4000, 5000, 6300, 8000,
    ]
    /// Samples for the band levels (fine bins, so 125 Hz has a few) and for the spectrum.
    public static let bandWindow = 4096
    public static let spectrumWindow = 1024
    /// Floor for silence, dBFS.
    public static let floorDB = -140.0

    public static func spectrumBinHz(sampleRate: Double) -> Double { sampleRate / Double(spectrumWindow) }

    /// - Parameters:
    ///   - input, output: the newest samples (at least `bandWindow`; fewer are zero-padded at the start).
    ///   - recentInput, recentOutput: the samples since the previous frame, for RMS and peak.
    public static func analyze(
        input: [Float], output: [Float], recentInput: ArraySlice<Float>, recentOutput: ArraySlice<Float>, sampleRate: Double
    ) -> EarDump {
        let inputBandPower = powerSpectrum(input, length: bandWindow)
        let outputBandPower = powerSpectrum(output, length: bandWindow)
        return EarDump(
            inputRMSDB: rmsDB(recentInput), inputPeakDB: peakDB(recentInput),
            outputRMSDB: rmsDB(recentOutput), outputPeakDB: peakDB(recentOutput),
            inputBandsDB: bands(inputBandPower, sampleRate: sampleRate), outputBandsDB: bands(outputBandPower, sampleRate: sampleRate),
            inputSpectrumDB: powerSpectrum(input, length: spectrumWindow).map(decibelsOfPower),
            outputSpectrumDB: powerSpectrum(output, length: spectrumWindow).map(decibelsOfPower))
    }

    /// One-sided mean-square per bin of the last `length` samples, Hann-windowed and scaled so
    /// the bins of a sinusoid of amplitude A sum to A^2 / 2 (its mean square).
    static func powerSpectrum(_ x: [Float], length n: Int) -> [Double] {
        let fft = RealFFT(length: n)
        let frame = RealFFT.allocateReal(n)
        let spectrum = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(frame)
            RealFFT.free(spectrum)
        }
        var windowPower = 0.0
        let start = x.count - n
        for i in 0..<n {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            windowPower += w * w
            let sample = start + i >= 0 ? Double(x[start + i]) : 0
            frame[i] = Float(sample * w)
        }
        fft.forward(frame, spectrum)
        let scale = 2 / (Double(n) * windowPower)
        return (0..<fft.complexCount).map { k in
            let (re, im) = (Double(spectrum[2 * k]), Double(spectrum[2 * k + 1]))
            return (re * re + im * im) * scale * (k == 0 || k == n / 2 ? 0.5 : 1)
        }
    }

    static func bands(_ power: [Double], sampleRate: Double) -> [Double] {
        let binHz = sampleRate / Double(2 * (power.count - 1))
        return bandCentersHz.map { center in
            let (low, high) = (center * pow(2, -1.0 / 6), center * pow(2, 1.0 / 6))
            var sum = 0.0
            for k in power.indices where Double(k) * binHz >= low && Double(k) * binHz < high { sum += power[k] }
            return decibelsOfPower(sum)
        }
    }

    static func decibelsOfPower(_ p: Double) -> Double { max(floorDB, 10 * log10(max(p, 1e-30))) }

    static func rmsDB(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return floorDB }
        return decibelsOfPower(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    static func peakDB(_ x: ArraySlice<Float>) -> Double {
        max(floorDB, 20 * log10(max(Double(x.map { abs($0) }.max() ?? 0), 1e-30)))
    }
}
