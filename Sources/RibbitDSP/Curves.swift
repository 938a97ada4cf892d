import Glibc

/// A gain curve over frequency: insertion gain in dB at a few anchor frequencies, interpolated
/// linearly in dB on a log-frequency axis and flat beyond the outermost anchors.
public struct GainCurve: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var frequencyHz: Double
        public var gainDB: Double
        public init(frequencyHz: Double, gainDB: Double) {
            self.frequencyHz = frequencyHz
            self.gainDB = gainDB
        }
    }

    /// Anchors sorted by frequency; an empty curve is 0 dB everywhere.
    public let points: [Point]

    public init(points: [Point]) {
        self.points = points.sorted { $0.frequencyHz < $1.frequencyHz }
    }

    public static let unity = GainCurve(points: [])

    public func gainDB(atHz frequencyHz: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if frequencyHz <= first.frequencyHz { return first.gainDB }
        if frequencyHz >= last.frequencyHz { return last.gainDB }
        let x = log2(frequencyHz)
        var lower = first
        for upper in points.dropFirst() {
            if frequencyHz <= upper.frequencyHz {
                let t = (x - log2(lower.frequencyHz)) / (log2(upper.frequencyHz) - log2(lower.frequencyHz))
                return lower.gainDB + t * (upper.gainDB - lower.gainDB)
            }
            lower = upper
        }
        return last.gainDB
    }

    /// The gain window value: 10^(gainDB / 20).
    public func amplitude(atHz frequencyHz: Double) -> Double {
        pow(10, gainDB(atHz: frequencyHz) / 20)
    }

}

/// The filter window: a low-pass curve that is 1 up to `passHz`, falls along the C-infinity
/// smooth step to 0 at `passHz * stopRatio`, and is 0 above. `nil` passHz means no low-pass.
public struct LowpassCurve: Sendable, Equatable {
    public static let stopRatio = 1.25
    public let passHz: Double?

    public init(passHz: Double?) { self.passHz = passHz }

    public static let none = LowpassCurve(passHz: nil)

    public func amplitude(atHz frequencyHz: Double) -> Double {
        guard let passHz else { return 1 }
        let x = (frequencyHz - passHz) / (passHz * (Self.stopRatio - 1))
        return 1 - SmoothStep.value(x)
    }
}

/// The combination window for one ear: filter window times gain window, as a function of
/// frequency. The engine's filter is designed from it once per prescription.
public struct CombinationCurve: Sendable, Equatable {
    public let gain: GainCurve
    public let lowpass: LowpassCurve

    public init(gain: GainCurve, lowpass: LowpassCurve) {
        self.gain = gain
        self.lowpass = lowpass
    }

    /// Unity gain and no low-pass: the filter is a pure delay.
    public static let unity = CombinationCurve(gain: .unity, lowpass: .none)

    public func amplitude(atHz frequencyHz: Double) -> Double {
        gain.amplitude(atHz: frequencyHz) * lowpass.amplitude(atHz: frequencyHz)
    }

    /// The curve sampled at the bins of an FFT of `fftLength` at `sampleRate` (k * fs / N for
    /// k in 0...N/2): the per-bin combination window.
    public func window(fftLength: Int, sampleRate: Double) -> [Double] {
        (0...fftLength / 2).map { amplitude(atHz: Double($0) * sampleRate / Double(fftLength)) }
    }
}
