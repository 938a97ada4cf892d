import RibbitDSP
import RibbitFitting
import RibbitPrescription

/// What the dump shows of the fitting of one ear: what the prescription asks for and what the
/// engine's filter does. Computed once per published filter, off the RT thread.
public struct EarGains: Codable, Sendable, Equatable {
    /// The target gain (combination window) at each band centre, dB; nil where it is 0 (stop band).
    public var targetGainDB: [Double?]
    /// The combination window (gain window times low-pass) at each spectrum bin, dB; nil where 0.
    public var combinationWindowDB: [Double?]
    /// The magnitude response of the filter the engine runs, at each spectrum bin, dB.
    public var appliedGainDB: [Double]

    /// The target gain at the band centres (`DumpAnalyzer.bandCentersHz`), as the analyser names it.
    public var targetBandsDB: [Double?] { targetGainDB }

    /// - Parameters:
    ///   - curve: the ear's combination window (`.unity` in bypass or without a prescription).
    ///   - filters, channel: what the engine runs for this ear.
    public init(curve: CombinationCurve, filters: FilterSet, channel: Int, sampleRate: Double) {
        func decibels(_ amplitude: Double) -> Double? {
            amplitude > 0 ? DumpAnalyzer.decibelsOfPower(amplitude * amplitude) : nil
        }
        let bins = DumpAnalyzer.spectrumFrequenciesHz(sampleRate: sampleRate)
        targetGainDB = DumpAnalyzer.bandCentersHz.map { decibels(curve.amplitude(atHz: $0)) }
        combinationWindowDB = bins.map { decibels(curve.amplitude(atHz: $0)) }
        appliedGainDB = filters.magnitudeDB(channel: channel, atHz: bins, sampleRate: sampleRate, floorDB: DumpAnalyzer.floorDB)
            .map { ($0 * 100).rounded() / 100 + 0 }  // + 0: no "-0" from a tiny ripple
    }
}

/// What the debug dump shows of one ear's fitting: the target and applied gains, and the
/// thresholds behind them.
public struct DumpFitting: Sendable {
    public let gains: EarGains
    /// dB HL per frequency (Hz); empty for explicit gains, bypass or no prescription.
    public let thresholds: [Int: Int]
    /// The frequencies among `thresholds` that got no response at that level.
    public let noResponse: Set<Int>

    /// - Parameters:
    ///   - filters: what the engine runs, one channel per ear in `ears` order.
    ///   - fitting: what they were designed from; nil for a pure delay (bypass, no prescription).
    public static func ears(_ ears: [Ear], filters: FilterSet, fitting: Fitting?, sampleRate: Double) -> [DumpFitting] {
        ears.enumerated().map { channel, ear in
            DumpFitting(
                gains: EarGains(curve: fitting?.curve(for: ear) ?? .unity, filters: filters, channel: channel, sampleRate: sampleRate),
                thresholds: fitting?.prescription.thresholds[ear] ?? [:], noResponse: fitting?.prescription.noResponse[ear] ?? [])
        }
    }
}
