import Glibc

/// The Hann window, in the three forms ribbit uses: periodic, w[i] = 0.5 - 0.5 cos(2 pi i / n)
/// (50 % overlaps sum to a constant: spectra, the dump, the test box's band levels, the
/// compressor's detector); symmetric, cos(2 pi i / (n - 1)) (both ends zero: a tone's
/// projection over a whole recording); and centred, cos(2 pi (i + 1/2) / n) (no zero weight:
/// the voice analysis's short level window).
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

    public static func centredValue(_ i: Int, length: Int) -> Double {
        0.5 - 0.5 * cos(2 * Double.pi * (Double(i) + 0.5) / Double(length))
    }
}
