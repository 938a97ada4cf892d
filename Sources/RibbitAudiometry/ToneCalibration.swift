import RibbitPrescription

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

    // MARK: Masking noise

    /// A third-octave noise band's effective masking level (dB EM) is the dB HL of the tone it
    /// just masks; the band's SPL for 0 dB EM lies this far above the tone's RETSPL (ISO 389-4 /
    /// ANSI S3.6 reference levels for narrow-band masking noise; 4 dB up to 500 Hz, 5 at 750, 6
    /// from 1 to 3 kHz, 5 above; quoted from memory, to be checked against the standard: masking
    /// adds 10 dB of safety on top, so a decibel here moves no threshold).
    public static func narrowBandCorrectionDB(frequencyHz: Int) -> Double {
        switch frequencyHz {
        case ..<630: 4
        case ..<1000: 5
        case ...3150: 6
        default: 5
        }
    }

    /// The noise's level in dBFS as a sine of the same power (how the audio process takes it).
    public func maskingDBFS(dBEM: Double, frequencyHz: Int) -> Double? {
        dBFS(dBHL: dBEM + Self.narrowBandCorrectionDB(frequencyHz: frequencyHz), frequencyHz: frequencyHz)
    }

    /// The most masking noise this headphone plays (dB EM, on the 5 dB grid): its peak, `peakOverSineDB`
    /// above a sine of the same power, under the tone's own clip limit, and its power no more
    /// than a tone at the ceiling's.
    public func maximumMaskingDBEM(frequencyHz: Int, peakOverSineDB: Double, ceilingDBHL: Double = selfTestCeilingDBHL) -> Int? {
        guard let clip = clipLimitDBHL(frequencyHz: frequencyHz) else { return nil }
        let limit = min(clip - peakOverSineDB, ceilingDBHL) - Self.narrowBandCorrectionDB(frequencyHz: frequencyHz)
        return Int((limit / 5).rounded(.down)) * 5
    }
}
