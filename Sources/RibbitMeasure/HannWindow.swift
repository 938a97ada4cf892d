import Glibc

/// The Hann window, in the two forms the analysers use: periodic, w[i] = 0.5 - 0.5 cos(2 pi i / n)
/// (50 % overlaps sum to a constant: spectra, the dump, the test box's band levels), and
/// symmetric, cos(2 pi i / (n - 1)) (both ends zero: a tone's projection over a whole recording).
public enum HannWindow {
    public static func value(_ i: Int, length: Int) -> Double {
        0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(length))
    }

    public static func values(length: Int) -> [Double] {
        (0..<length).map { value($0, length: length) }
    }

    public static func symmetricValue(_ i: Int, length: Int) -> Double {
        length > 1 ? value(i, length: length - 1) : 1
    }
}
