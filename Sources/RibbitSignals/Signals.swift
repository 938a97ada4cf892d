import Glibc

/// A small seeded generator (SplitMix64) so every test signal is reproducible.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Generated test signals.
public enum Signals {
    /// Gaussian white noise with the given RMS (Box-Muller).
    public static func whiteNoise(count: Int, rms: Double, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        var out = [Float](repeating: 0, count: count)
        var i = 0
        while i < count {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
            let u2 = Double.random(in: 0..<1, using: &random)
            let r = (-2 * log(u1)).squareRoot() * rms
            out[i] = Float(r * cos(2 * .pi * u2))
            if i + 1 < count { out[i + 1] = Float(r * sin(2 * .pi * u2)) }
            i += 2
        }
        return out
    }

    /// Uniform white noise in [-peak, peak].
    public static func uniformNoise(count: Int, peak: Float, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in Float.random(in: -peak...peak, using: &random) }
    }

    public static func sine(count: Int, frequencyHz: Double, sampleRate: Double, amplitude: Double) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRate)) }
    }

    public static func impulse(count: Int, at index: Int, amplitude: Float = 1) -> [Float] {
        var out = [Float](repeating: 0, count: count)
        out[index] = amplitude
        return out
    }
}
