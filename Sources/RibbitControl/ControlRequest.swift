import Foundation
import RibbitAudiometry
import RibbitPrescription

/// A request to the daemon (docs/control-protocol.md), as a value: each case carries what it
/// needs in domain types, checked when the value is made (the parts' initialisers, or their
/// decoders when a line is read with `ControlRequest.read`), so no handler checks a field again
/// and every front end refuses the same things with the same words.
///
/// On the wire it is the flat JSON object the protocol documents, a `command` and its fields;
/// Swift's own coding of the enum does the rest ("The wire" below), so a new request is a case
/// here with its name in `CodingKeys`, and a case's values are either labelled (each label a
/// field) or one domain value that codes its own fields.
public enum ControlRequest: Sendable, Equatable, Codable {
    case status
    /// `lease` true: held by the connection that sent it (a voice game's pause): when it closes,
    /// the daemon resumes, unless the wearer paused or resumed meanwhile. Otherwise the wearer's.
    case pause(lease: Bool?)
    case resume
    case bypass(on: Bool)
    case load(PrescriptionUpload)
    case use(HistoryChoice)
    case keep, revert, stop
    /// Turns the connection into a stream of DumpFrame lines, 20 a second, until it closes.
    case dump
    /// Turns the connection into a stream of VoiceFrame lines (the microphone's level, voicing
    /// and pitch, 100 a second) until it closes: the voice exercises' input.
    case voice
    /// Calibration and test tones: the hearing aid is off while one plays.
    case tone(ToneRequest)
    /// The wearer's volume (within the prescription's range).
    case volume(VolumeChange)
    /// The listening program.
    case program(ProgramChoice)
    /// A pure-tone hearing test run by the daemon, held by this connection: the hearing aid is
    /// off until it ends; `status.hearingTest` follows it.
    case hearingTestStart(HearingTestRequest)
    /// The listener heard a tone (`ear`: which, when the screen asks).
    case hearingTestAnswer(ear: Ear?)
    /// Ends the test now; what was measured is stored, flagged incomplete.
    case hearingTestStop
    /// A live measurement (`verify --live`) takes these JACK connections from the daemon's
    /// ports and sets its volume and program: held by this connection; when it closes, the
    /// daemon puts the program, the volume and then the connections back.
    case measure(connections: [PortConnection]?)

    /// The request's name on the wire, in logs and in messages: the compiler asks for one per
    /// case, and `ControlRequestTests` that it is the case's name in kebab case (`command`).
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case status, pause, resume, bypass, load, use, keep, revert, stop, dump, voice, tone, volume, program
        case hearingTestStart = "hearing-test-start"
        case hearingTestAnswer = "hearing-test-answer"
        case hearingTestStop = "hearing-test-stop"
        case measure
    }
    public typealias Command = CodingKeys

    /// This request's name: its case's key above, the case's name in kebab case.
    public var command: Command {
        let label = Mirror(reflecting: self).children.first?.label ?? String(describing: self)
        let kebab = label.map { $0.isUppercase ? "-\($0.lowercased())" : String($0) }.joined()
        guard let command = Command(rawValue: kebab) else { preconditionFailure("a request case without its key in CodingKeys: \(label)") }
        return command
    }
}

/// Why a request cannot be made: one line for the user, saying what is wrong and what is
/// allowed.
public struct RequestError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `load`: a prescription's text (format version 1, its signature line included), where it
/// came from (for messages and the log), and whether it is a trial.
public struct PrescriptionUpload: Sendable, Equatable {
    public var text: String
    public var source: String
    /// Applied for this long, then back to the prescription before it (nil: for good).
    public var trial: TrialLength?

    public init(text: String, source: String = "the prescription", trial: TrialLength? = nil) {
        self.text = text
        self.source = source
        self.trial = trial
    }
}

/// How long a trial lasts, for every front end: from a second to a week, time enough to wear
/// a fitting through the places a week holds.
public struct TrialLength: Sendable, Equatable {
    public static let range = 1...(7 * 86400)
    public static let rangeText = "from 1 s to 7 days"
    public let seconds: Int

    public init(seconds: Int) throws(RequestError) {
        guard Self.range.contains(seconds) else { throw RequestError("a trial lasts \(Self.rangeText), not \(seconds) s") }
        self.seconds = seconds
    }
}

/// `use`: a history entry by id or name, or the newest for an environment.
public enum HistoryChoice: Sendable, Equatable {
    case entry(String)
    case newest(environment: String)
}

/// The ears a tone plays to.
public enum ToneEar: String, Codable, Sendable, CaseIterable {
    case left, right, both

    public init(_ ear: Ear) { self = ear == .left ? .left : .right }
}

/// `tone`: a sine instead of the hearing aid, steady or pulsed, or the end of one.
public enum ToneRequest: Sendable, Equatable {
    case play(ToneSignal)
    /// Ends the tone now; the hearing aid comes back.
    case stop
}

/// A tone to play. Its level is clamped later, where the ceiling in force is known.
public struct ToneSignal: Sendable, Equatable {
    public enum Timing: Sendable, Equatable {
        /// For this long, at most `ControlProtocol.toneMaxSeconds` (longer asks are shortened).
        case steady(seconds: Double)
        case pulsed(TonePulses)
    }
    public let frequencyHz: Double
    /// A sine's dBFS; nil: silence, the input is only metered.
    public let levelDBFS: Double?
    public let ear: ToneEar
    public let timing: Timing

    public init(frequencyHz: Double, levelDBFS: Double?, ear: ToneEar = .both, timing: Timing) throws(RequestError) {
        guard ControlProtocol.toneFrequencies.contains(frequencyHz) else {
            throw RequestError("tone needs a \"frequencyHz\" from 20 to 20000")
        }
        if let levelDBFS, !levelDBFS.isFinite { throw RequestError("tone's levelDBFS is a number (dBFS of the sine)") }
        if case .steady(let seconds) = timing, !(seconds.isFinite && seconds > 0) {
            throw RequestError("a tone's seconds are from 0 (stop) to 60")
        }
        self.frequencyHz = frequencyHz
        self.levelDBFS = levelDBFS
        self.ear = ear
        self.timing = timing
    }
}

/// A pulsed tone's pattern: `count` pulses of `onMs` each (between half-amplitude points),
/// `offMs` apart, each pulse long enough to reach its level and each gap long enough to fall
/// silent, the whole at most `ControlProtocol.toneMaxSeconds`.
public struct TonePulses: Sendable, Equatable {
    public let count: Int
    public let onMs: Double
    public let offMs: Double

    public init(count: Int, onMs: Double, offMs: Double) throws(RequestError) {
        let (pulses, on, off) = (ControlProtocol.tonePulses, ControlProtocol.tonePulseOnMs, ControlProtocol.tonePulseOffMs)
        guard pulses.contains(count) else {
            throw RequestError("a pulsed tone's pulses are from \(pulses.lowerBound) to \(pulses.upperBound)")
        }
        guard on.contains(onMs) else {
            throw RequestError(
                "a pulsed tone's onMs is from \(Int(on.lowerBound)) to \(Int(on.upperBound)) (each pulse, between its half-amplitude points)"
            )
        }
        guard off.contains(offMs) else {
            throw RequestError("a pulsed tone's offMs is from \(Int(off.lowerBound)) to \(Int(off.upperBound)) (between pulses)")
        }
        let total = (Double(count) * (onMs + offMs) - offMs) / 1000
        guard total <= ControlProtocol.toneMaxSeconds else {
            throw RequestError("a pulsed tone lasts at most \(Int(ControlProtocol.toneMaxSeconds)) s; this one is \(total) s")
        }
        (self.count, self.onMs, self.offMs) = (count, onMs, offMs)
    }
}

/// `volume`: a level or a step, in dB (the daemon clamps to the prescription's range).
public enum VolumeChange: Sendable, Equatable {
    case set(dB: Double)
    case step(dB: Double)

    public init(levelDB: Double?, stepDB: Double?) throws(RequestError) {
        switch (levelDB, stepDB) {
        case (let level?, nil) where level.isFinite: self = .set(dB: level)
        case (nil, let step?) where step.isFinite: self = .step(dB: step)
        default: throw RequestError("volume needs \"volumeDB\" (a level) or \"volumeStepDB\" (a step), a number of dB, not both")
        }
    }
}

/// `program`: a named program, auto (ribbit picks from the sound) or the prescription's own.
public enum ProgramChoice: Sendable, Equatable {
    case named(Program)
    case auto
    /// The one the prescription's `env` selects ("default" on the wire).
    case prescribed

    /// From a name as the wearer types it (any case): a program's, "auto" or "default".
    public init(_ name: String) throws(RequestError) {
        let names = Program.allCases.map(\.rawValue).joined(separator: ", ")
        switch name.lowercased() {
        case "auto": self = .auto
        case "default": self = .prescribed
        case let lowered:
            guard let program = Program(rawValue: lowered) else {
                throw RequestError("no program \"\(name)\"; the programs are \(names), auto and default")
            }
            self = .named(program)
        }
    }

    public var name: String {
        switch self {
        case .named(let program): program.rawValue
        case .auto: "auto"
        case .prescribed: "default"
        }
    }
}

/// How a program came to play (`status.listening.chosenBy`).
public enum ProgramChooser: String, Codable, Sendable {
    /// ribbit picks from the sound.
    case auto
    /// `ribbitd program NAME`, the web app's buttons.
    case wearer
    /// The prescription's `env` selects it.
    case prescription
}

/// `hearing-test-start`: the headphones, the ears in the order tested (the better ear first),
/// the frequencies (each at most twice: a retest), whether the answers name the ear, and a
/// seed that replays the waits and catch trials.
public struct HearingTestRequest: Sendable, Equatable {
    public let transducer: Transducer
    public let ears: [Ear]
    public let frequenciesHz: [Int]
    public let answersNameTheEar: Bool
    public let seed: UInt64?

    public init(
        transducer: Transducer = .consumer, ears: [Ear] = [.right, .left], frequenciesHz: [Int] = HearingTest.Plan.clinicalOrder,
        answersNameTheEar: Bool = false, seed: UInt64? = nil
    ) throws(RequestError) {
        guard !ears.isEmpty else { throw RequestError("testEars needs at least one ear") }
        guard Set(ears).count == ears.count else {
            throw RequestError("testEars lists \"right\" and \"left\" (each once, the better ear first)")
        }
        // A clinical plan: each frequency once, or twice (a retest), so a test ends.
        guard frequenciesHz.count <= HearingTest.Plan.maxPresentedFrequencies,
            Dictionary(grouping: frequenciesHz, by: { $0 }).values.allSatisfy({ $0.count <= 2 })
        else {
            throw RequestError(
                "frequenciesHz lists at most \(HearingTest.Plan.maxPresentedFrequencies) frequencies, each at most twice (a retest)")
        }
        let table = RETSPLTable.standard(transducer).dBSPLAtZeroHL
        if let missing = frequenciesHz.first(where: { table[$0] == nil }) {
            let known = table.keys.sorted().map(String.init).joined(separator: ", ")
            throw RequestError("no RETSPL for \(missing) Hz; the test's frequencies are \(known)")
        }
        self.transducer = transducer
        self.ears = ears
        self.frequenciesHz = frequenciesHz
        self.answersNameTheEar = answersNameTheEar
        self.seed = seed
    }

    /// From the names a screen or a command line gives (nil: the default).
    public init(
        transducerName: String?, earNames: [String]?, frequenciesHz: [Int]?, answersNameTheEar: Bool = false, seed: UInt64? = nil
    ) throws(RequestError) {
        let transducer = try Self.transducer(named: transducerName)
        var ears: [Ear] = []
        for name in earNames ?? ["right", "left"] {
            guard let ear = Ear(rawValue: name) else {
                throw RequestError("testEars lists \"right\" and \"left\" (each once, the better ear first), not \"\(name)\"")
            }
            ears.append(ear)
        }
        try self.init(
            transducer: transducer, ears: ears, frequenciesHz: frequenciesHz ?? HearingTest.Plan.clinicalOrder,
            answersNameTheEar: answersNameTheEar, seed: seed)
    }

    /// Headphones by name (nil: consumer headphones).
    public static func transducer(named name: String?) throws(RequestError) -> Transducer {
        guard let transducer = Transducer(rawValue: name ?? Transducer.consumer.rawValue) else {
            let names = Transducer.allCases.map(\.rawValue).joined(separator: ", ")
            throw RequestError("headphones '\(name ?? "")' are unknown: choose one of \(names)")
        }
        return transducer
    }
}

/// A JACK connection, source port to destination port (full names).
public struct PortConnection: Sendable, Equatable {
    public let source: String
    public let destination: String

    public init(source: String, destination: String) throws(RequestError) {
        guard [source, destination].allSatisfy({ !$0.isEmpty && $0.utf8.count < 512 }) else {
            throw RequestError("measure's connections are [source, destination] pairs of JACK port names")
        }
        (self.source, self.destination) = (source, destination)
    }
}

// MARK: The wire

/// The documented flat line and Swift's coding of the enum are one step apart: the line
/// `{"command":"bypass","on":true,"version":1}` is the enum's `{"bypass":{"on":true}}`, and a
/// case whose value codes its own fields (`load`) reads them from `_0`, Swift's name for an
/// unlabelled value. `read` moves the fields under the command (under both names: a case reads
/// the one it has), `line` moves them back; no case is written out by hand.
extension ControlRequest {
    /// A request line: the version check first (a newer client may name its command
    /// differently), then the JSON object, then each field; every refusal is one line.
    public static func read(_ line: Data) -> Result<ControlRequest, RequestError> {
        if let refusal = ControlProtocol.versionRefusal(line) { return .failure(RequestError(refusal)) }
        guard var fields = try? JSONDecoder().decode([String: JSONValue].self, from: line),
            case .string(let name)? = fields.removeValue(forKey: "command"), let command = Command(rawValue: name)
        else {
            return .failure(
                RequestError(
                    "malformed request: expected one JSON object per line with a \"command\" of "
                        + Command.allCases.map(\.rawValue).joined(separator: ", ") + " (docs/control-protocol.md)"))
        }
        fields["version"] = nil
        fields["_0"] = .object(fields)
        do {
            let nested = try JSONEncoder().encode([name: JSONValue.object(fields)])
            return .success(try JSONDecoder().decode(ControlRequest.self, from: nested))
        } catch let refusal as RequestError {
            return .failure(refusal)
        } catch let error as DecodingError {
            return .failure(RequestError(Self.words(error, command: command)))
        } catch {
            return .failure(RequestError("\(name): \(error)"))
        }
    }

    /// The line a client sends, `\n` included.
    public var line: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var fields: [String: JSONValue] = [:]
        if let nested = try? JSONDecoder().decode([String: JSONValue].self, from: encoder.encode(self)),
            case .object(let payload)? = nested.first?.value
        {
            if case .object(let own)? = payload["_0"] { fields = own } else { fields = payload }
        }
        fields["command"] = .string(command.rawValue)
        fields["version"] = .integer(Int64(ControlProtocol.version))
        var data = (try? encoder.encode(fields)) ?? Data(#"{"command":"\#(command.rawValue)"}"#.utf8)
        data.append(0x0A)
        return data
    }

    /// A decoding error in the protocol's words: which field of which command, and what it needs.
    static func words(_ error: DecodingError, command: Command) -> String {
        func field(_ path: [CodingKey]) -> String {
            path.dropFirst().filter { $0.stringValue != "_0" }.reduce("") { name, key in
                key.intValue.map { "\(name)[\($0)]" } ?? (name.isEmpty ? key.stringValue : "\(name).\(key.stringValue)")
            }
        }
        switch error {
        case .keyNotFound(let key, _):
            // The labelled values' types, as the protocol names them (the domain values word their own).
            let takes = ["on": " (true or false)"][key.stringValue] ?? ""
            return "\(command.rawValue) needs \"\(key.stringValue)\"\(takes)"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(command.rawValue)'s \"\(field(context.codingPath))\" must be \(Self.kind(type))"
        case .dataCorrupted(let context):
            return "\(command.rawValue)'s \"\(field(context.codingPath))\": \(context.debugDescription)"
        @unknown default: return "\(command.rawValue): \(error)"
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        case is any Numeric.Type: "a number"
        case _ where "\(type)".hasPrefix("Array<"): "a list"
        default: "an object"
        }
    }
}

extension ControlProtocol {
    /// A request's line (`ControlRequest.line`).
    public static func encode(_ request: ControlRequest) -> Data { request.line }
}

/// Any JSON value, numbers as they were written (an integer stays one, however large), so a
/// line's fields can move under its command and back without changing.
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    /// A number no Double holds (1e400): kept, so that a field no command reads stays ignored,
    /// and refused as "must be a number" where one is read.
    case unrepresentable

    init(from decoder: Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? single.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? single.decode(Double.self) {
            self = .number(value)
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if let value = try? single.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? single.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            self = .unrepresentable
        }
    }

    /// A whole number as `T`, when it is one that `T` holds.
    func whole<T: FixedWidthInteger>(_: T.Type) -> T? {
        switch self {
        case .integer(let value): T(exactly: value)
        case .unsigned(let value): T(exactly: value)
        case .number(let value): T(exactly: value)
        default: nil
        }
    }

    func encode(to encoder: Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .integer(let value): try single.encode(value)
        case .unsigned(let value): try single.encode(value)
        case .number(let value): try single.encode(value)
        case .string(let value): try single.encode(value)
        case .array(let value): try single.encode(value)
        case .object(let value): try single.encode(value)
        case .unrepresentable: try single.encode("a number out of range")
        }
    }
}

// MARK: Each value's fields

extension KeyedDecodingContainer {
    /// A whole number as `T` (nil when absent); a fraction, a number `T` does not hold or
    /// another type is refused in `refusal`'s words (the decoder's own would name no field).
    func whole<T: FixedWidthInteger>(_ type: T.Type, forKey key: Key, refusal: String) throws -> T? {
        guard let value = try decodeIfPresent(JSONValue.self, forKey: key) else { return nil }
        guard let whole = value.whole(type) else { throw RequestError(refusal) }
        return whole
    }
}

extension PrescriptionUpload: Codable {
    enum CodingKeys: String, CodingKey {
        case text = "prescription", source
        case trial = "trialSeconds"
    }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        guard let text = try fields.decodeIfPresent(String.self, forKey: .text) else {
            throw RequestError("load needs a \"prescription\" (the text of an .rx file)")
        }
        self.init(
            text: text, source: try fields.decodeIfPresent(String.self, forKey: .source) ?? "the prescription",
            trial: try fields.decodeIfPresent(TrialLength.self, forKey: .trial))
    }
}

extension TrialLength: Codable {
    public init(from decoder: Decoder) throws {
        guard let seconds = try decoder.singleValueContainer().decode(JSONValue.self).whole(Int.self) else {
            throw RequestError("a trial lasts a whole number of seconds, \(Self.rangeText)")
        }
        try self.init(seconds: seconds)
    }

    public func encode(to encoder: Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(seconds)
    }
}

extension HistoryChoice: Codable {
    enum CodingKeys: String, CodingKey { case selector, environment }

    /// An environment wins over a selector, as the history's lookup always did.
    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        if let environment = try fields.decodeIfPresent(String.self, forKey: .environment) {
            self = .newest(environment: environment)
        } else if let selector = try fields.decodeIfPresent(String.self, forKey: .selector) {
            self = .entry(selector)
        } else {
            throw RequestError("use needs a \"selector\" (id or name) or an \"environment\"")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .entry(let selector): try fields.encode(selector, forKey: .selector)
        case .newest(let environment): try fields.encode(environment, forKey: .environment)
        }
    }
}

extension ToneRequest: Codable {
    enum CodingKeys: String, CodingKey { case frequencyHz, levelDBFS, ear, seconds, pulses, onMs, offMs }

    /// `seconds` 0 stops; a pattern (`pulses`, `onMs`, `offMs`, all three) replaces `seconds`;
    /// otherwise a steady tone for `seconds` (default 30).
    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let seconds = try fields.decodeIfPresent(Double.self, forKey: .seconds)
        if let seconds {
            guard seconds.isFinite, seconds >= 0 else { throw RequestError("a tone's seconds are from 0 (stop) to 60") }
            if seconds == 0 {
                self = .stop
                return
            }
        }
        let earName = try fields.decodeIfPresent(String.self, forKey: .ear) ?? ToneEar.both.rawValue
        guard let ear = ToneEar(rawValue: earName) else { throw RequestError("tone's ear is \"left\", \"right\" or \"both\"") }
        let pulses = ControlProtocol.tonePulses
        let pattern = (
            try fields.whole(
                Int.self, forKey: .pulses,
                refusal: "a pulsed tone's pulses are a whole number from \(pulses.lowerBound) to \(pulses.upperBound)"),
            try fields.decodeIfPresent(Double.self, forKey: .onMs), try fields.decodeIfPresent(Double.self, forKey: .offMs)
        )
        let timing: ToneSignal.Timing
        if pattern.0 != nil || pattern.1 != nil || pattern.2 != nil {
            guard seconds == nil else {
                throw RequestError("a pulsed tone's length is its pattern: send pulses, onMs and offMs without seconds")
            }
            // A missing part reads as out of its range, so the refusal names the range.
            timing = .pulsed(try TonePulses(count: pattern.0 ?? 0, onMs: pattern.1 ?? 0, offMs: pattern.2 ?? 0))
        } else {
            timing = .steady(seconds: seconds ?? ControlProtocol.toneDefaultSeconds)
        }
        self = .play(
            try ToneSignal(
                frequencyHz: try fields.decodeIfPresent(Double.self, forKey: .frequencyHz) ?? .nan,
                levelDBFS: try fields.decodeIfPresent(Double.self, forKey: .levelDBFS), ear: ear, timing: timing))
    }

    public func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        guard case .play(let signal) = self else { return try fields.encode(0.0, forKey: .seconds) }
        try fields.encode(signal.frequencyHz, forKey: .frequencyHz)
        try fields.encodeIfPresent(signal.levelDBFS, forKey: .levelDBFS)
        try fields.encode(signal.ear.rawValue, forKey: .ear)
        switch signal.timing {
        case .steady(let seconds): try fields.encode(seconds, forKey: .seconds)
        case .pulsed(let pattern):
            try fields.encode(pattern.count, forKey: .pulses)
            try fields.encode(pattern.onMs, forKey: .onMs)
            try fields.encode(pattern.offMs, forKey: .offMs)
        }
    }
}

extension VolumeChange: Codable {
    enum CodingKeys: String, CodingKey {
        case level = "volumeDB"
        case step = "volumeStepDB"
    }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            levelDB: try fields.decodeIfPresent(Double.self, forKey: .level), stepDB: try fields.decodeIfPresent(Double.self, forKey: .step)
        )
    }

    public func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .set(let dB): try fields.encode(dB, forKey: .level)
        case .step(let dB): try fields.encode(dB, forKey: .step)
        }
    }
}

extension ProgramChoice: Codable {
    enum CodingKeys: String, CodingKey { case program }

    public init(from decoder: Decoder) throws {
        guard let name = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .program) else {
            let names = Program.allCases.map(\.rawValue).joined(separator: ", ")
            throw RequestError("program needs \"program\": \(names), auto or default")
        }
        try self.init(name)
    }

    public func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        try fields.encode(name, forKey: .program)
    }
}

extension HearingTestRequest: Codable {
    enum CodingKeys: String, CodingKey { case transducer, testEars, frequenciesHz, answersNameTheEar, seed }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            transducerName: try fields.decodeIfPresent(String.self, forKey: .transducer),
            earNames: try fields.decodeIfPresent([String].self, forKey: .testEars),
            frequenciesHz: try fields.decodeIfPresent([JSONValue].self, forKey: .frequenciesHz).map { list in
                try list.map {
                    guard let hz = $0.whole(Int.self) else { throw RequestError("frequenciesHz lists whole numbers of Hz") }
                    return hz
                }
            },
            answersNameTheEar: try fields.decodeIfPresent(Bool.self, forKey: .answersNameTheEar) ?? false,
            seed: try fields.whole(UInt64.self, forKey: .seed, refusal: "a hearing test's seed is a whole number from 0 to 2^64 - 1"))
    }

    public func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        try fields.encode(transducer.rawValue, forKey: .transducer)
        try fields.encode(ears.map(\.rawValue), forKey: .testEars)
        try fields.encode(frequenciesHz, forKey: .frequenciesHz)
        try fields.encode(answersNameTheEar, forKey: .answersNameTheEar)
        try fields.encodeIfPresent(seed, forKey: .seed)
    }
}

/// `[source, destination]`.
extension PortConnection: Codable {
    public init(from decoder: Decoder) throws {
        let pair = try decoder.singleValueContainer().decode([String].self)
        guard pair.count == 2 else { throw RequestError("measure's connections are [source, destination] pairs of JACK port names") }
        try self.init(source: pair[0], destination: pair[1])
    }

    public func encode(to encoder: Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode([source, destination])
    }
}
