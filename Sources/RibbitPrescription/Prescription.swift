import Glibc
import RibbitSystem

/// One ear. Audiology draws the right ear in red with O and the left in blue with X.
public enum Ear: String, Sendable, CaseIterable, Codable {
    case left, right

    /// A refusal that says what an ear is, for every file and request that names one.
    public init(from decoder: Decoder) throws {
        let single = try decoder.singleValueContainer()
        let name = try single.decode(String.self)
        guard let ear = Ear(rawValue: name) else {
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "an ear is \"left\" or \"right\", not \"\(name)\"")
        }
        self = ear
    }
}

/// Whether quiet sounds get less gain (noise, microphone hiss), and below which band level.
public enum Expansion: Sendable, Equatable {
    case off
    /// At `Prescription.defaultExpansionKneeDBSPL`.
    case on
    /// Below this band input level in dB SPL.
    case knee(Double)
}

/// Nonlinear frequency compression above a cut-off (version 2, `lowering-left: 2000 2`): a
/// sound at f above `cutoffHz` is played at cutoffHz (f / cutoffHz)^(1 / ratio), so cues from
/// 4 to 8 kHz land where a steep high-frequency loss still hears (Simpson et al. 2005). Below
/// the cut-off nothing moves. docs/prescription-format.md, "Frequency lowering".
public struct FrequencyLowering: Sendable, Hashable {
    /// Where lowering starts, Hz.
    public var cutoffHz: Double
    /// The compression ratio on a log-frequency axis above the cut-off (2: an octave above it
    /// lands half an octave above it).
    public var ratio: Double

    public static let cutoffRangeHz = 1500.0...6000.0
    public static let ratioRange = 1.5...4.0

    public init(cutoffHz: Double, ratio: Double) {
        self.cutoffHz = cutoffHz
        self.ratio = ratio
    }

    /// Where a sound at `hz` is played: itself up to the cut-off, cutoffHz (hz / cutoffHz)^(1 /
    /// ratio) above it.
    public func mappedHz(_ hz: Double) -> Double {
        hz <= cutoffHz ? hz : cutoffHz * pow(hz / cutoffHz, 1 / ratio)
    }

    /// The value as written after `lowering-left:`: the cut-off in Hz and the ratio.
    public var text: String { "\(Prescription.number(cutoffHz)) \(Prescription.number(ratio))" }
}

/// A hearing-aid prescription: format version 1 or 2 (docs/prescription-format.md).
public struct Prescription: Sendable, Equatable {
    /// Version 1's number and header (what every version-1 file starts with).
    public static let formatVersion = 1
    public static let header = "RIBBIT-RX 1"
    /// The newest version this ribbit reads; version 2 adds compression (rule camfit, g50/g80
    /// gains, attack, release, expansion, UCLs and an output limit in dB SPL).
    public static let latestVersion = 2
    public static let attackRangeMs = 1.0...200.0
    public static let releaseRangeMs = 10.0...5000.0
    public static let defaultExpansionKneeDBSPL = 38.0
    public static let expansionKneeRange = 20.0...60.0
    /// Uncomfortable loudness levels in dB HL.
    public static let uclRange = 50...140
    /// `limit:` in dB SPL; the top is the hard maximum for signed prescriptions.
    public static let limitRange = 80.0...132.0
    public static let audiometricFrequencies = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    public static let requiredFrequencies = [500, 1000, 2000, 4000]
    public static let thresholdRange = -10...120
    /// Typed (explicit) gains outside this are refused as typos: nobody is fitted with -40 dB,
    /// and no band plays more than `maxGainDB`.
    public static let explicitGainRange = -30.0...maxGainDB
    /// The most insertion gain ribbit plays in any band (docs/prescription-format.md, "Maximum
    /// gain"): a rule's gain above it plays at it and the shortfall is said, never refused.
    public static let maxGainDB = 50.0
    public static let defaultLowpassHz = 8000
    public static let lowpassRange = 1000...20000
    public static let defaultMaxOutputDBFS = -1.0
    public static let maxOutputRange = -40.0...0.0
    public static let maxPayloadBytes = 4096

    public var name: String
    /// The environment it is for: quiet, noisy, music, outdoor, ...
    public var environment: String
    public var audiologist: String?
    public var patient: String?
    /// YYYY-MM-DD.
    public var date: String?
    public var note: String?
    public var rule: FittingRule
    /// Hearing thresholds in dB HL per audiometric frequency in Hz, per ear that was tested.
    /// Where `noResponse` holds the frequency, the value is the level tested without a
    /// response: the threshold is at least that (`8000=90nr`).
    public var thresholds: [Ear: [Int: Int]]
    /// Frequencies (Hz) per ear where the audiometer got no response at the level in
    /// `thresholds`; the fitting rules take that level as the threshold.
    public var noResponse: [Ear: Set<Int>]
    /// Target insertion gains in dB per frequency, per ear (rule `explicit` only).
    public var explicitGains: [Ear: [Int: Double]]
    /// Low-pass corner in Hz; nil means no low-pass.
    public var lowpassHz: Int?
    public var maxOutputDBFS: Double
    /// `x-` keys in the order given; ribbit ignores them but keeps them.
    public var extensions: [(key: String, value: String)]
    /// The `sig:` line's value, when present (verified by a later version).
    public var signature: String?
    /// 1 or 2: the header written. Version-2 keys need 2.
    public var version: Int = 1
    /// Version 2, rule `explicit`: per ear, the gains in dB for speech at 50 and 80 dB SPL per
    /// band centre (instead of `gain-` for that ear).
    public var gains50: [Ear: [Int: Double]] = [:]
    public var gains80: [Ear: [Int: Double]] = [:]
    /// Compressor attack and release times (ms); nil: the defaults (speech times).
    public var attackMs: Double?
    public var releaseMs: Double?
    public var expansion: Expansion = .off
    /// Uncomfortable loudness levels in dB HL by frequency, per ear.
    public var ucl: [Ear: [Int: Int]] = [:]
    /// The headphones the UCLs were measured with (`ucl-transducer`): dB HL become dB SPL through
    /// their RETSPL, in their coupler. nil: not said, and the ISO 389-7 free-field thresholds
    /// convert them, as before the key existed (lower than the TDH-39's and HDA 200's tables at
    /// every frequency): an unsaid frame never raises a limit; only an audiologist's key does.
    public var uclTransducer: Transducer?

    /// dB SPL at 0 dB HL for the UCLs at a frequency: the named headphones' RETSPL, or ISO 389-7.
    public func uclReferenceDBSPL(atHz frequencyHz: Double) -> Double {
        guard let uclTransducer else { return Camfit.retsplDB(atHz: frequencyHz) }
        return Camfit.interpolate(RETSPLTable.standard(uclTransducer).dBSPLAtZeroHL, atHz: frequencyHz)
    }
    /// The most any band may put out, in dB SPL; nil: the caps ribbit applies by itself.
    public var limitDBSPL: Double?
    /// How far the wearer may turn the volume up or down, dB; nil: `defaultVolumeRangeDB`.
    public var volumeRangeDB: Double?
    /// Frequency lowering per ear (`lowering-left`, `lowering-right`); an ear without it is not
    /// lowered (the default).
    public var lowering: [Ear: FrequencyLowering] = [:]

    /// The wearer's volume range when the prescription does not set one.
    public static let defaultVolumeRangeDB = 10.0
    /// What `volume-range:` may be: from 0 (no volume control) to 20 dB either way.
    public static let volumeRangeLimits = 0.0...20.0

    /// The volume trims this prescription allows, dB.
    public var volumeRange: ClosedRange<Double> {
        let range = volumeRangeDB ?? Self.defaultVolumeRangeDB
        return -range...range
    }

    public init(
        name: String, environment: String, audiologist: String? = nil, patient: String? = nil, date: String? = nil,
        note: String? = nil, rule: FittingRule = .nalR, thresholds: [Ear: [Int: Int]] = [:], noResponse: [Ear: Set<Int>] = [:],
        explicitGains: [Ear: [Int: Double]] = [:], lowpassHz: Int? = Prescription.defaultLowpassHz,
        maxOutputDBFS: Double = Prescription.defaultMaxOutputDBFS, extensions: [(key: String, value: String)] = [],
        signature: String? = nil
    ) {
        self.name = name
        self.environment = environment
        self.audiologist = audiologist
        self.patient = patient
        self.date = date
        self.note = note
        self.rule = rule
        self.thresholds = thresholds
        self.noResponse = noResponse
        self.explicitGains = explicitGains
        self.lowpassHz = lowpassHz
        self.maxOutputDBFS = maxOutputDBFS
        self.extensions = extensions
        self.signature = signature
    }

    public static func == (a: Prescription, b: Prescription) -> Bool {
        a.name == b.name && a.environment == b.environment && a.audiologist == b.audiologist && a.patient == b.patient
            && a.date == b.date && a.note == b.note && a.rule == b.rule && a.thresholds == b.thresholds
            && a.noResponse == b.noResponse && a.explicitGains == b.explicitGains && a.lowpassHz == b.lowpassHz
            && a.maxOutputDBFS == b.maxOutputDBFS
            && a.extensions.map(\.key) == b.extensions.map(\.key) && a.extensions.map(\.value) == b.extensions.map(\.value)
            && a.signature == b.signature && a.version == b.version && a.gains50 == b.gains50 && a.gains80 == b.gains80
            && a.attackMs == b.attackMs && a.releaseMs == b.releaseMs && a.expansion == b.expansion && a.ucl == b.ucl
            && a.uclTransducer == b.uclTransducer
            && a.limitDBSPL == b.limitDBSPL && a.volumeRangeDB == b.volumeRangeDB && a.lowering == b.lowering
    }

    /// The target insertion gains in dB at the given frequencies for one ear, or nil when the
    /// ear is not given (it gets no processing: flat). A no response counts as a threshold at the
    /// level tested: the least the true threshold can be, so never more gain than measured.
    /// With compression (rule `camfit`, or `g50-`/`g80-` gains) these are the gains for 65 dB SPL
    /// speech.
    public func targetGains(for ear: Ear) -> [Int: Double]? {
        if rule == .explicit {
            if let gains = explicitGains[ear] { return gains }
            return levelGains(for: ear)?.g65
        }
        guard let t = thresholds[ear] else { return nil }
        return rule.insertionGains(thresholds: t)
    }

    /// Level-dependent gains (dB by frequency) for speech at 50, 65 and 80 dB SPL, or nil when the
    /// ear is fitted linearly or not at all. Explicit g50/g80: g65 is their mean (a straight
    /// line in level, as the compressor draws it above its knee).
    public func levelGains(for ear: Ear) -> (g50: [Int: Double], g65: [Int: Double], g80: [Int: Double])? {
        switch rule {
        case .camfit:
            guard let t = thresholds[ear] else { return nil }
            return (
                Camfit.gains(thresholds: t, speechDBSPL: 50), Camfit.gains(thresholds: t, speechDBSPL: 65),
                Camfit.gains(thresholds: t, speechDBSPL: 80)
            )
        case .explicit:
            guard let g50 = gains50[ear], let g80 = gains80[ear] else { return nil }
            return (g50, g50.merging(g80) { ($0 + $1) / 2 }, g80)
        default:
            return nil
        }
    }

    /// A short name for this exact prescription (FNV-1a of `text`, 16 hex digits): the same
    /// prescription gives the same one in every process and run (Swift's `Hasher` does not).
    /// An identity for what belongs to it (the wearer's volume), not a signature.
    public var fingerprint: String { FNV1a.hex(FNV1a.hash(text)) }

    /// The canonical text (what `rx make` encodes): keys in a fixed order, LF line ends.
    public var text: String {
        var lines = ["RIBBIT-RX \(version)", "name: \(name)", "env: \(environment)"]
        if let audiologist { lines.append("audiologist: \(audiologist)") }
        if let patient { lines.append("patient: \(patient)") }
        if let date { lines.append("date: \(date)") }
        lines.append("rule: \(rule.rawValue)")
        for ear in Ear.allCases {
            if let t = thresholds[ear] { lines.append("\(ear.rawValue): " + Self.thresholdPairs(t, noResponse: noResponse[ear] ?? [])) }
        }
        for ear in Ear.allCases {
            if let u = ucl[ear] { lines.append("ucl-\(ear.rawValue): " + Self.thresholdPairs(u, noResponse: [])) }
        }
        if let uclTransducer { lines.append("ucl-transducer: \(uclTransducer.rawValue)") }
        for ear in Ear.allCases {
            if let g = explicitGains[ear] { lines.append("gain-\(ear.rawValue): " + Self.pairs(g)) }
        }
        for ear in Ear.allCases {
            if let g = gains50[ear] { lines.append("g50-\(ear.rawValue): " + Self.pairs(g)) }
            if let g = gains80[ear] { lines.append("g80-\(ear.rawValue): " + Self.pairs(g)) }
        }
        if let attackMs { lines.append("attack: \(Self.number(attackMs))") }
        if let releaseMs { lines.append("release: \(Self.number(releaseMs))") }
        switch expansion {
        case .off: break
        case .on: lines.append("expansion: on")
        case .knee(let db): lines.append("expansion: \(Self.number(db))")
        }
        if let limitDBSPL { lines.append("limit: \(Self.number(limitDBSPL))") }
        if let volumeRangeDB { lines.append("volume-range: \(Self.number(volumeRangeDB))") }
        for ear in Ear.allCases {
            if let lowering = lowering[ear] { lines.append("lowering-\(ear.rawValue): \(lowering.text)") }
        }
        lines.append("lowpass: " + (lowpassHz.map(String.init) ?? "none"))
        lines.append("max-output: \(Self.number(maxOutputDBFS))")
        if let note { lines.append("note: \(note)") }
        for (key, value) in extensions { lines.append("\(key): \(value)") }
        if let signature { lines.append("sig: \(signature)") }
        return lines.joined(separator: "\n") + "\n"
    }

    static func pairs(_ values: [Int: Double]) -> String {
        values.keys.sorted().map { "\($0)=\(number(values[$0]!))" }.joined(separator: " ")
    }

    /// `FREQ=DB` pairs by frequency, `nr` after a level that got no response.
    static func thresholdPairs(_ values: [Int: Int], noResponse: Set<Int>) -> String {
        values.keys.sorted().map { "\($0)=\(values[$0]!)" + (noResponse.contains($0) ? "nr" : "") }.joined(separator: " ")
    }

    /// 12 for 12.0, 12.5 for 12.5; any Double (the fuzzer found 1e300 trapping in Int()).
    public static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
