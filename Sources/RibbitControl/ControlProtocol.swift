import Foundation
import RibbitPrescription

/// The control protocol (docs/control-protocol.md): one JSON request per line from the
/// client, one JSON reply per line from the daemon, on a Unix socket only the owner can use.
public enum ControlProtocol {
    public static let version = 1
    /// Longest request line the daemon reads; a longer one is refused and the connection closed.
    public static let maxRequestBytes = 64 * 1024

    /// The refusal of a request in another protocol version, or nil when `line` speaks this one
    /// (or says nothing of its version). Read before the command, which a newer client may
    /// name differently.
    public static func versionRefusal(_ line: Data) -> String? {
        struct Versioned: Decodable { var version: Int? }
        guard let given = (try? JSONDecoder().decode(Versioned.self, from: line))?.version, given != version else { return nil }
        return "this client speaks control protocol \(given), ribbitd \(version): after an upgrade, restart the daemon "
            + "(systemctl --user restart ribbitd) so that both are the same version"
    }
    /// The calibration tone's limits (`tone`): the loudest level (a sine's dBFS; louder asks are
    /// clamped to it, and to the output ceiling in force), the longest it plays before it stops
    /// by itself, and how long it plays when the request does not say. The audio process
    /// (RibbitJack's ToneRenderer) clamps to the same numbers again.
    public static let toneMaxLevelDBFS = -20.0
    public static let toneMaxSeconds = 60.0
    public static let toneDefaultSeconds = 30.0
    public static let toneFrequencies = 20.0...20000.0
    /// A tone stays this far under 0 dBFS and under the ceiling (never within 1 dB of clipping).
    public static let toneHeadroomDB = 1.0
    /// Each fade in and out (raised cosine); a tone ends this long after its last pulse.
    public static let toneRampSeconds = 0.025
    /// A pulsed tone (`pulses`, `onMs`, `offMs`): each pulse at least two 25 ms ramps long, so
    /// it reaches its level, and pulses at least one ramp apart, so each fades to silence.
    public static let tonePulses = 1...10
    public static let tonePulseOnMs = 50.0...5000.0
    public static let tonePulseOffMs = 25.0...5000.0
}

public struct ControlReply: Codable, Sendable, Equatable {
    public var ok: Bool
    /// Why the request failed (ok == false): one line for the user.
    public var error: String?
    /// status (and every successful state change): the daemon's state after the request.
    public var status: DaemonStatus?

    public init(ok: Bool, error: String? = nil, status: DaemonStatus? = nil) {
        self.ok = ok
        self.error = error
        self.status = status
    }

    public static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, error: message) }
}

public struct DaemonStatus: Codable, Sendable, Equatable {
    public struct ActivePrescription: Codable, Sendable, Equatable {
        /// Its id in the history (`ribbitd list`).
        public var id: Int64?
        public var name: String
        public var environment: String
        public var audiologist: String?
        public var rule: FittingRule
        /// "signed by NAME (trusted)", "signed, unknown key ID" or "unsigned".
        public var signature: String?
        /// Who it is for and when it was written (YYYY-MM-DD), as the prescription says; for
        /// the headers of plots.
        public var patient: String?
        public var date: String?
        public init(
            id: Int64?, name: String, environment: String, audiologist: String?, rule: FittingRule, signature: String?,
            patient: String? = nil,
            date: String? = nil
        ) {
            self.id = id
            self.name = name
            self.environment = environment
            self.audiologist = audiologist
            self.rule = rule
            self.signature = signature
            self.patient = patient
            self.date = date
        }
    }

    public struct Trial: Codable, Sendable, Equatable {
        public var secondsLeft: Double
        /// The prescription it goes back to (nil: none, unchanged sound).
        public var revertsTo: String?
        public init(secondsLeft: Double, revertsTo: String?) {
            self.secondsLeft = secondsLeft
            self.revertsTo = revertsTo
        }
    }

    public struct Jack: Codable, Sendable, Equatable {
        public var client: String
        public var sampleRate: Int
        public var period: Int
        /// What ribbit adds between its input and output ports (also reported to JACK).
        public var latencyFrames: Int
        public var latencyMilliseconds: Double
        /// JACK's DSP load for the whole graph, percent.
        public var dspLoadPercent: Double
        /// ribbit's own share: time in its process callback over the time between callbacks.
        public var ribbitLoadPercent: Double
        /// Longest process callback so far, microseconds.
        public var longestCallbackMicroseconds: Double
        public var cycles: Int
        public var xruns: Int
        /// Cycles ribbit's callback did not run for, found by JACK's frame time (an xrun
        /// notice may name none, or another client's), and JACK's frame time after each of the
        /// last 1024 gaps: where its input skipped.
        public var missedCycles: Int
        public var missedAtFrameTimes: [UInt32]
        /// Output samples the ceiling changed, since the client started.
        public var limitedSamples: Int
        /// Output samples the last guard on the audio thread changed (beyond the ceiling, or
        /// NaN), since the client started. It stays 0 while the ceiling holds still; a ceiling
        /// lowered while sound flows clips the few milliseconds already made under the old one
        /// (the guard takes a new ceiling at once, the engine at its next hop). Absent from older daemons.
        public var guardedSamples: Int?
        public init(
            client: String, sampleRate: Int, period: Int, latencyFrames: Int, latencyMilliseconds: Double,
            dspLoadPercent: Double, ribbitLoadPercent: Double, longestCallbackMicroseconds: Double,
            cycles: Int, xruns: Int, missedCycles: Int = 0, missedAtFrameTimes: [UInt32] = [], limitedSamples: Int,
            guardedSamples: Int? = nil
        ) {
            self.guardedSamples = guardedSamples
            self.missedCycles = missedCycles
            self.missedAtFrameTimes = missedAtFrameTimes
            self.client = client
            self.sampleRate = sampleRate
            self.period = period
            self.latencyFrames = latencyFrames
            self.latencyMilliseconds = latencyMilliseconds
            self.dspLoadPercent = dspLoadPercent
            self.ribbitLoadPercent = ribbitLoadPercent
            self.longestCallbackMicroseconds = longestCallbackMicroseconds
            self.cycles = cycles
            self.xruns = xruns
            self.limitedSamples = limitedSamples
        }
    }

    /// The calibration in use (ribbitd.conf and calibration.toml; ribbitd.conf(5)).
    public struct Calibration: Codable, Sendable, Equatable {
        /// The profile's name; nil: uncalibrated, the documented defaults.
        public var profile: String?
        /// dB SPL for a 0 dBFS 1 kHz sine: at the microphone, at the left and right ear.
        public var inputDBSPL: Double
        public var outputLeftDBSPL: Double
        public var outputRightDBSPL: Double
        /// How far off the numbers may be, dB either way (uncalibrated only).
        public var uncertaintyDB: Double?
        public init(profile: String?, inputDBSPL: Double, outputLeftDBSPL: Double, outputRightDBSPL: Double, uncertaintyDB: Double?) {
            self.profile = profile
            self.inputDBSPL = inputDBSPL
            self.outputLeftDBSPL = outputLeftDBSPL
            self.outputRightDBSPL = outputRightDBSPL
            self.uncertaintyDB = uncertaintyDB
        }
    }

    /// How the prescription is played: the program, the wearer's volume, what the compressor
    /// and noise reduction do with it.
    public struct Listening: Codable, Sendable, Equatable {
        /// The program playing.
        public var program: Program
        /// Chosen how: ribbit picks, the wearer chose, or the prescription's env selects it.
        public var chosenBy: ProgramChooser
        /// With auto: why it picked this program (nil until it has listened for a few seconds).
        public var reason: String?
        public var volumeDB: Double
        public var volumeMinDB: Double
        public var volumeMaxDB: Double
        /// Noise reduction strength, 0 (off) to 1.
        public var noiseReduction: Double
        /// Bands, whether any band compresses (ratio above 1), and per ear the highest band
        /// output limit in dB SPL (through the calibration).
        public var bands: Int
        public var compressing: Bool
        public var outputLimitDBSPL: [Double]
        /// Why the output limit is what it is (the OTC rule, a trusted audiologist's `limit:` ...).
        public var outputLimitReason: String?
        /// The bands playing less than the rule's target, through this calibration, as `rx show`
        /// lists them ("right 8000 Hz +60.8 -> +50.0 dB at 50 dB SPL (maximum gain), ..."); nil: none.
        public var shortfall: String?
        /// For a loss amplification cannot serve: where average speech stays inaudible, and what
        /// may help (`ClinicalNote`); nil otherwise.
        public var clinicalNote: String?
        /// What the compressor's stages did over the last second (nil while none runs: no
        /// JACK, bypass, pause, a tone).
        public var activity: Activity?
        public init(
            program: Program, chosenBy: ProgramChooser, reason: String?, volumeDB: Double, volumeMinDB: Double, volumeMaxDB: Double,
            noiseReduction: Double, bands: Int, compressing: Bool, outputLimitDBSPL: [Double], outputLimitReason: String? = nil
        ) {
            self.program = program
            self.chosenBy = chosenBy
            self.reason = reason
            self.volumeDB = volumeDB
            self.volumeMinDB = volumeMinDB
            self.volumeMaxDB = volumeMaxDB
            self.noiseReduction = noiseReduction
            self.bands = bands
            self.compressing = compressing
            self.outputLimitDBSPL = outputLimitDBSPL
            self.outputLimitReason = outputLimitReason
        }
    }

    /// What each band's stages did over the last second, the mean of both ears, 0.1 dB steps.
    public struct Activity: Codable, Sendable, Equatable {
        public var bandCentresHz: [Double]
        /// The band's input level as its detector read it (dB SPL, through the calibration).
        public var inputDBSPL: [Double]
        /// The compressor's gain against its gain for a sound at the band's knee: below 0 where it
        /// compresses louder sounds (or expands softer ones).
        public var compressionDB: [Double]
        /// The share of the second (0 to 1) the band's gain followed speech over steady noise
        /// rather than every gap between words.
        public var followingSpeech: [Double]
        /// The noise reduction's gain (0 or below; nil: the program reduces no noise).
        public var noiseReductionDB: [Double]?
        /// How far the output limit lowered the band (0 or below).
        public var outputLimitDB: [Double]
        public init(
            bandCentresHz: [Double], inputDBSPL: [Double], compressionDB: [Double], followingSpeech: [Double], noiseReductionDB: [Double]?,
            outputLimitDB: [Double]
        ) {
            self.bandCentresHz = bandCentresHz
            self.inputDBSPL = inputDBSPL
            self.compressionDB = compressionDB
            self.followingSpeech = followingSpeech
            self.noiseReductionDB = noiseReductionDB
            self.outputLimitDB = outputLimitDB
        }
    }

    /// The calibration tone mode (`tone`): the hearing aid is off while it runs.
    public struct Tone: Codable, Sendable, Equatable {
        /// What was asked last, after clamping (levelDBFS nil: silence, metering only).
        public var frequencyHz: Double
        public var levelDBFS: Double?
        public var ear: ToneEar
        /// Until the tone has ended, its last fade-out included: a hearing test's response
        /// window opens at 0.
        public var secondsLeft: Double
        /// A pulsed tone's pattern (absent: steady).
        public var pulses: Int?
        public var onMs: Double?
        public var offMs: Double?
        /// The input's levels (left, right) over the last quarter second, dBFS of a sine of
        /// that power; nil until the audio process reports them.
        public var inputDBFS: [Double]?
        /// The same in dB SPL through the calibration in use.
        public var inputDBSPL: [Double]?
        public init(
            frequencyHz: Double, levelDBFS: Double?, ear: ToneEar, secondsLeft: Double, inputDBFS: [Double]?, inputDBSPL: [Double]?,
            pulses: Int? = nil, onMs: Double? = nil, offMs: Double? = nil
        ) {
            self.frequencyHz = frequencyHz
            self.levelDBFS = levelDBFS
            self.ear = ear
            self.secondsLeft = secondsLeft
            (self.pulses, self.onMs, self.offMs) = (pulses, onMs, offMs)
            self.inputDBFS = inputDBFS
            self.inputDBSPL = inputDBSPL
        }
    }

    public enum Output: String, Codable, Sendable {
        /// The prescription is applied (or sound passes unchanged when none is loaded).
        case processing
        /// Silent.
        case paused
        /// Unprocessed sound, delayed like processed sound so nothing jumps in time.
        case bypassed
    }

    public var pid: Int32
    public var version: String
    public var uptimeSeconds: Double
    /// nil: no prescription loaded; sound passes through unchanged.
    public var prescription: ActivePrescription?
    public var output: Output
    /// nil while no JACK server is reachable (the daemon keeps retrying).
    public var jack: Jack?
    /// Why JACK is not connected, when it is not.
    public var jackProblem: String?
    /// xruns over every JACK connection since the daemon started.
    public var totalXruns: Int
    /// A trial fitting in progress.
    public var trial: Trial?
    /// Clients of the dump stream (`ribbitd dump`); while there are none the audio thread copies nothing for it.
    public var dumpListeners: Int?
    /// Clients of the voice stream (the voice exercises, `ribbitd voice`).
    public var voiceListeners: Int?
    /// The output ceiling in force in the current mode, dBFS (processing: the prescription's;
    /// bypass: the active prescription's; pass-through: the strictest in the history, at most
    /// the default -1). Never above 0.
    public var ceilingDBFS: Double?
    /// What went wrong with the prescription history and what the daemon did about it (a
    /// damaged file moved aside, a damaged entry, a history that cannot be opened).
    public var historyProblem: String?
    /// What else ribbit could not read or store, one line each with what it did instead and
    /// what to do: a directory that cannot be written or a full disk, a damaged ribbitd.conf
    /// (new prescriptions refused), calibration.toml (uncalibrated), listening.json, the copy of
    /// the active prescription, the data log.
    public var storageProblems: [String]?
    /// The calibration in use.
    public var calibration: Calibration?
    /// While the calibration tone mode runs.
    public var tone: Tone?
    /// With a prescription: the program, volume, compression and noise reduction.
    public var listening: Listening?
    /// The hearing test running, or the last one (until the next or a restart).
    public var hearingTest: HearingTestStatus?

    public init(
        pid: Int32, version: String, uptimeSeconds: Double, prescription: ActivePrescription?, output: Output,
        jack: Jack?, jackProblem: String?, totalXruns: Int, trial: Trial? = nil, dumpListeners: Int? = nil,
        ceilingDBFS: Double? = nil, historyProblem: String? = nil, calibration: Calibration? = nil, tone: Tone? = nil,
        listening: Listening? = nil, hearingTest: HearingTestStatus? = nil
    ) {
        self.listening = listening
        self.hearingTest = hearingTest
        self.calibration = calibration
        self.tone = tone
        self.trial = trial
        self.dumpListeners = dumpListeners
        self.ceilingDBFS = ceilingDBFS
        self.historyProblem = historyProblem
        self.pid = pid
        self.version = version
        self.uptimeSeconds = uptimeSeconds
        self.prescription = prescription
        self.output = output
        self.jack = jack
        self.jackProblem = jackProblem
        self.totalXruns = totalXruns
    }
}

extension ControlProtocol {
    public static func encode<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The types above encode without failing (no non-finite numbers reach them).
        var data = (try? encoder.encode(value)) ?? Data(#"{"ok":false,"error":"internal error: cannot encode the reply"}"#.utf8)
        data.append(0x0A)
        return data
    }
}
