import RibbitPrescription

/// A finished (or stopped) hearing test as the store keeps it and every export reads it: the
/// result with its audit log, and what the levels went through. The result is self-measured
/// and in situ, whatever the headphones: every export says so.
public struct HearingTestRecord: Sendable, Equatable, Codable {
    /// The store's id (nil until stored).
    public var id: Int64?
    /// When the test ended, ISO 8601 in UTC ("2026-11-24T03:05:00Z").
    public var date: String
    public var transducer: Transducer
    /// The calibration profile's name; nil: uncalibrated (the documented defaults, levels
    /// uncertain by `uncertaintyDB`).
    public var calibrationProfile: String?
    /// dB SPL of a 0 dBFS 1 kHz sine at each ear, and at the microphone (the noise check).
    public var outputLeftDBSPL: Double
    public var outputRightDBSPL: Double
    public var inputDBSPL: Double
    public var uncertaintyDB: Double?
    /// The RETSPL table used: a standard one, or not (consumer headphones).
    public var retsplIsStandard: Bool
    /// Consumer headphones' biological calibration in force (`ribbitd audiogram reference`):
    /// the reference listener's thresholds (dB HL by Hz, re the TDH-39 starting values) that
    /// were made 0 dB HL. nil: none.
    public var biologicalReferenceDBHL: [Int: Double]?
    /// The highest level the test could present (dB HL), a self-test's 90 unless raised.
    public var ceilingDBHL: Double
    public var result: HearingTestResult

    public init(
        id: Int64? = nil, date: String, transducer: Transducer, calibrationProfile: String?, outputLeftDBSPL: Double,
        outputRightDBSPL: Double, inputDBSPL: Double, uncertaintyDB: Double?, retsplIsStandard: Bool, ceilingDBHL: Double,
        result: HearingTestResult, biologicalReferenceDBHL: [Int: Double]? = nil
    ) {
        self.biologicalReferenceDBHL = biologicalReferenceDBHL
        self.id = id
        self.date = date
        self.transducer = transducer
        self.calibrationProfile = calibrationProfile
        self.outputLeftDBSPL = outputLeftDBSPL
        self.outputRightDBSPL = outputRightDBSPL
        self.inputDBSPL = inputDBSPL
        self.uncertaintyDB = uncertaintyDB
        self.retsplIsStandard = retsplIsStandard
        self.ceilingDBHL = ceilingDBHL
        self.result = result
    }

    /// The sentence every export carries.
    public static let disclaimer =
        "Self-administered, in-situ screening result measured with ribbit: not a clinical audiogram. "
        + "Have it confirmed by an audiologist before it is relied on."
}
