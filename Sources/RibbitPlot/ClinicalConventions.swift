import Glibc
import RibbitPrescription

/// How audiology draws the two ears, for every plot ribbit makes (the dump's SVG, the terminal
/// view, and later reports and web pages): the right ear on the left, in red, with a circle;
/// the left ear on the right, in blue, with a cross (ASHA 1990 audiogram symbols, and how
/// fitting software and audiometer print-outs lay out the ears, facing the patient).
extension Ear {
    /// Left to right on a page or screen.
    public static let plotOrder: [Ear] = [.right, .left]

    /// "Right ear" / "Left ear".
    public var plotTitle: String { self == .right ? "Right ear" : "Left ear" }

    /// SVG/CSS colour.
    public var plotColor: String { self == .right ? "#d00000" : "#0050d0" }

    /// The ANSI SGR parameter of the ear's colour in a terminal (bright red, bright blue: both
    /// readable on dark and light backgrounds).
    public var terminalColor: String { self == .right ? "91" : "94" }

    /// The air-conduction threshold symbol (unmasked).
    public var audiogramSymbol: AudiogramSymbol { self == .right ? .circle : .cross }
    /// The air-conduction threshold symbol measured with masking noise in the other ear.
    public var maskedAudiogramSymbol: AudiogramSymbol { self == .right ? .triangle : .square }
}

public enum AudiogramSymbol: String, Sendable {
    case circle = "O"
    case cross = "X"
    /// Masked, right ear (ASHA 1990).
    case triangle = "△"
    /// Masked, left ear.
    case square = "□"
}

/// Round axis ticks: every multiple of `step` from `low` to `high` (both included when they
/// are multiples), so no axis ever says 13.7 dB.
public func roundTicks(from low: Double, to high: Double, step: Double) -> [Double] {
    precondition(step > 0 && low <= high)
    let first = Int((low / step).rounded(.up)), last = Int((high / step).rounded(.down))
    guard first <= last else { return [] }
    return (first...last).map { Double($0) * step }  // whole multiples: never -0, no drift
}

/// A log-frequency axis: `pixelsPerOctave` to the right per doubling, `lowHz` at `left`.
public struct LogFrequencyAxis: Sendable, Equatable {
    public var left: Double
    public var lowHz: Double
    public var highHz: Double
    public var pixelsPerOctave: Double

    public init(left: Double, lowHz: Double, highHz: Double, pixelsPerOctave: Double) {
        self.left = left
        self.lowHz = lowHz
        self.highHz = highHz
        self.pixelsPerOctave = pixelsPerOctave
    }

    /// An axis from `lowHz` to `highHz` that is `width` pixels wide.
    public init(left: Double, width: Double, lowHz: Double, highHz: Double) {
        self.init(left: left, lowHz: lowHz, highHz: highHz, pixelsPerOctave: width / log2(highHz / lowHz))
    }

    public var width: Double { log2(highHz / lowHz) * pixelsPerOctave }

    /// Clamped to the axis, so nothing lands outside the plot.
    public func x(_ hz: Double) -> Double { left + log2(min(max(hz, lowHz), highHz) / lowHz) * pixelsPerOctave }

    /// Octave tick frequencies of audiometry within the axis (125 Hz to 8 kHz).
    public var octaveTicksHz: [Int] { AudiogramScale.octaveTicksHz.filter { Double($0) >= lowHz && Double($0) <= highHz } }
}

/// "125", "1k", "1.5k", "8k".
public func frequencyLabel(_ hz: Int) -> String {
    guard hz >= 1000 else { return String(hz) }
    return hz % 1000 == 0 ? "\(hz / 1000)k" : "\(hz / 1000).\(hz % 1000 / 100)k"
}
