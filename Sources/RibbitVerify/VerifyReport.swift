import RibbitFitting

/// What `ribbitd verify` measured, per ear, as an ANSI S3.22 / IEC 60118-0 style test-box
/// report plus a target match. Plain Codable values (the `--json` output). Levels are dB SPL
/// through the calibration; a level that cannot be given (digital silence: -inf) is nil.
public struct VerifyReport: Codable, Sendable {
    public var prescriptionName: String
    public var prescriptionText: String
    public var rule: String
    public var program: String
    public var trusted: Bool
    public var calibration: CalibrationInfo
    /// When the report was made (the caller's clock; the measurement has no I/O).
    public var date: String
    /// Wall-clock seconds the measurement took (the caller's clock).
    public var runSeconds: Double
    public var sampleRate: Double
    public var engine: String
    public var toneSeconds: Double
    /// Measured through the running daemon over JACK (`--live`), or offline on the engine.
    public var live: Bool
    /// Which of the two, in words the report prints.
    public var measuredThrough: String
    public var latency: Latency
    /// In plot order: right ear, then left.
    public var ears: [EarReport]
    /// The data log's summary (nil: no log on this machine, or logging off).
    public var wear: WearSummary?
    /// The wearer's program as the wearer hears it, adaptive features on, beside the test mode
    /// the figures above are measured in (nil: the program has none, or measured live).
    public var wearerProgram: WearerProgram? = nil

    /// A steady 60 dB SPL tone at each HFA frequency, as worn (volume 0), per ear in plot
    /// order: its gain in the test mode, and with the program's adaptive features on over the
    /// tone's second quarter second (0.25 to 0.5 s: what a reading right after the start sees, `onset`) and over
    /// the last half second of `steadySeconds` (what a steady sound gets once they acted).
    public struct WearerProgram: Codable, Sendable, Equatable {
        public var program: String
        /// What acts: "noise reduction", "steady-noise detector".
        public var features: [String]
        public var steadySeconds: Double
        public var rows: [Row]

        public struct Row: Codable, Sendable, Equatable {
            public var ear: String
            public var hz: Double
            public var testModeGainDB: Double?
            public var onsetGainDB: Double?
            public var steadyGainDB: Double?
        }
    }

    public struct CalibrationInfo: Codable, Sendable, Equatable {
        /// The profile's name, or "uncalibrated, +-20 dB".
        public var label: String
        public var inputDBSPLAtFullScale: Double
        public var outputLeftDBSPLAtFullScale: Double
        public var outputRightDBSPLAtFullScale: Double
        public var uncertaintyDB: Double?

        public init(
            label: String, inputDBSPLAtFullScale: Double, outputLeftDBSPLAtFullScale: Double, outputRightDBSPLAtFullScale: Double,
            uncertaintyDB: Double?
        ) {
            self.label = label
            self.inputDBSPLAtFullScale = inputDBSPLAtFullScale
            self.outputLeftDBSPLAtFullScale = outputLeftDBSPLAtFullScale
            self.outputRightDBSPLAtFullScale = outputRightDBSPLAtFullScale
            self.uncertaintyDB = uncertaintyDB
        }
    }

    public struct Latency: Codable, Sendable, Equatable {
        /// Where the output's peak lies after an impulse, minus where the impulse went in.
        public var measuredFrames: Int
        /// What the engine reports (`latencyFrames`), which the daemon tells JACK.
        public var reportedFrames: Int
        public var measuredMs: Double
        public var reportedMs: Double
        /// Live: what the test client's own loop through JACK added to the impulse's delay and
        /// was taken off `measuredFrames` (nil offline).
        public var loopFrames: Int? = nil

        public init(measuredFrames: Int, reportedFrames: Int, measuredMs: Double, reportedMs: Double, loopFrames: Int? = nil) {
            self.measuredFrames = measuredFrames
            self.reportedFrames = reportedFrames
            self.measuredMs = measuredMs
            self.reportedMs = reportedMs
            self.loopFrames = loopFrames
        }
    }
}

/// A frequency and a level or gain in dB (nil: nothing measurable).
public struct FrequencyPoint: Codable, Sendable, Equatable {
    public var hz: Double
    public var db: Double?
    public init(hz: Double, db: Double?) {
        self.hz = hz
        self.db = db
    }
}

public struct EarReport: Codable, Sendable {
    /// "left" or "right".
    public var ear: String
    /// Whether the prescription fits this ear (else it passes through under the output limit).
    public var fitted: Bool

    /// Output (dB SPL) for 90 dB SPL pure tones, volume at its top.
    public var ospl90: [FrequencyPoint]
    public var ospl90MaxDBSPL: Double?
    public var ospl90MaxHz: Double
    public var hfaOSPL90DBSPL: Double?

    /// Gain (dB) for 50 dB SPL pure tones, volume at its top (+10 dB).
    public var fullOnGain: [FrequencyPoint]
    public var hfaFullOnGainDB: Double?
    public var fullOnVolumeDB: Double

    /// HFA-OSPL90 - 77 dB, or the HFA full-on gain when that is lower.
    public var referenceTestGainDB: Double?
    /// The wearer's volume that brings the HFA gain at 60 dB SPL to the reference test gain.
    public var referenceVolumeDB: Double
    /// The HFA gain at 60 dB SPL measured at that volume.
    public var referenceHFAGainDB: Double?
    /// Output (dB SPL) for 60 dB SPL pure tones at the reference test setting.
    public var frequencyResponse: [FrequencyPoint]

    public var distortion: [Distortion]
    public var noise: Noise

    /// ANSI attack and release at 2 kHz, 55 <-> 90 dB SPL (nil: no step in the output to time).
    public var attackMs: Double?
    public var releaseMs: Double?
    /// What the fitting set (the compressor's settings).
    public var designedAttackMs: Double
    public var designedReleaseMs: Double
    /// Why the set times are not what was timed, so there is no verdict: the 2 kHz band does not
    /// compress, or the 90 dB SPL step reaches the output limiter (nil: they are, and judged).
    public var timesNotJudged: String?
    /// ANSI S3.22's verdicts (`timeVerdict`; nil: not judged, or nothing timed).
    public var attackPass: Bool?
    public var releasePass: Bool?

    /// ANSI S3.22's tolerance for attack and release: the set time +-5 ms or +-50 %, whichever
    /// is larger; nil where nothing was timed.
    public static func timeVerdict(measuredMs: Double?, setMs: Double) -> Bool? {
        measuredMs.map { abs($0 - setMs) <= max(5, setMs / 2) }
    }

    /// At the reference test setting (ANSI S3.22).
    public var ioCurves: [IOCurve]
    public var targetMatch: [TargetMatch]

    /// ribbit's own data sheet for this fitting, what a test box compares with: the figures the
    /// fitting's static curves and output limit give a pure tone (the band nearest its
    /// frequency; the limiter holding a steady sine at its knee under the ceiling). nil where
    /// not computed (reports from before).
    public var specOSPL90MaxDBSPL: Double? = nil
    public var specHFAOSPL90DBSPL: Double? = nil
    public var specHFAFullOnGainDB: Double? = nil

    /// ANSI S3.22's tolerances against the specification.
    public static let ospl90MaxToleranceDB = 3.0
    public static let hfaOSPL90ToleranceDB = 4.0
    public static let hfaFullOnGainToleranceDB = 5.0
    /// Total harmonic distortion: the specification (ribbit's: none) plus 3 %.
    public static let thdTolerancePercent = 3.0

    /// The verdicts (nil: nothing to judge).
    public var ospl90MaxPass: Bool? {
        guard let measured = ospl90MaxDBSPL, let spec = specOSPL90MaxDBSPL else { return nil }
        return measured <= spec + Self.ospl90MaxToleranceDB
    }
    public var hfaOSPL90Pass: Bool? {
        guard let measured = hfaOSPL90DBSPL, let spec = specHFAOSPL90DBSPL else { return nil }
        return abs(measured - spec) <= Self.hfaOSPL90ToleranceDB
    }
    public var hfaFullOnGainPass: Bool? {
        guard let measured = hfaFullOnGainDB, let spec = specHFAFullOnGainDB else { return nil }
        return abs(measured - spec) <= Self.hfaFullOnGainToleranceDB
    }
    public var distortionPass: Bool? {
        let measured = distortion.compactMap(\.thdPercent)
        return measured.isEmpty ? nil : measured.allSatisfy { $0 <= Self.thdTolerancePercent }
    }

    public struct Distortion: Codable, Sendable, Equatable {
        public var hz: Double
        public var inputDBSPL: Double
        /// 100 sqrt(sum of harmonics 2..5 squared) / fundamental.
        public var thdPercent: Double?
    }

    public struct Noise: Codable, Sendable, Equatable {
        /// Output for digital silence in (nil: exactly silent out).
        public var silenceOutputDBSPL: Double?
        /// The HFA gain at 50 dB SPL at the reference test setting.
        public var hfa50GainDB: Double?
        /// The equivalent input noise of the processing (ANSI S3.22: the output noise less the
        /// HFA-50 gain) with digital silence in; nil: it adds none (silence out). A real aid's
        /// EIN is then its microphone's, which a digital measurement cannot see.
        public var einDBSPL: Double?
    }

    public struct IOCurve: Codable, Sendable, Equatable {
        public var hz: Double
        /// (input dB SPL, output dB SPL).
        public var points: [IOPoint]
    }

    public struct IOPoint: Codable, Sendable, Equatable {
        public var inputDBSPL: Double
        public var outputDBSPL: Double?
    }

    public struct TargetMatch: Codable, Sendable, Equatable {
        /// Overall level of the speech-like signal.
        public var levelDBSPL: Double
        public var rows: [TargetRow]
        /// Every frequency within +-5 dB.
        public var pass: Bool
        /// Every frequency from 250 to 2000 Hz within +-3 dB.
        public var strictPass: Bool
        /// The largest |deviation|, and where.
        public var worstDeviationDB: Double
        public var worstHz: Double
        /// The output's largest sample (dBFS) and whether it reached the sample ceiling (within
        /// 1 dB): loud speech then gets less than its target gain, by design.
        public var outputPeakDBFS: Double?
        public var outputLimited: Bool

        /// The rows short of their target (target - delivered >= 0.05 dB).
        public var cappedRows: [TargetRow] { rows.filter { $0.cappedBy != nil } }
    }

    public struct TargetRow: Codable, Sendable, Equatable {
        public var hz: Double
        public var inputDBSPL: Double
        public var outputDBSPL: Double
        public var measuredGainDB: Double
        /// The rule's target for this speech level (above ribbit's maximum too).
        public var targetGainDB: Double
        /// What ribbit means to play: the target, less the band's shortfall where a maximum
        /// caps it (`CompressorFitting.delivery`). The deviation and the pass are judged on it.
        public var deliveredGainDB: Double
        /// What holds the band below its target (nil: it plays the target).
        public var cappedBy: GainCap?
        /// measured - delivered.
        public var deviationDB: Double
        public var pass: Bool
        /// nil outside 250-2000 Hz.
        public var strictPass: Bool?
    }
}
