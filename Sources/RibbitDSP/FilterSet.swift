import Glibc

/// An immutable runtime configuration for the engine: one filter per channel (ear) and the
/// output ceiling. Built off the real-time thread, where errors can be thrown; the engine's
/// process() only reads `spectra` and `ceiling`.
public final class FilterSet: @unchecked Sendable {
    public let fftLength: Int
    public let channelCount: Int
    /// The FIR taps per channel, kept for reporting (the RT thread never reads them).
    public let taps: [[Double]]
    /// Largest output magnitude (linear full scale): never above 1 (0 dBFS), whatever was asked.
    public let ceiling: Float
    /// Where the limiter starts under `ceiling` (precomputed: the audio thread calls no libm).
    let knee: Float
    /// Per channel, fftLength / 2 + 1 interleaved complex values: the DFT of the zero-padded
    /// taps, pre-scaled by 1 / fftLength so forward + multiply + inverse is unity gain.
    let spectra: UnsafeMutablePointer<Float>

    var spectrumStride: Int { 2 * (fftLength / 2 + 1) }

    /// - Parameter ceilingDBFS: the output ceiling in dBFS; anything above 0 (full scale), and
    ///   NaN, is taken as 0.
    public init(taps: [[Double]], fftLength: Int, ceilingDBFS: Double) {
        precondition(!taps.isEmpty && taps.allSatisfy { $0.count <= fftLength })
        self.fftLength = fftLength
        self.channelCount = taps.count
        self.taps = taps
        self.ceiling = Self.linearCeiling(dBFS: ceilingDBFS)
        knee = PeakLimiter.knee(ceiling: ceiling)
        let bins = fftLength / 2 + 1
        spectra = RealFFT.allocateComplex(bins * taps.count)
        // A direct DFT in double precision (the filter is short): a unity filter stays a clean
        // delay, and no FFTW plan is needed.
        let scale = 1 / Double(fftLength)
        for (channel, h) in taps.enumerated() {
            let base = spectra + channel * 2 * bins
            for k in 0..<bins {
                let (re, im) = Self.response(of: h, cyclesPerSample: Double(k) / Double(fftLength))
                base[2 * k] = Float(re * scale)
                base[2 * k + 1] = Float(im * scale)
            }
        }
    }

    /// Raw zero-phase per-bin gains, without fitting a filter into the zero padding: the
    /// naive design that aliases in time. Only for tests that must be able to catch it.
    init(naiveBinGains gains: [[Double]], fftLength: Int, ceilingDBFS: Double) {
        self.fftLength = fftLength
        channelCount = gains.count
        taps = gains.map { _ in [] }
        ceiling = Self.linearCeiling(dBFS: ceilingDBFS)
        knee = PeakLimiter.knee(ceiling: ceiling)
        let bins = fftLength / 2 + 1
        spectra = RealFFT.allocateComplex(bins * gains.count)
        for (channel, g) in gains.enumerated() {
            for k in 0..<bins { spectra[channel * 2 * bins + 2 * k] = Float(g[k] / Double(fftLength)) }
        }
    }

    deinit { RealFFT.free(spectra) }

    /// The linear ceiling for a level in dBFS, at most full scale: no setting and no mode may
    /// play louder than 0 dBFS (`ceilingDBFS < 0` is false for NaN, so NaN gives 0 dBFS too).
    static func linearCeiling(dBFS: Double) -> Float {
        dBFS < 0 ? max(Float(pow(10, dBFS / 20)), .leastNormalMagnitude) : 1
    }

    /// A pure delay of `delayFrames` per channel (unity gain), at full-scale ceiling 0 dBFS.
    public static func delay(_ delayFrames: Int, channelCount: Int, fftLength: Int, ceilingDBFS: Double = 0) -> FilterSet {
        var h = [Double](repeating: 0, count: 2 * delayFrames + 1)
        h[delayFrames] = 1
        return FilterSet(taps: Array(repeating: h, count: channelCount), fftLength: fftLength, ceilingDBFS: ceilingDBFS)
    }
}

extension FilterSet {
    /// The magnitude response of one channel's filter at the given frequencies, in dB (what the
    /// engine actually applies, ripple and all). Direct sum over the taps; off the RT thread.
    /// A pure delay reads 0 dB; a zero response reads `floorDB`.
    public func magnitudeDB(channel: Int, atHz frequencies: [Double], sampleRate: Double, floorDB: Double = -140) -> [Double] {
        let h = taps[channel]
        return frequencies.map { hz in
            let (re, im) = Self.response(of: h, cyclesPerSample: hz / sampleRate)
            return max(floorDB, 10 * log10(max(re * re + im * im, 1e-300)))
        }
    }

    /// The DTFT of `h` at one frequency: sum of h[n] e^(-2 pi i f n), by the phasor recurrence
    /// (one complex multiply per tap, double precision).
    static func response(of h: [Double], cyclesPerSample f: Double) -> (re: Double, im: Double) {
        let angle = -2 * Double.pi * f
        let (stepRe, stepIm) = (cos(angle), sin(angle))
        var (pRe, pIm) = (1.0, 0.0)
        var (re, im) = (0.0, 0.0)
        for value in h {
            re += value * pRe
            im += value * pIm
            (pRe, pIm) = (pRe * stepRe - pIm * stepIm, pRe * stepIm + pIm * stepRe)
        }
        return (re, im)
    }
}
