import Glibc

/// Splits the prescription's filter into bands whose sum is exactly that filter.
///
/// The band weights W_b(f) are raised-cosine crossovers on a log-frequency axis between
/// adjacent centres: W_b = 1 at its own centre, cos^2 falling to 0 at the next centre while the
/// next band's sin^2 rises, the lowest band flat below its centre and the highest flat above
/// its own. They sum to 1 at every frequency. Each band filter H_b is
/// `LinearPhaseFIR.design` of amplitude(f) * W_b(f) with the prescription's length: that design
/// is a least-squares fit, linear in its target, so sum_b H_b is the design of amplitude(f)
/// itself (to rounding), and any sum_b g_b H_b is again a symmetric FIR of the same length:
/// the same delay, no time aliasing in the engine.
///
/// Resolution: a 193-tap FIR at 48 kHz spans 4.0 ms, so its frequency resolution (main lobe
/// of a 193-sample rectangular window, 2 fs / taps) is about 500 Hz wide: band filters centred
/// at 125, 250 and 500 Hz overlap most of each other, and a gain difference between the 125 Hz
/// and 250 Hz bands shows up as a smooth tilt below 500 Hz, not as two separate bands. From
/// 1 kHz up the centres are more than one main lobe apart and the bands are resolved.
public enum BandSplit {
    /// The audiometric frequencies from 125 Hz to 8 kHz: the default band centres.
    public static let audiometricCentresHz: [Double] = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]

    /// The weight of band `band` at `hz` for ascending `centres`; sum over bands is 1.
    public static func weight(band: Int, centres: [Double], hz: Double) -> Double {
        let last = centres.count - 1
        let c = centres[band]
        if hz == c { return 1 }
        if hz < c {
            if band == 0 { return 1 }
            let lower = centres[band - 1]
            guard hz > lower else { return 0 }
            let t = log(hz / lower) / log(c / lower)
            let s = sin(Double.pi / 2 * t)
            return s * s
        }
        if band == last { return 1 }
        let upper = centres[band + 1]
        guard hz < upper else { return 0 }
        let t = log(hz / c) / log(upper / c)
        let s = cos(Double.pi / 2 * t)
        return s * s
    }

    /// The band filters: `taps` coefficients each, one per centre, designed as LinearPhaseFIR
    /// designs the whole filter from amplitude(f) * W_b(f).
    public static func bandFilters(taps: Int, sampleRate: Double, centres: [Double], amplitude: @escaping (Double) -> Double)
        -> [[Double]]
    {
        precondition(!centres.isEmpty && zip(centres, centres.dropFirst()).allSatisfy { $0 < $1 }, "centres must ascend")
        return centres.indices.map { b in
            LinearPhaseFIR.design(taps: taps, sampleRate: sampleRate) { hz in
                amplitude(hz) * weight(band: b, centres: centres, hz: hz)
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
