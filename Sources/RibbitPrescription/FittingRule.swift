/// A prescriptive fitting rule: insertion gain in dB at each audiometric frequency from the
/// hearing thresholds in dB HL. Rules never prescribe attenuation: negative gains become 0.
public enum FittingRule: String, Sendable, CaseIterable, Codable {
    /// NAL-R (Byrne & Dillon 1986), with the NAL-RP profound-loss extension of X.
    case nalR = "nal-r"
    case halfGain = "half-gain"
    /// POGO II (Schwartz, Lyregaard & Lundh 1988).
    case pogo2
    /// The audiologist gives the gains directly.
    case explicit
    /// The compressive Cambridge rule (`Camfit`): level-dependent gains; format version 2.
    case camfit

    /// The first format version that knows the rule.
    public var formatVersion: Int { self == .camfit ? 2 : 1 }

    /// The rules a file of the given format version may name.
    public static func rules(inVersion version: Int) -> [FittingRule] { allCases.filter { $0.formatVersion <= version } }

    /// NAL-R's frequency-dependent constant k(f) in dB (125 Hz uses 250's, 8000 Hz uses 6000's).
    public static let nalRCorrection: [Int: Double] = [
        125: -17, 250: -17, 500: -8, 750: -3, 1000: 1, 1500: 1, 2000: -1, 3000: -2, 4000: -2, 6000: -2, 8000: -2,
    ]

    /// Insertion gains for the thresholds of one ear. `explicit` has no formula and returns nil.
    /// NAL-R needs thresholds at 500, 1000 and 2000 Hz, which the format requires. CAMFIT gives
    /// its gains for 65 dB SPL speech at `Camfit.defaultCentresHz`.
    public func insertionGains(thresholds: [Int: Int]) -> [Int: Double]? {
        switch self {
        case .explicit:
            return nil
        case .nalR:
            let sum = Double(thresholds[500, default: 0] + thresholds[1000, default: 0] + thresholds[2000, default: 0])
            let x = sum <= 180 ? 0.05 * sum : 9 + 0.116 * (sum - 180)
            return Dictionary(
                uniqueKeysWithValues: thresholds.map { frequency, h in
                    (frequency, max(0, x + 0.31 * Double(h) + Self.nalRCorrection[frequency, default: 0]))
                })
        case .camfit:
            return Camfit.gains(thresholds: thresholds, speechDBSPL: 65)
        case .halfGain:
            return thresholds.mapValues { max(0, Double($0) / 2) }
        case .pogo2:
            return Dictionary(
                uniqueKeysWithValues: thresholds.map { frequency, h in
                    let base = Double(h) / 2 - (frequency == 250 ? 10 : frequency == 500 ? 5 : 0)
                    let profound = max(0, Double(h) - 65) / 2
                    return (frequency, max(0, base + profound))
                })
        }
    }
}
