import RibbitAudiometry
import RibbitPrescription

/// A hearing test run by the daemon (`hearing-test-start`), as `status` reports it while it
/// runs and after it ended (until the next one or a restart). It never says when a tone plays,
/// how loud, or whether a presentation is a catch trial: a screen that showed it would cue the
/// listener.
public struct HearingTestStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// Presenting tones; answers count.
        case running
        /// The room is too loud for the frequency being tested (`noise`): nothing plays until it
        /// has been quiet for `AmbientNoiseCheck.quietSecondsToResume`.
        case pausedForNoise = "paused-noise"
        /// Every frequency measured; the result is stored (`recordID`).
        case finished
        /// Stopped before the end (`hearing-test-stop`, the daemon stopping, JACK gone:
        /// `problem`); what was measured is stored, flagged incomplete.
        case stopped
    }

    /// The ambient-noise check of the last quarter second.
    public struct Noise: Codable, Sendable, Equatable {
        /// The octave band over its limit by the most (nil: every band within its limit).
        public var loudBandHz: Int?
        /// That band's level and limit, dB SPL at the microphone.
        public var levelDBSPL: Double?
        public var limitDBSPL: Double?
        /// The octave band around the frequency being tested, dB SPL (what each result records).
        public var testBandDBSPL: Double?
        public init(loudBandHz: Int?, levelDBSPL: Double?, limitDBSPL: Double?, testBandDBSPL: Double?) {
            self.loudBandHz = loudBandHz
            self.levelDBSPL = levelDBSPL
            self.limitDBSPL = limitDBSPL
            self.testBandDBSPL = testBandDBSPL
        }
    }

    public var state: State
    public var transducer: Transducer
    /// What is being tested now (nil once it ended).
    public var ear: Ear?
    public var frequencyHz: Int?
    public var isRetest: Bool?
    /// The ear masking noise plays in while the other is tested (nil: none): the listener is
    /// told to ignore it. It plays through a masked frequency's waits and tones alike, so
    /// saying so cues nothing.
    public var maskingEar: Ear?
    /// Frequencies done of all (both ears, the retests included).
    public var done: Int
    public var total: Int
    /// Answers the daemon has taken (a screen may acknowledge each; it says nothing about whether
    /// a tone played).
    public var answers: Int
    public var elapsedSeconds: Double
    /// Every frequency measured so far, in the order measured.
    public var frequencies: [FrequencyResult]
    /// Once it ended: why the result should not be trusted as it stands.
    public var flags: [ReliabilityFlag]
    /// Once it ended: referral reasons and thresholds the other ear may have heard.
    public var findings: HearingTestFindings?
    public var noise: Noise?
    /// Once it ended and was stored: the store's id (`ribbitd audiogram show ID`).
    public var recordID: Int64?
    /// Why it stopped or could not store its result: one line.
    public var problem: String?

    public init(
        state: State, transducer: Transducer, ear: Ear?, frequencyHz: Int?, isRetest: Bool?, done: Int, total: Int, answers: Int,
        elapsedSeconds: Double, frequencies: [FrequencyResult], flags: [ReliabilityFlag], noise: Noise?, recordID: Int64?,
        problem: String?, findings: HearingTestFindings? = nil, maskingEar: Ear? = nil
    ) {
        self.maskingEar = maskingEar
        self.state = state
        self.transducer = transducer
        self.ear = ear
        self.frequencyHz = frequencyHz
        self.isRetest = isRetest
        self.done = done
        self.total = total
        self.answers = answers
        self.elapsedSeconds = elapsedSeconds
        self.frequencies = frequencies
        self.flags = flags
        self.findings = findings
        self.noise = noise
        self.recordID = recordID
        self.problem = problem
    }
}
