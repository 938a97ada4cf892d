import Foundation
import RibbitAudiometry
import RibbitPrescription

/// A request to the daemon (docs/control-protocol.md), as a value: each case carries what it
/// needs in domain types, checked when the value is made (the parts' initialisers, or reading a
/// line with `ControlRequest.read`), so no handler checks a field again and every front end
/// refuses the same things with the same words. On the wire it is the flat JSON object the
/// protocol documents: a `command` and its fields.
public enum ControlRequest: Sendable, Equatable {
    case status
    /// `lease`: held by the connection that sent it (a voice game's pause): when it closes, the
    /// daemon resumes, unless the wearer paused or resumed meanwhile.
    case pause(lease: Bool)
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
    case measure(connections: [PortConnection])

    /// The request's name on the wire, in logs and in messages.
    public enum Command: String, CaseIterable, Sendable {
        case status, pause, resume, bypass, load, use, keep, revert, stop, dump, voice, tone, volume, program
        case hearingTestStart = "hearing-test-start"
        case hearingTestAnswer = "hearing-test-answer"
        case hearingTestStop = "hearing-test-stop"
        case measure
    }

    public var command: Command {
        switch self {
        case .status: .status
        case .pause: .pause
        case .resume: .resume
        case .bypass: .bypass
        case .load: .load
        case .use: .use
        case .keep: .keep
        case .revert: .revert
        case .stop: .stop
        case .dump: .dump
        case .voice: .voice
        case .tone: .tone
        case .volume: .volume
        case .program: .program
        case .hearingTestStart: .hearingTestStart
        case .hearingTestAnswer: .hearingTestAnswer
        case .hearingTestStop: .hearingTestStop
        case .measure: .measure
        }
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

extension ControlRequest: Codable {
    /// A request line: the version check first (a newer client may name its command
    /// differently), then the JSON object, then each field; every refusal is one line.
    public static func read(_ line: Data) -> Result<ControlRequest, RequestError> {
        if let refusal = ControlProtocol.versionRefusal(line) { return .failure(RequestError(refusal)) }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: line), let command = Command(rawValue: wire.command) else {
            return .failure(
                RequestError(
                    "malformed request: expected one JSON object per line with a \"command\" of "
                        + Command.allCases.map(\.rawValue).joined(separator: ", ") + " (docs/control-protocol.md)"))
        }
        do throws(RequestError) { return .success(try ControlRequest(command, wire)) } catch { return .failure(error) }
    }

    public init(from decoder: Decoder) throws {
        let wire = try Wire(from: decoder)
        guard let command = Command(rawValue: wire.command) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no request \"\(wire.command)\""))
        }
        do throws(RequestError) { self = try ControlRequest(command, wire) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: error.description))
        }
    }

    public func encode(to encoder: Encoder) throws { try wire.encode(to: encoder) }

    /// The flat object of docs/control-protocol.md.
    struct Wire: Codable {
        var command: String
        var version: Int? = ControlProtocol.version
        var on: Bool?
        var prescription: String?
        var source: String?
        var trialSeconds: Int?
        var selector: String?
        var environment: String?
        var frequencyHz: Double?
        var levelDBFS: Double?
        var ear: String?
        var seconds: Double?
        var pulses: Int?
        var onMs: Double?
        var offMs: Double?
        var volumeDB: Double?
        var volumeStepDB: Double?
        var program: String?
        var transducer: String?
        var testEars: [String]?
        var frequenciesHz: [Int]?
        var answersNameTheEar: Bool?
        var seed: UInt64?
        var lease: Bool?
        var connections: [[String]]?
    }

    private init(_ command: Command, _ wire: Wire) throws(RequestError) {
        switch command {
        case .status: self = .status
        case .pause: self = .pause(lease: wire.lease ?? false)
        case .resume: self = .resume
        case .bypass:
            guard let on = wire.on else { throw RequestError("bypass needs \"on\": true or false") }
            self = .bypass(on: on)
        case .load:
            guard let text = wire.prescription else { throw RequestError("load needs a \"prescription\" (the text of an .rx file)") }
            self = .load(
                PrescriptionUpload(
                    text: text, source: wire.source ?? "the prescription", trial: try wire.trialSeconds.map(TrialLength.init)))
        case .use:
            if let environment = wire.environment {
                self = .use(.newest(environment: environment))
            } else if let selector = wire.selector {
                self = .use(.entry(selector))
            } else {
                throw RequestError("use needs a \"selector\" (id or name) or an \"environment\"")
            }
        case .keep: self = .keep
        case .revert: self = .revert
        case .stop: self = .stop
        case .dump: self = .dump
        case .voice: self = .voice
        case .tone: self = .tone(try Self.tone(wire))
        case .volume: self = .volume(try VolumeChange(levelDB: wire.volumeDB, stepDB: wire.volumeStepDB))
        case .program:
            guard let name = wire.program else {
                let names = Program.allCases.map(\.rawValue).joined(separator: ", ")
                throw RequestError("program needs \"program\": \(names), auto or default")
            }
            self = .program(try ProgramChoice(name))
        case .hearingTestStart:
            self = .hearingTestStart(
                try HearingTestRequest(
                    transducerName: wire.transducer, earNames: wire.testEars, frequenciesHz: wire.frequenciesHz,
                    answersNameTheEar: wire.answersNameTheEar ?? false, seed: wire.seed))
        case .hearingTestAnswer:
            guard let name = wire.ear else {
                self = .hearingTestAnswer(ear: nil)
                return
            }
            guard let ear = Ear(rawValue: name) else { throw RequestError("an answer's ear is \"left\" or \"right\"") }
            self = .hearingTestAnswer(ear: ear)
        case .hearingTestStop: self = .hearingTestStop
        case .measure:
            var connections: [PortConnection] = []
            for pair in wire.connections ?? [] {
                guard pair.count == 2 else {
                    throw RequestError("measure's connections are [source, destination] pairs of JACK port names")
                }
                connections.append(try PortConnection(source: pair[0], destination: pair[1]))
            }
            self = .measure(connections: connections)
        }
    }

    /// `tone`'s fields: `seconds` 0 stops; a pattern (`pulses`, `onMs`, `offMs`, all three)
    /// replaces `seconds`; otherwise a steady tone for `seconds` (default 30).
    private static func tone(_ wire: Wire) throws(RequestError) -> ToneRequest {
        if let seconds = wire.seconds {
            guard seconds.isFinite, seconds >= 0 else { throw RequestError("a tone's seconds are from 0 (stop) to 60") }
            if seconds == 0 { return .stop }
        }
        guard let ear = ToneEar(rawValue: wire.ear ?? "both") else { throw RequestError("tone's ear is \"left\", \"right\" or \"both\"") }
        let timing: ToneSignal.Timing
        if wire.pulses != nil || wire.onMs != nil || wire.offMs != nil {
            guard wire.seconds == nil else {
                throw RequestError("a pulsed tone's length is its pattern: send pulses, onMs and offMs without seconds")
            }
            // A missing part reads as out of its range, so the refusal names the range.
            timing = .pulsed(try TonePulses(count: wire.pulses ?? 0, onMs: wire.onMs ?? 0, offMs: wire.offMs ?? 0))
        } else {
            timing = .steady(seconds: wire.seconds ?? ControlProtocol.toneDefaultSeconds)
        }
        return .play(try ToneSignal(frequencyHz: wire.frequencyHz ?? .nan, levelDBFS: wire.levelDBFS, ear: ear, timing: timing))
    }

    var wire: Wire {
        var wire = Wire(command: command.rawValue)
        switch self {
        case .status, .resume, .keep, .revert, .stop, .dump, .voice, .hearingTestStop: break
        case .pause(let lease): wire.lease = lease ? true : nil
        case .bypass(let on): wire.on = on
        case .load(let upload):
            (wire.prescription, wire.source, wire.trialSeconds) = (upload.text, upload.source, upload.trial?.seconds)
        case .use(.entry(let selector)): wire.selector = selector
        case .use(.newest(let environment)): wire.environment = environment
        case .tone(.stop): wire.seconds = 0
        case .tone(.play(let signal)):
            (wire.frequencyHz, wire.levelDBFS, wire.ear) = (signal.frequencyHz, signal.levelDBFS, signal.ear.rawValue)
            switch signal.timing {
            case .steady(let seconds): wire.seconds = seconds
            case .pulsed(let pattern): (wire.pulses, wire.onMs, wire.offMs) = (pattern.count, pattern.onMs, pattern.offMs)
            }
        case .volume(.set(let dB)): wire.volumeDB = dB
        case .volume(.step(let dB)): wire.volumeStepDB = dB
        case .program(let choice): wire.program = choice.name
        case .hearingTestStart(let test):
            wire.transducer = test.transducer.rawValue
            wire.testEars = test.ears.map(\.rawValue)
            wire.frequenciesHz = test.frequenciesHz
            wire.answersNameTheEar = test.answersNameTheEar
            wire.seed = test.seed
        case .hearingTestAnswer(let ear): wire.ear = ear?.rawValue
        case .measure(let connections): wire.connections = connections.map { [$0.source, $0.destination] }
        }
        return wire
    }
}
