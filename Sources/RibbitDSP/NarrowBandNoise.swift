import Glibc

/// Narrow-band masking noise for a hearing test: one third of an octave around a test frequency
/// (ANSI S3.6 asks for between a third and half an octave), as a loop that repeats seamlessly.
/// Built in the frequency domain: every FFT bin inside the band at the same magnitude with a
/// random phase, nothing outside, so one period of the inverse transform is the loop and its
/// end meets its start. Pure; built off the audio thread.
public enum NarrowBandNoise {
    /// 2^16 frames: 1.4 s at 48 kHz, 0.73 Hz between components, a few hundred inside even the
    /// 250 Hz band: heard as noise, not as tones, and the loop's repeat is not heard.
    public static let loopLength = 65536
    /// The loop's peak over its RMS is at most this (a draw above it is drawn again): 4.5 is
    /// 13.1 dB, 10.1 dB over a sine of the same power, so the noise's level can be limited
    /// like a tone's with that margin (`peakOverSineDB`).
    public static let maximumCrest: Float = 4.5
    public static var peakOverSineDB: Double { 20 * log10(Double(maximumCrest) / 2.squareRoot()) }
    public static let bandOctaves = 1.0 / 3

    /// The band's edges around `centerHz`.
    public static func edges(centerHz: Double) -> (low: Double, high: Double) {
        let half = pow(2, bandOctaves / 2)
        return (centerHz / half, centerHz * half)
    }

    /// One loop of `length` samples at `sampleRate`, RMS 1 and crest at most `maximumCrest`.
    public static func loop(centerHz: Double, sampleRate: Double, length: Int = loopLength) -> [Float] {
        let fft = RealFFT(length: length, planning: .estimate)
        let spectrum = RealFFT.allocateComplex(fft.complexCount)
        let samples = RealFFT.allocateReal(length)
        defer {
            RealFFT.free(spectrum)
            RealFFT.free(samples)
        }
        let (low, high) = edges(centerHz: centerHz)
        let binHz = sampleRate / Double(length)
        let bins = max(1, Int((low / binHz).rounded(.up)))...max(1, min(fft.complexCount - 2, Int((high / binHz).rounded(.down))))
        var generator = SystemRandomNumberGenerator()
        var best: [Float] = []
        var bestCrest = Float.infinity
        // Draws whose peak is far out are rare (a few in a hundred): a handful of tries at most.
        for _ in 0..<20 {
            for i in 0..<(2 * fft.complexCount) { spectrum[i] = 0 }
            for k in bins {
                let phase = Double.random(in: 0..<(2 * Double.pi), using: &generator)
                spectrum[2 * k] = Float(cos(phase))
                spectrum[2 * k + 1] = Float(sin(phase))
            }
            fft.inverse(spectrum, samples)
            var sumSquares = 0.0
            var peak: Float = 0
            for i in 0..<length {
                sumSquares += Double(samples[i]) * Double(samples[i])
                peak = max(peak, abs(samples[i]))
            }
            let rms = Float((sumSquares / Double(length)).squareRoot())
            guard rms > 0 else { break }
            let crest = peak / rms
            if crest < bestCrest {
                bestCrest = crest
                best = (0..<length).map { samples[$0] / rms }
            }
            if crest <= maximumCrest { break }
        }
        return best
    }
}
