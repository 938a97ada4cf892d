import Glibc

/// The C-infinity smooth step s(x) = f(x) / (f(x) + f(1 - x)), with f(t) = e^(-1/t) for t > 0
/// and f(t) = 0 otherwise.
///
/// s is 0 for x <= 0, 1 for x >= 1, infinitely differentiable everywhere (every derivative is
/// 0 at both ends), strictly increasing on (0, 1), and s(x) + s(1 - x) = 1. That last identity
/// is what makes a fade-out of 1 - s and a fade-in of s a partition of unity.
public enum SmoothStep {
    public static func value(_ x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let a = exp(-1 / x)
        let b = exp(-1 / (1 - x))
        return a / (a + b)
    }
}
