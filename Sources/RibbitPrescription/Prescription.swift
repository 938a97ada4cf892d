/// One ear. Audiology draws the right ear in red with O and the left in blue with X.
public enum Ear: String, Sendable, CaseIterable, Codable {
    case left, right
}

/// A hearing-aid prescription: format version 1 (docs/prescription-format.md).
public struct Prescription: Sendable, Equatable {
    public static let formatVersion = 1
    public static let header = "RIBBIT-RX 1"
    public static let audiometricFrequencies = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    public static let requiredFrequencies = [500, 1000, 2000, 4000]
    public static let thresholdRange = -10...120
    /// Explicit gains below this are refused as typos: nobody is fitted with -40 dB.
    public static let explicitGainRange = -30.0...50.0
    /// The most gain any rule or audiologist may prescribe at any frequency.
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
            && a.signature == b.signature
    }

    /// The target insertion gains in dB at the given frequencies for one ear, or nil when the
    /// ear is not given (it gets no processing: flat). A no response counts as a threshold at the
    /// level tested: the least the true threshold can be, so never more gain than measured.
    public func targetGains(for ear: Ear) -> [Int: Double]? {
        if rule == .explicit { return explicitGains[ear] }
        guard let t = thresholds[ear] else { return nil }
        return rule.insertionGains(thresholds: t)
    }

    /// The canonical text (what `rx make` encodes): keys in a fixed order, LF line ends.
    public var text: String {
        var lines = [Self.header, "name: \(name)", "env: \(environment)"]
        if let audiologist { lines.append("audiologist: \(audiologist)") }
        if let patient { lines.append("patient: \(patient)") }
        if let date { lines.append("date: \(date)") }
        lines.append("rule: \(rule.rawValue)")
        for ear in Ear.allCases {
            if let t = thresholds[ear] { lines.append("\(ear.rawValue): " + Self.thresholdPairs(t, noResponse: noResponse[ear] ?? [])) }
        }
        for ear in Ear.allCases {
            if let g = explicitGains[ear] { lines.append("gain-\(ear.rawValue): " + Self.pairs(g)) }
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
