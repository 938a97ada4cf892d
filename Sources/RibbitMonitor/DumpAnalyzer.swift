import Glibc
import RibbitDSP
import RibbitMeasure

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

    /// Every level of `a` and `b` combined field by field: `level` for the mean-square levels
    /// (RMS, bands, spectra; arrays keep `a`'s length), `peak` for the two peaks. The one list
    /// of the level fields, for averaging frames and converting their units.
    public static func combine(
        _ a: EarDump, _ b: EarDump, level: (Double, Double) -> Double, peak: (Double, Double) -> Double
    ) -> EarDump {
        func levels(_ x: [Double], _ y: [Double]) -> [Double] { x.indices.map { $0 < y.count ? level(x[$0], y[$0]) : x[$0] } }
        return EarDump(
            inputRMSDB: level(a.inputRMSDB, b.inputRMSDB), inputPeakDB: peak(a.inputPeakDB, b.inputPeakDB),
            outputRMSDB: level(a.outputRMSDB, b.outputRMSDB), outputPeakDB: peak(a.outputPeakDB, b.outputPeakDB),
            inputBandsDB: levels(a.inputBandsDB, b.inputBandsDB), outputBandsDB: levels(a.outputBandsDB, b.outputBandsDB),
            inputSpectrumDB: levels(a.inputSpectrumDB, b.inputSpectrumDB), outputSpectrumDB: levels(a.outputSpectrumDB, b.outputSpectrumDB))
    }

    /// Every level with `level` applied (mean-square levels) or `peak` (the two peaks).
    public func mapLevels(level: (Double) -> Double, peak: (Double) -> Double) -> EarDump {
        Self.combine(self, self, level: { x, _ in level(x) }, peak: { x, _ in peak(x) })
    }
}

/// The dump's sample windows for each ear: the newest `bandWindow` samples of input and output,
/// and every sample since the previous frame (for RMS and peak). Fed by the control thread from
/// the RT thread's ring, or by `process` from a file.
public final class DumpAccumulator {
    public let earCount: Int
    private var windows: [[Float]]  // input of each ear, then output of each ear
    private var recent: [[Float]]
    private let analyzer = DumpAnalyzer()

    public init(earCount: Int) {
        self.earCount = earCount
        windows = Array(repeating: [], count: 2 * earCount)
        recent = Array(repeating: [], count: 2 * earCount)
    }

    /// Frames appended since the previous analysis.
    public var pendingFrames: Int { recent[0].count }

    /// Appends the same number of samples of one ear's input and output.
    public func append<I: Collection<Float>, O: Collection<Float>>(ear: Int, input: I, output: O) {
        precondition(input.count == output.count)
        add(input, to: ear)
        add(output, to: earCount + ear)
    }

    private func add<C: Collection<Float>>(_ samples: C, to slot: Int) {
        recent[slot].append(contentsOf: samples)
        windows[slot].append(contentsOf: samples)
        let excess = windows[slot].count - DumpAnalyzer.bandWindow
        if excess > 0 { windows[slot].removeFirst(excess) }
    }

    /// Analyses each ear's windows and starts a new "since the previous frame".
    public func analyze(sampleRate: Double) -> [EarDump] {
        defer { recent = Array(repeating: [], count: 2 * earCount) }
        return (0..<earCount).map { ear in
            analyzer.analyze(
                input: windows[ear], output: windows[earCount + ear], recentInput: recent[ear][...],
                recentOutput: recent[earCount + ear][...], sampleRate: sampleRate)
        }
    }
}

/// Keeps its FFT plans: make one per dump and call analyze() for every frame.
public final class DumpAnalyzer {
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

    /// The frequency of each spectrum bin: k * spectrumBinHz for k in 0...spectrumWindow / 2.
    public static func spectrumFrequenciesHz(sampleRate: Double) -> [Double] {
        (0...spectrumWindow / 2).map { Double($0) * spectrumBinHz(sampleRate: sampleRate) }
    }

    private let bandFFT = SpectrumWorkspace(length: bandWindow)
    private let spectrumFFT = SpectrumWorkspace(length: spectrumWindow)

    public init() {}

    /// - Parameters:
    ///   - input, output: the newest samples (`bandWindow` of them; with fewer, the windows span only those).
    ///   - recentInput, recentOutput: the samples since the previous frame, for RMS and peak.
    public func analyze(
        input: [Float], output: [Float], recentInput: ArraySlice<Float>, recentOutput: ArraySlice<Float>, sampleRate: Double
    ) -> EarDump {
        typealias A = DumpAnalyzer
        let inputBandPower = bandFFT.powerSpectrum(input)
        let outputBandPower = bandFFT.powerSpectrum(output)
        return EarDump(
            inputRMSDB: A.rmsDB(recentInput), inputPeakDB: A.peakDB(recentInput),
            outputRMSDB: A.rmsDB(recentOutput), outputPeakDB: A.peakDB(recentOutput),
            inputBandsDB: A.bands(inputBandPower, sampleRate: sampleRate), outputBandsDB: A.bands(outputBandPower, sampleRate: sampleRate),
            inputSpectrumDB: spectrumFFT.powerSpectrum(input).map(A.decibelsOfPower),
            outputSpectrumDB: spectrumFFT.powerSpectrum(output).map(A.decibelsOfPower))
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

    /// dB of a mean square, to 0.01 dB (JSON stays short), floored; NaN (a NaN input) reads as the floor.
    static func decibelsOfPower(_ p: Double) -> Double {
        guard p.isFinite else { return p.isNaN ? floorDB : 0 }
        return max(floorDB, (1000 * log10(max(p, 1e-30))).rounded() / 100 + 0)  // + 0: -0.0 reads as 0
    }

    static func rmsDB(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return floorDB }
        return decibelsOfPower(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    static func peakDB(_ x: ArraySlice<Float>) -> Double {
        let peak = Double(x.reduce(Float(0)) { max($0, $1.isNaN ? 0 : abs($1)) })
        return decibelsOfPower(peak * peak)
    }
}

/// An FFT plan, its buffers and the Hann window for one length.
final class SpectrumWorkspace {
    let n: Int
    private let fft: RealFFT
    private let frame: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<Float>
    private let window: [Double]

    init(length: Int) {
        n = length
        fft = RealFFT(length: length, measure: false)  // planned at once: the dump starts without a pause
        frame = RealFFT.allocateReal(length)
        spectrum = RealFFT.allocateComplex(fft.complexCount)
        window = HannWindow.values(length: length)
    }

    deinit {
        RealFFT.free(frame)
        RealFFT.free(spectrum)
    }

    /// One-sided mean-square per bin of the last n samples, Hann-windowed and scaled so the
    /// bins of a sinusoid of amplitude A sum to A^2 / 2. With fewer samples (a dump that just
    /// started) the Hann window spans only those, zero-padded in front: no splatter from a
    /// cut-off edge, and a steady level reads the same from the first frame on.
    func powerSpectrum(_ x: [Float]) -> [Double] {
        let m = min(n, x.count)
        let start = x.count - m
        var windowPower = 0.0
        for i in 0..<n - m { frame[i] = 0 }
        for i in 0..<m {
            let w = m == n ? window[i] : HannWindow.value(i, length: m)
            frame[n - m + i] = Float(Double(x[start + i]) * w)
            windowPower += w * w
        }
        fft.forward(frame, spectrum)
        let scale = windowPower > 0 ? 2 / (Double(n) * windowPower) : 0
        return (0..<fft.complexCount).map { k in
            let (re, im) = (Double(spectrum[2 * k]), Double(spectrum[2 * k + 1]))
            return (re * re + im * im) * scale * (k == 0 || k == n / 2 ? 0.5 : 1)
        }
    }
}
