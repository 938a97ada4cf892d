import Glibc
import RibbitPrescription

/// Octave-band levels of the microphone, for the hearing test's ambient-noise check. Each band
/// (125 ... 8000 Hz, edges f/sqrt 2 ... f sqrt 2) is a 6th-order Butterworth band-pass: three
/// biquads from the bilinear transform with prewarped edges, 3 dB down at the edges and about
/// 20 dB down an octave from the centre (IEC 61260-1-like skirts). Its output is squared and summed over
/// the last `windowSeconds`. Levels are sine-referred: a full-scale sine at a band's centre
/// reads 0 dBFS in that band.
///
/// Allocation-free after init: 21 biquads per sample, in Double because the 125 Hz band's poles
/// sit within 0.01 of z = 1 at 48 kHz, where Float coefficients and state lose accuracy.
public struct OctaveBandMeter: Sendable {
    public static let bandsHz = [125, 250, 500, 1000, 2000, 4000, 8000]
    static let sections = 3

    public let sampleRate: Double
    public let windowSeconds: Double
    /// Per band and section: b0 (the numerator is b0 (1 - z^-2)), a1, a2.
    private var coefficients: [Double]
    /// Per band and section: the transposed direct form II state s1, s2.
    private var state: [Double]
    /// Sums of squares over chunks of `chunkSamples`, a ring of `chunkCount` per band.
    private var chunks: [Double]
    private var partial: [Double]
    private let chunkSamples: Int
    private let chunkCount: Int
    private var samplesInChunk = 0
    private var chunkIndex = 0
    private var chunksFilled = 0

    public init(sampleRate: Double, windowSeconds: Double = 0.25) {
        self.sampleRate = sampleRate
        self.windowSeconds = windowSeconds
        // 10 ms chunks: the window slides in steps of 10 ms.
        chunkSamples = max(1, Int((sampleRate / 100).rounded()))
        chunkCount = max(1, Int((windowSeconds * sampleRate / Double(chunkSamples)).rounded()))
        let bands = Self.bandsHz.count
        coefficients = []
        coefficients.reserveCapacity(bands * Self.sections * 3)
        for centre in Self.bandsHz {
            coefficients += Self.design(centreHz: Double(centre), sampleRate: sampleRate)
        }
        state = Array(repeating: 0, count: bands * Self.sections * 2)
        chunks = Array(repeating: 0, count: bands * chunkCount)
        partial = Array(repeating: 0, count: bands)
    }

    /// The three biquads of one band, normalized to exactly 0 dB at the centre frequency.
    static func design(centreHz: Double, sampleRate: Double) -> [Double] {
        let fs2 = 2 * sampleRate
        let low = fs2 * tan(Double.pi * centreHz / 2.0.squareRoot() / sampleRate)
        let high = fs2 * tan(Double.pi * min(centreHz * 2.0.squareRoot(), sampleRate * 0.49) / sampleRate)
        let w0squared = low * high
        let bandwidth = high - low
        var poles: [Complex] = []
        // The 3rd-order Butterworth prototype's poles, each giving two band-pass poles
        // s = (p B +- sqrt((p B)^2 - 4 w0^2)) / 2; then z = (2 fs + s) / (2 fs - s).
        for k in 1...sections {
            let angle = Double.pi * Double(2 * k + sections - 1) / Double(2 * sections)
            let p = Complex(cos(angle), sin(angle)) * bandwidth
            let root = (p * p - Complex(4 * w0squared, 0)).squareRoot()
            for s in [(p + root) * 0.5, (p - root) * 0.5] {
                let z = (Complex(fs2, 0) + s) / (Complex(fs2, 0) - s)
                if z.imaginary > 0 { poles.append(z) }
            }
        }
        // Every band-pass pole is complex for an octave band, so exactly three are upper.
        precondition(poles.count == sections, "an octave band at \(centreHz) Hz has real poles")
        var out: [Double] = []
        let omega = 2 * Double.pi * centreHz / sampleRate
        let zInverse = Complex(cos(omega), -sin(omega))
        for pole in poles {
            let a1 = -2 * pole.real
            let a2 = pole.real * pole.real + pole.imaginary * pole.imaginary
            // |H| at the centre with b0 = 1, so each section is 0 dB there.
            let numerator = Complex(1, 0) - zInverse * zInverse
            let denominator = Complex(1, 0) + zInverse * a1 + zInverse * zInverse * a2
            out += [1 / (numerator / denominator).magnitude, a1, a2]
        }
        return out
    }

    public mutating func append(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { append($0) }
    }

    public mutating func append(_ samples: UnsafeBufferPointer<Float>) {
        let bands = Self.bandsHz.count
        coefficients.withUnsafeBufferPointer { c in
            state.withUnsafeMutableBufferPointer { s in
                partial.withUnsafeMutableBufferPointer { sum in
                    chunks.withUnsafeMutableBufferPointer { ring in
                        for sample in samples {
                            let x = Double(sample)
                            for band in 0..<bands {
                                var y = x
                                for section in 0..<Self.sections {
                                    let ci = (band * Self.sections + section) * 3
                                    let si = (band * Self.sections + section) * 2
                                    let input = y
                                    y = c[ci] * input + s[si]
                                    s[si] = s[si + 1] - c[ci + 1] * y
                                    s[si + 1] = -c[ci] * input - c[ci + 2] * y
                                }
                                sum[band] += y * y
                            }
                            samplesInChunk += 1
                            if samplesInChunk == chunkSamples {
                                for band in 0..<bands {
                                    ring[band * chunkCount + chunkIndex] = sum[band]
                                    sum[band] = 0
                                }
                                samplesInChunk = 0
                                chunkIndex = (chunkIndex + 1) % chunkCount
                                chunksFilled = min(chunksFilled + 1, chunkCount)
                            }
                        }
                    }
                }
            }
        }
    }

    /// dBFS per band centre (Hz) over the last `windowSeconds` (fewer at the start); -inf in
    /// silence; empty before the first 10 ms.
    public func levelsDBFS() -> [Int: Double] {
        guard chunksFilled > 0 else { return [:] }
        var out: [Int: Double] = [:]
        for (band, centre) in Self.bandsHz.enumerated() {
            var sum = 0.0
            for chunk in 0..<chunksFilled { sum += chunks[band * chunkCount + chunk] }
            // Sine-referred: a full-scale sine's mean square is 1/2.
            out[centre] = 10 * log10(2 * sum / Double(chunksFilled * chunkSamples))
        }
        return out
    }

    /// The same in dB SPL, given the microphone's calibration: the dB SPL of a 0 dBFS 1 kHz sine
    /// (`HearingTestRecord.inputDBSPL`), taken as flat across the bands.
    public func levelsDBSPL(microphoneDBSPLAtZeroDBFS: Double) -> [Int: Double] {
        levelsDBFS().mapValues { $0 + microphoneDBSPLAtZeroDBFS }
    }

    public mutating func reset() {
        for index in state.indices { state[index] = 0 }
        for index in chunks.indices { chunks[index] = 0 }
        for index in partial.indices { partial[index] = 0 }
        samplesInChunk = 0
        chunkIndex = 0
        chunksFilled = 0
    }
}

/// Just enough complex arithmetic for the filter design (no Foundation, no Numerics).
struct Complex {
    var real: Double
    var imaginary: Double
    init(_ real: Double, _ imaginary: Double) {
        self.real = real
        self.imaginary = imaginary
    }
    var magnitude: Double { (real * real + imaginary * imaginary).squareRoot() }
    static func + (a: Complex, b: Complex) -> Complex { Complex(a.real + b.real, a.imaginary + b.imaginary) }
    static func - (a: Complex, b: Complex) -> Complex { Complex(a.real - b.real, a.imaginary - b.imaginary) }
    static func * (a: Complex, b: Complex) -> Complex {
        Complex(a.real * b.real - a.imaginary * b.imaginary, a.real * b.imaginary + a.imaginary * b.real)
    }
    static func * (a: Complex, b: Double) -> Complex { Complex(a.real * b, a.imaginary * b) }
    static func / (a: Complex, b: Complex) -> Complex {
        let d = b.real * b.real + b.imaginary * b.imaginary
        return Complex((a.real * b.real + a.imaginary * b.imaginary) / d, (a.imaginary * b.real - a.real * b.imaginary) / d)
    }
    /// The principal square root.
    func squareRoot() -> Complex {
        let r = magnitude
        let re = ((r + real) / 2).squareRoot()
        let im = ((r - real) / 2).squareRoot()
        return Complex(re, imaginary < 0 ? -im : im)
    }
}

/// Maximum permissible ambient noise levels (MPANLs): the octave-band levels (dB SPL, re 20 uPa)
/// in the room that mask a tone at 0 dB HL by no more than 2 dB, ears covered by the earphone.
public enum MaximumPermissibleAmbientNoise {
    /// ANSI S3.1-1999 (R2018) Table 1, ears covered, octave bands, for the test frequency
    /// range 250-8000 Hz (the hearing test's; the 125-8000 Hz column is stricter only in the
    /// 125 Hz band: supra-aural 35, insert 59). Values as quoted from the standard in the E-A-R /
    /// Aearo E-A-RTONE manual (Table 5.1) and Etymotic's ER-3C calibration manual.
    static let supraAural: [Int: Double] = [125: 39, 250: 25, 500: 21, 1000: 26, 2000: 34, 4000: 37, 8000: 37]
    static let insert: [Int: Double] = [125: 67, 250: 53, 500: 50, 1000: 47, 2000: 49, 4000: 50, 8000: 56]
    static let supraAural125: [Int: Double] = [125: 35]
    static let insert125: [Int: Double] = [125: 59]
    /// No standard gives HDA 200 MPANLs: the supra-aural values plus how much more the HDA 200
    /// attenuates than a TDH-39 in its MX41/AR cushion (the Interacoustics AC40 service
    /// manual's attenuation table: TDH-39 3, 5, 7, 15, 26, 32, 24 dB; HDA 200 14.5, 16, 22.5,
    /// 28.5, 32, 45.5, 44 dB at 125 ... 8000 Hz), the way ANSI S3.1 derives its own columns.
    static let hda200MinusTDH39AttenuationDB: [Int: Double] = [125: 11.5, 250: 11, 500: 15.5, 1000: 13.5, 2000: 6, 4000: 13.5, 8000: 20]

    /// The octave-band limits (dB SPL) for testing down to 0 dB HL with `transducer`, for a test
    /// whose lowest frequency is `lowestTestFrequencyHz` (125 or 250 and up).
    public static func octaveBandDBSPL(_ transducer: Transducer, lowestTestFrequencyHz: Int = 250) -> [Int: Double] {
        let includes125 = lowestTestFrequencyHz <= 125
        switch transducer {
        case .tdh39:
            return supraAural.merging(includes125 ? supraAural125 : [:]) { $1 }
        case .er3a:
            return insert.merging(includes125 ? insert125 : [:]) { $1 }
        case .hda200:
            var limits = supraAural.merging(includes125 ? supraAural125 : [:]) { $1 }
            for (band, extra) in hda200MinusTDH39AttenuationDB { limits[band]! += extra }
            return limits
        case .consumer:
            // Unknown attenuation: open-back and on-ear headphones attenuate no more than a
            // TDH-39 (often less), and closed ones more, so the supra-aural limits are the
            // cautious choice for any of them.
            return supraAural.merging(includes125 ? supraAural125 : [:]) { $1 }
        }
    }
}

/// Whether the room is quiet enough for the tone being presented: every octave band against
/// its MPANL raised by the presentation level (MPANLs are for 0 dB HL; a tone at 30 dB HL is
/// masked equally by noise 30 dB louder).
public struct AmbientNoiseCheck: Sendable {
    /// After a too-loud verdict, the test waits for this long under the limits before going on.
    public static let quietSecondsToResume = 2.0

    public struct Verdict: Sendable, Equatable {
        public var tooLoud: Bool
        /// The band furthest over (or, when quiet, closest to) its limit.
        public var worstBandHz: Int
        public var worstBandDBSPL: Double
        public var worstBandLimitDBSPL: Double
        /// The octave band around the test frequency (nil: not measured).
        public var testBandDBSPL: Double?
    }

    public let transducer: Transducer
    public let limitsDBSPL: [Int: Double]

    public init(transducer: Transducer) {
        self.transducer = transducer
        limitsDBSPL = MaximumPermissibleAmbientNoise.octaveBandDBSPL(transducer)
    }

    public func verdict(bandLevelsDBSPL: [Int: Double], presentationDBHL: Int, testFrequencyHz: Int) -> Verdict {
        let raise = Double(max(presentationDBHL, 0))
        var worst = (band: 0, level: -Double.infinity, limit: 0.0, margin: -Double.infinity)
        for band in OctaveBandMeter.bandsHz {
            guard let level = bandLevelsDBSPL[band], let limit = limitsDBSPL[band] else { continue }
            let margin = level - (limit + raise)
            if margin > worst.margin { worst = (band, level, limit + raise, margin) }
        }
        return Verdict(
            tooLoud: worst.margin > 0, worstBandHz: worst.band, worstBandDBSPL: worst.level, worstBandLimitDBSPL: worst.limit,
            testBandDBSPL: bandLevelsDBSPL[Self.band(containing: testFrequencyHz)])
    }

    /// The octave band whose range (f/sqrt 2 ... f sqrt 2) holds `frequencyHz`: 750, 1500, 3000
    /// and 6000 Hz belong to the 1000, 2000, 4000 and 8000 Hz bands.
    public static func band(containing frequencyHz: Int) -> Int {
        var best = OctaveBandMeter.bandsHz[0]
        for band in OctaveBandMeter.bandsHz where Double(frequencyHz) >= Double(band) / 2.0.squareRoot() - 0.5 {
            best = band
        }
        return best
    }
}
