import Glibc

/// Levels of recorded samples. dBFS here is sine-referenced, as `Calibration` defines it: a sine
/// of peak 1 is 0 dBFS, so any signal's level is 10 log10(2 * mean square).
public enum Levels {
    public static func rms<C: Collection>(_ x: C) -> Double where C.Element == Float {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    /// Sine-referenced level in dBFS; nil for digital silence or no samples.
    public static func dBFS(_ x: ArraySlice<Float>) -> Double? {
        let r = rms(x)
        return r > 0 ? 10 * log10(2 * r * r) : nil
    }

    /// 20 log10 of an amplitude ratio.
    public static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }
}
