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

/// How digital level becomes sound pressure at one ear, as a calibration profile measured it:
/// the dB SPL of a 0 dBFS (peak 1) 1 kHz sine, and the headphone's response relative to 1 kHz.
public struct ToneCalibration: Sendable, Equatable, Codable {
    public var dBSPLAtZeroDBFS: Double
    /// dB re 1 kHz per frequency (Hz); a frequency not listed is taken as flat.
    public var responseDB: [Int: Double]

    public init(dBSPLAtZeroDBFS: Double, responseDB: [Int: Double] = [:]) {
        self.dBSPLAtZeroDBFS = dBSPLAtZeroDBFS
        self.responseDB = responseDB
    }

    public func dBSPLAtZeroDBFS(frequencyHz: Int) -> Double { dBSPLAtZeroDBFS + (responseDB[frequencyHz] ?? 0) }
}

/// dB HL -> dB SPL -> dBFS for one ear's headphone, and the highest level it can play.
public struct ToneLevels: Sendable, Equatable {
    public var table: RETSPLTable
    public var calibration: ToneCalibration
    /// Never closer than this to clipping (a sine's peak at 0 dBFS).
    public static let clipMarginDB = 1.0
    /// What a self-test may play unless an audiologist's profile raises it.
    public static let selfTestCeilingDBHL = 90.0

    /// The highest sine level the player really plays, in dBFS: the daemon clamps a tone to its
    /// tone limit and to 1 dB under the output ceiling, and a presentation above that would be
    /// logged at a level never played (a made-up threshold). Never above -`clipMarginDB`.
    public var highestPlayedDBFS: Double

    public init(table: RETSPLTable, calibration: ToneCalibration, highestPlayedDBFS: Double = -ToneLevels.clipMarginDB) {
        self.table = table
        self.calibration = calibration
        self.highestPlayedDBFS = min(highestPlayedDBFS, -Self.clipMarginDB)
    }

    /// nil for a frequency the table has no value for: such a tone must not be played.
    public func dBSPL(dBHL: Double, frequencyHz: Int) -> Double? {
        guard let retspl = table.dBSPLAtZeroHL[frequencyHz] else { return nil }
        return dBHL + retspl
    }

    /// The sine's level re a full-scale sine (0 dBFS: peak 1).
    public func dBFS(dBHL: Double, frequencyHz: Int) -> Double? {
        guard let spl = dBSPL(dBHL: dBHL, frequencyHz: frequencyHz) else { return nil }
        return spl - calibration.dBSPLAtZeroDBFS(frequencyHz: frequencyHz)
    }

    public func dBHL(dBFS: Double, frequencyHz: Int) -> Double? {
        guard let retspl = table.dBSPLAtZeroHL[frequencyHz] else { return nil }
        return dBFS + calibration.dBSPLAtZeroDBFS(frequencyHz: frequencyHz) - retspl
    }

    /// The highest dB HL this headphone plays: at least `clipMarginDB` below clipping, and no
    /// higher than the player plays (`highestPlayedDBFS`).
    public func clipLimitDBHL(frequencyHz: Int) -> Double? { dBHL(dBFS: highestPlayedDBFS, frequencyHz: frequencyHz) }

    /// The highest level the test may present: the clip limit, and the ceiling (the self-test's
    /// 90 dB HL unless an audiologist raises it), on the procedure's 5 dB grid.
    public func maximumDBHL(frequencyHz: Int, ceilingDBHL: Double = selfTestCeilingDBHL) -> Int? {
        guard let clip = clipLimitDBHL(frequencyHz: frequencyHz) else { return nil }
        let limit = min(clip, ceilingDBHL)
        return Int((limit / 5).rounded(.down)) * 5
    }
}
