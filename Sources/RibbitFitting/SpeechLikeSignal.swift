import Glibc
import RibbitDSP
import RibbitPrescription
import RibbitSignals

/// A speech-like test signal: `ribbitd verify` measures the target match with it, and the
/// fitting reads the compressor's detectors with it (`DetectorSpeechLevels`).
public enum SpeechLikeSignal {
    /// A speech-shaped, speech-modulated noise (the idea of the international speech test
    /// signal, ISTS): Gaussian noise shaped in one FFT to the long-term average speech spectrum
    /// (`Camfit.ltass70`, Byrne et al. 1994: each third-octave level spread evenly over its
    /// band, so the power density at f is 10^(L(f)/10) / (0.2316 f), 50 Hz to 16 kHz), times
    /// a syllabic envelope: half-sine "syllables" of 120-300 ms (about 4 a second) with random
    /// peaks from 0.3 to 1, and a 300 ms pause after every 1.2-1.8 s of speech. Scaled so its
    /// long-term level over the whole signal, pauses included, is `levelDBFS` (sine-referenced:
    /// a sine of peak 1 is 0 dBFS).
    public static func generate(count: Int, sampleRate: Double, levelDBFS: Double, seed: UInt64) -> [Float] {
        var n = 1
        while n < count { n *= 2 }
        let noise = Signals.whiteNoise(count: n, rms: 1, seed: seed)
        let fft = RealFFT(length: n, measure: false)
        let buffer = RealFFT.allocateReal(n), spectrum = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(buffer)
            RealFFT.free(spectrum)
        }
        buffer.update(from: noise, count: n)
        fft.forward(buffer, spectrum)
        for k in 0..<fft.complexCount {
            let f = Double(k) * sampleRate / Double(n)
            let gain = f < 50 || f > 16000 ? 0 : (pow(10, Camfit.interpolate(Camfit.ltass70, atHz: f) / 10) / (0.2316 * f)).squareRoot()
            spectrum[2 * k] *= Float(gain)
            spectrum[2 * k + 1] *= Float(gain)
        }
        fft.inverse(spectrum, buffer)
        var signal = Array(UnsafeBufferPointer(start: buffer, count: count))
        // The syllabic envelope.
        var random = SeededRandom(seed: seed &+ 1)
        var envelope = [Float](repeating: 0, count: count)
        var i = 0
        var untilPause = Double.random(in: 1.2...1.8, using: &random)
        while i < count {
            let length = Int(sampleRate * Double.random(in: 0.12...0.3, using: &random))
            let peak = Double.random(in: 0.3...1, using: &random)
            for j in 0..<length where i + j < count { envelope[i + j] = Float(peak * sin(Double.pi * Double(j) / Double(length))) }
            i += length
            untilPause -= Double(length) / sampleRate
            if untilPause <= 0 {
                i += Int(sampleRate * 0.3)
                untilPause = Double.random(in: 1.2...1.8, using: &random)
            }
        }
        for j in 0..<count { signal[j] *= envelope[j] }
        let meanSquare = signal.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(count, 1))
        let level = meanSquare > 0 ? 10 * log10(2 * meanSquare) : 0
        let scale = Float(pow(10, (levelDBFS - level) / 20))
        return signal.map { $0 * scale }
    }
}
