import Glibc

/// The periodic Hann window, w[i] = 0.5 - 0.5 cos(2 pi i / length) for i in 0..<length: the
/// one every analyser here uses (its length-periodic form, so 50 % overlaps sum to a constant).
enum HannWindow {
    static func value(_ i: Int, length: Int) -> Double {
        0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(length))
    }

    static func values(length: Int) -> [Double] {
        (0..<length).map { value($0, length: length) }
    }
}
