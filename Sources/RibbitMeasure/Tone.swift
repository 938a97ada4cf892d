import Glibc
import RibbitDSP

/// A sine of known frequency in a recording: its amplitude and its distortion.
public enum Tone {
    /// The peak amplitude of the component at `frequencyHz`: a projection on cos and sin under a
    /// symmetric Hann window, 2 |sum w x e^(-i w n)| / sum w (exact for a sine at that frequency
    /// over many periods; neighbours more than two bins away leak below -30 dB).
    public static func amplitude(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double {
        let n = x.count
        guard n > 1 else { return 0 }
        var re = 0.0, im = 0.0, weights = 0.0
        let omega = 2 * Double.pi * frequencyHz / sampleRate
        let start = x.startIndex
        for i in 0..<n {
            let w = HannWindow.symmetricValue(i, length: n)
            let v = Double(x[start + i]) * w
            re += v * cos(omega * Double(i))
            im += v * sin(omega * Double(i))
            weights += w
        }
        return 2 * (re * re + im * im).squareRoot() / weights
    }

    /// Total harmonic distortion in percent, as a test box gives it: 100 sqrt(A2^2 + ... + A5^2) / A1,
    /// harmonics above Nyquist left out. nil when there is no fundamental.
    public static func thdPercent(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double? {
        let fundamental = amplitude(x, frequencyHz: frequencyHz, sampleRate: sampleRate)
        guard fundamental > 1e-12 else { return nil }
        var power = 0.0
        for k in 2...5 where Double(k) * frequencyHz < sampleRate / 2 {
            let a = amplitude(x, frequencyHz: Double(k) * frequencyHz, sampleRate: sampleRate)
            power += a * a
        }
        return 100 * power.squareRoot() / fundamental
    }

    /// THD+N in dB relative to the fundamental: the least-squares fit of a sin + b cos + dc at
    /// that frequency is removed; what remains is harmonics and noise.
    public static func thdPlusNoiseDB(_ x: ArraySlice<Float>, frequencyHz: Double, sampleRate: Double) -> Double {
        let omega = 2 * Double.pi * frequencyHz / sampleRate
        // The normal equations of the three-parameter fit (sin, cos, 1).
        var m = [Double](repeating: 0, count: 9)
        var b = [Double](repeating: 0, count: 3)
        for (i, v) in x.enumerated() {
            let basis = [sin(omega * Double(i)), cos(omega * Double(i)), 1.0]
            for r in 0..<3 {
                b[r] += basis[r] * Double(v)
                for c in 0..<3 { m[r * 3 + c] += basis[r] * basis[c] }
            }
        }
        let coefficients = LinearPhaseFIR.solveSymmetricPositiveDefinite(m, b, n: 3)
        var residualPower = 0.0
        var fundamentalPower = 0.0
        for (i, v) in x.enumerated() {
            let fit = coefficients[0] * sin(omega * Double(i)) + coefficients[1] * cos(omega * Double(i))
            let residual = Double(v) - fit - coefficients[2]
            residualPower += residual * residual
            fundamentalPower += fit * fit
        }
        return 10 * log10(residualPower / fundamentalPower)
    }
}
