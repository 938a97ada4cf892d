import Glibc

/// Splits the prescription's filter into bands whose sum is exactly that filter.
///
/// The band weights W_b(f) are raised-cosine crossovers on a log-frequency axis between
/// adjacent centres (no narrower than the filter can resolve, see `weight`): W_b = 1 at its own
/// centre, falling to 0 at the next centre while the next band rises, the lowest band flat below
/// its centre and the highest flat above its own. They sum to 1 at every frequency. Each band filter H_b is
/// `LinearPhaseFIR.design` of amplitude(f) * W_b(f) with the prescription's length: that design
/// is a least-squares fit, linear in its target, so sum_b H_b is the design of amplitude(f)
/// itself (to rounding), and any sum_b g_b H_b is again a symmetric FIR of the same length:
/// the same delay, no time aliasing in the engine.
///
/// Resolution: a 193-tap FIR at 48 kHz spans 4.0 ms, so its frequency resolution (main lobe
/// of a 193-sample rectangular window, 2 fs / taps) is 497 Hz wide. Below 500 Hz it cannot
/// separate anything: 125, 250 and 500 Hz all lie within one main lobe, so a gain difference
/// between the 125 Hz and 250 Hz bands can only be a smooth tilt over 0-750 Hz, not two
/// bands. With the 746 Hz minimum crossover (`minimumTransitionHz`) the bands at 125, 250,
/// 500, 750 and 1000 Hz share their centres with their neighbours (at 125 Hz: 0.61 of the
/// 125 Hz band, 0.36 of the 250 Hz one); from 1.5 kHz up (centres 500 Hz and more apart on
/// a log crossover) each band is whole at its centre. The level detector (256-point FFT,
/// 187.5 Hz bins, Hann) has bins at 0, 187.5, 375 and 562.5 Hz below 600 Hz: it cannot tell
/// 125 from 250 Hz either.
public enum BandSplit {
    /// The audiometric frequencies from 125 Hz to 8 kHz: the default band centres.
    public static let audiometricCentresHz: [Double] = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]

    /// The narrowest crossover (Hz) for a `taps`-long filter at `sampleRate`: 1.5 times its
    /// resolution (the main lobe of a `taps`-sample window, 2 fs / taps = 497 Hz for 193 taps
    /// at 48 kHz), so 746 Hz. Narrower crossovers leave the band filters with tails of 1-5 %
    /// at every frequency, which become dB errors once the bands' gains differ by 20-30 dB (a
    /// loud tone in one band, the others at full gain). Measured with 193 taps, worst static
    /// error at 30-100 dB SPL with 30 dB of gain spread: 1.0x: 3.7 dB at 1 kHz, 3.3 dB at
    /// 2 kHz; 1.5x: 1.8 dB at 1 kHz, 0.6 dB at 2 kHz; 2x: 2.3 and 0.9 dB; 3x: 1.2 and 1.2 dB.
    public static func minimumTransitionHz(taps: Int, sampleRate: Double) -> Double { 3 * sampleRate / Double(taps) }

    /// The step from band j to band j + 1 at `hz` (0 below, 1 above): a raised cosine on a log
    /// axis from centre j to centre j + 1, or, where those are closer than `transitionHz`, a
    /// raised cosine `transitionHz` wide in Hz around their geometric mean.
    static func step(_ j: Int, centres: [Double], transitionHz: Double, hz: Double) -> Double {
        let (lo, hi) = (centres[j], centres[j + 1])
        let t: Double
        if hi - lo >= transitionHz {
            t = hz <= lo ? 0 : hz >= hi ? 1 : log(hz / lo) / log(hi / lo)
        } else {
            let start = (lo * hi).squareRoot() - transitionHz / 2
            t = min(max((hz - start) / transitionHz, 0), 1)
        }
        let s = sin(Double.pi / 2 * t)
        return s * s
    }

    /// The weight of band `band` at `hz` for ascending `centres`, by stick breaking over the
    /// steps: W_0 = 1 - S_0, W_b = S_0 ... S_(b-1) (1 - S_b), W_last = S_0 ... S_(last-1). The
    /// sum telescopes to exactly 1 whatever the steps, so crossovers may overlap. Where the
    /// centres are at least `transitionHz` apart, band b is 1 at its centre and 0 at its
    /// neighbours'; below that neighbouring bands share their centres: with 193 taps at 48 kHz
    /// (746 Hz) the bands at 125-1000 Hz, where at 125 Hz the 125 Hz band has weight 0.61 and
    /// the 250 Hz band 0.36.
    public static func weight(band: Int, centres: [Double], transitionHz: Double, hz: Double) -> Double {
        var w = 1.0
        for j in 0..<band { w *= step(j, centres: centres, transitionHz: transitionHz, hz: hz) }
        if band < centres.count - 1 { w *= 1 - step(band, centres: centres, transitionHz: transitionHz, hz: hz) }
        return w
    }

    /// The band filters: `taps` coefficients each, one per centre, designed as LinearPhaseFIR
    /// designs the whole filter from amplitude(f) * W_b(f), W_b with the filter's own
    /// `minimumTransitionHz`.
    public static func bandFilters(
        taps: Int, sampleRate: Double, centres: [Double], transitionHz: Double? = nil, amplitude: @escaping (Double) -> Double
    ) -> [[Double]] {
        precondition(!centres.isEmpty && zip(centres, centres.dropFirst()).allSatisfy { $0 < $1 }, "centres must ascend")
        let transition = transitionHz ?? minimumTransitionHz(taps: taps, sampleRate: sampleRate)
        return centres.indices.map { b in
            LinearPhaseFIR.design(taps: taps, sampleRate: sampleRate) { hz in
                amplitude(hz) * weight(band: b, centres: centres, transitionHz: transition, hz: hz)
            }
        }
    }

    /// The real amplitude A(w) of a symmetric FIR (h[D + m] = h[D - m], D its middle):
    /// H(e^iw) = e^(-i w D) A(w), A = h[D] + 2 sum_m h[D + m] cos(m w). Double precision.
    static func amplitude(of h: [Double], cyclesPerSample f: Double) -> Double {
        let d = (h.count - 1) / 2
        let w = 2 * Double.pi * f
        var a = h[d]
        for m in stride(from: 1, through: d, by: 1) { a += 2 * h[d + m] * cos(Double(m) * w) }
        return a
    }

    /// The real amplitude A~(w) of an antisymmetric FIR (h[D + m] = -h[D - m]):
    /// H(e^iw) = -i e^(-i w D) A~(w), A~ = 2 sum_m h[D + m] sin(m w). Double precision.
    static func hilbertAmplitude(of h: [Double], cyclesPerSample f: Double) -> Double {
        let d = (h.count - 1) / 2
        let w = 2 * Double.pi * f
        var a = 0.0
        for m in stride(from: 1, through: d, by: 1) { a += 2 * h[d + m] * sin(Double(m) * w) }
        return a
    }
}

/// Float log2 and exp2 without libm, for the audio thread (a compressor needs one of each per
/// band per hop). Both are plain arithmetic on the IEEE bit pattern plus a short polynomial.
enum FastMath {
    /// log2(x) for x > 0 (x below the smallest normal, and NaN, read as that): error below 2e-5.
    @inline(__always)
    static func log2(_ x: Float) -> Float {
        let bits = (x >= .leastNormalMagnitude ? x : .leastNormalMagnitude).bitPattern
        let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xff) - 127)
        // Mantissa m in [1, 2), centred on sqrt(2) so t = (m - 1) / (m + 1) stays small.
        var m = Float(bitPattern: (bits & 0x7f_ffff) | 0x3f80_0000)
        var e = exponent
        if m > 1.41421356 {
            m *= 0.5
            e += 1
        }
        let t = (m - 1) / (m + 1)
        let t2 = t * t
        // 2 / ln 2 * atanh-series: t + t^3/3 + t^5/5 + t^7/7; |t| <= 0.172, next term < 1e-7.
        let series = t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7))))
        return e + 2.88539008 * series
    }

    /// 2^y, y clamped to [-126, 126]: relative error below 1e-6.
    @inline(__always)
    static func exp2(_ y: Float) -> Float {
        let clamped = min(max(y, -126), 126)
        // Nearest integer (y + 127.5 > 0, so truncation is floor); fraction in [-0.5, 0.5].
        let i = Int32(clamped + 127.5) - 127
        let f = (clamped - Float(i)) * 0.693147181
        // e^f, |f| <= 0.347: Taylor to f^6 (remainder < 3e-7).
        let p = 1 + f * (1 + f * (0.5 + f * (1.0 / 6 + f * (1.0 / 24 + f * (1.0 / 120 + f * (1.0 / 720))))))
        return p * Float(bitPattern: UInt32(i + 127) << 23)
    }
}
