/// The headphones a hearing test plays through: each has its own reference equivalent threshold
/// sound pressure levels (RETSPL), the dB SPL that is 0 dB HL at each frequency.
public enum Transducer: String, Sendable, Codable, CaseIterable {
    /// Telephonics TDH-39 supra-aural.
    case tdh39
    /// Sennheiser HDA 200 circumaural.
    case hda200
    /// Etymotic ER-3A insert earphone.
    case er3a
    /// Any other headphones: no standard exists, so 0 dB HL is only as good as its biological
    /// calibration (`RETSPLTable.biologicallyCalibrated`).
    case consumer

    /// As a person reads it, with the coupler its RETSPL is for.
    public var referenceName: String {
        switch self {
        case .tdh39: "TDH-39 supra-aural (NBS 9-A coupler)"
        case .hda200: "HDA 200 circumaural (IEC 60318-1)"
        case .er3a: "ER-3A insert (HA-2 coupler)"
        case .consumer: "consumer headphones, as a TDH-39 (NBS 9-A coupler)"
        }
    }
}

/// dB SPL at 0 dB HL per audiometric frequency (Hz), for one transducer.
public struct RETSPLTable: Sendable, Equatable {
    public var transducer: Transducer
    public var dBSPLAtZeroHL: [Int: Double]
    /// False for the consumer profile until a normal-hearing listener has calibrated it, and
    /// false after that too: a biological calibration is not a standard.
    public var isStandard: Bool

    public init(transducer: Transducer, dBSPLAtZeroHL: [Int: Double], isStandard: Bool) {
        self.transducer = transducer
        self.dBSPLAtZeroHL = dBSPLAtZeroHL
        self.isStandard = isStandard
    }

    public static func standard(_ transducer: Transducer) -> RETSPLTable {
        switch transducer {
        case .tdh39: return RETSPLTable(transducer: .tdh39, dBSPLAtZeroHL: tdh39, isStandard: true)
        case .hda200: return RETSPLTable(transducer: .hda200, dBSPLAtZeroHL: hda200, isStandard: true)
        case .er3a: return RETSPLTable(transducer: .er3a, dBSPLAtZeroHL: er3a, isStandard: true)
        case .consumer: return RETSPLTable(transducer: .consumer, dBSPLAtZeroHL: consumerPlaceholder, isStandard: false)
        }
    }

    // ANSI S3.6-2010 / ISO 389-1:2017, TDH-39 on the NBS 9-A coupler (IEC 60318-3). The TDH-49/50
    // column of the same table is 0.5-2.5 dB higher (1 kHz 7.5, 4 kHz 12.0): not interchangeable.
    static let tdh39: [Int: Double] = [
        125: 45.0, 250: 25.5, 500: 11.5, 750: 8.0, 1000: 7.0, 1500: 6.5, 2000: 9.0, 3000: 10.0, 4000: 9.5, 6000: 15.5, 8000: 13.0,
    ]
    // ISO 389-8:2004 (and ANSI S3.6-2010), HDA 200 on IEC 60318-1 with the type 1 adapter. Not
    // checked against the standard itself (not at hand), but every value equals the HDA 200
    // table of the Auditory Modeling Toolbox (amtoolbox 1.4.0, arg_absolutethreshold.m).
    static let hda200: [Int: Double] = [
        125: 30.5, 250: 18.0, 500: 11.0, 750: 6.0, 1000: 5.5, 1500: 5.5, 2000: 4.5, 3000: 2.5, 4000: 9.5, 6000: 17.0, 8000: 17.5,
    ]
    // ISO 389-2:1994 (and ANSI S3.6-2010), ER-3A on the HA-2 coupler with its rigid tube, from
    // memory of ANSI S3.6's table (not checked against a copy). The same standard's values for the
    // occluded-ear simulator (IEC 60318-4) are higher: 1 kHz 5.5, 2 kHz 11.5, 4 kHz 15.0, 8 kHz
    // 15.5 (as amtoolbox tabulates them). Use this table only with a calibration measured in an
    // HA-2 (2 cc) coupler.
    static let er3a: [Int: Double] = [
        125: 26.0, 250: 14.0, 500: 5.5, 750: 2.0, 1000: 0.0, 1500: 2.0, 2000: 3.0, 3000: 3.5, 4000: 5.5, 6000: 2.0, 8000: 0.0,
    ]
    // Uncalibrated: the TDH-39 values as a starting point, because `ribbitd calibrate` measures
    // dB SPL at 0 dBFS in a coupler as for a supra-aural earphone. The real offsets of a
    // consumer headphone can be 10 dB away; only a biological calibration makes this usable.
    static let consumerPlaceholder = tdh39

    /// The table moved so that a normal-hearing reference listener's thresholds, measured with
    /// this table (dB HL per frequency), become 0 dB HL: RETSPL' = RETSPL + threshold. The
    /// reference is one listener, so the result is as good as that listener's hearing (about
    /// +-5 dB); it is never marked standard.
    public func biologicallyCalibrated(referenceThresholdsDBHL: [Int: Double]) -> RETSPLTable {
        var levels = dBSPLAtZeroHL
        for (frequencyHz, thresholdDBHL) in referenceThresholdsDBHL where levels[frequencyHz] != nil {
            levels[frequencyHz]! += thresholdDBHL
        }
        return RETSPLTable(transducer: transducer, dBSPLAtZeroHL: levels, isStandard: false)
    }
}
