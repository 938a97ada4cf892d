import RibbitPrescription

/// How each tone sounds: pulsed, so tinnitus and a steady hum are not mistaken for it, with
/// raised-cosine ramps so the onset does not click.
public struct PulsePattern: Sendable, Equatable, Codable {
    public var pulses = 3
    /// Each pulse's length between its half-amplitude points, as the daemon's tone generator
    /// counts `onMs` (its ramps straddle them); the gap likewise.
    public var pulseMs = 200
    public var rampMs = 25
    public var gapMs = 200

    public init() {}

    /// From the first pulse's half-amplitude onset to the last one's half-amplitude offset (the
    /// sound itself starts half a ramp earlier and ends half a ramp later).
    public var totalMs: Int { pulses * pulseMs + (pulses - 1) * gapMs }
}

/// A catch trial: nothing should be heard in the test ear.
public enum CatchTrial: String, Sendable, Codable {
    /// Nothing plays.
    case silent
    /// The tone plays in the other ear; only used when answers name the ear (`Plan.answersNameTheEar`),
    /// since a good other ear hears it honestly.
    case otherEar = "other-ear"
}

/// What to play next. The driver waits `waitMs`, plays the pulses (or nothing for a silent catch
/// trial) and listens for an answer until `responseWindowMs` after the first pulse's onset.
public struct Presentation: Sendable, Equatable, Codable {
    /// The ear being tested.
    public var testEar: Ear
    /// Where the tone plays: nil for a silent catch trial.
    public var toneEar: Ear?
    public var frequencyHz: Int
    public var levelDBHL: Int
    public var catchTrial: CatchTrial?
    /// The second 1 kHz measurement of this ear.
    public var isRetest: Bool
    public var waitMs: Int
    public var pulses: PulsePattern
    public var responseWindowMs: Int
    /// Masking noise in the other ear (the one not tested) while it plays, its effective level
    /// in dB EM (a tone at X dB HL is just masked by X dB EM); nil: none. A masked step's silent
    /// catch trials carry it too: the noise must not tell them apart.
    public var maskingDBEM: Int? = nil
}

/// What the listener did in a presentation's response window.
public enum Outcome: Sendable, Equatable {
    /// `ear` when the interface lets the listener say which ear heard it.
    case responded(responseTimeMs: Int, ear: Ear? = nil)
    case missed
}

/// The pure-tone procedure: a value that says what to present next and takes the outcome. No
/// audio, no clock, no I/O: randomness (waits, catch trials) comes from the generator passed
/// to `next(using:)`, so a seeded generator replays a test exactly.
///
/// Per ear (the better ear first when known) and frequency in the clinical order, a first
/// estimate ascends in 10 dB steps from `Plan.startDBHL`; then modified Hughson-Westlake (ASHA
/// 2005): down 10 dB after a response, up 5 dB after a miss; the threshold is the lowest level
/// with responses on at least 2 of (at most) 3 ascending presentations, i.e. at least 2 and at
/// least half of them.
public struct HearingTest: Sendable {
    public struct Plan: Sendable, Equatable {
        /// The clinical order: 1 kHz first (the easiest to judge), up, the 1 kHz retest, then down.
        public static let clinicalOrder = [1000, 2000, 3000, 4000, 6000, 8000, 1000, 500, 250]
        /// The longest plan a request may ask for: every audiometric frequency of 125 Hz to
        /// 8 kHz (11, the half-octaves included), each with a retest.
        public static let maxPresentedFrequencies = 22
        /// ASHA (2005): the half-octave between two octaves whose thresholds differ by
        /// `interOctaveStepDB` or more is tested too (750 Hz between 500 and 1000, 1500 between
        /// 1000 and 2000; 3 and 6 kHz are in the clinical order already).
        public static let interOctaves = [(hz: 750, below: 500, above: 1000), (hz: 1500, below: 1000, above: 2000)]
        public static let interOctaveStepDB = 20
        public var ears: [Ear]
        public var frequenciesHz = clinicalOrder
        /// Whether the ASHA inter-octave rule adds 750/1500 Hz where the plan has both octaves
        /// around one and `maximumDBHL` a level for it.
        public var addsInterOctaves = false
        /// The highest level per ear and frequency (`ToneLevels.maximumDBHL`: the clip limit and
        /// the self-test ceiling). A frequency missing here is not tested.
        public var maximumDBHL: [Ear: [Int: Int]]
        public static let floorDBHL = -10
        /// 20 dB HL: heard at once by a normal ear, so the first descent starts there, and a
        /// 60 dB loss needs 4 steps of 10 dB, not 6 from 0 dB HL. Later frequencies start at the
        /// threshold of the ear's nearest measured frequency (neighbours are usually within 10 dB, so the first answer
        /// starts the bracketing at once; 10 dB below it cost 12 more presentations a test in
        /// the simulations), the retest at 20 dB HL again so it does not lean on the first result.
        public var startDBHL = 20
        /// About 1 in 8 presentations is a catch trial.
        public var catchTrialProbability = 1.0 / 8
        public var answersNameTheEar = false
        public var waitRangeMs = 1000...3000
        public var pulses = PulsePattern()
        /// Answers count from the first pulse's onset to this long after the last pulse ends.
        public var afterToneMs = 1000
        /// A frequency gets at most this many ascending runs (a run ends with a response after
        /// ascending); a listener still inconsistent after them gets "undetermined", never a
        /// guessed number. 2 of 3 usually needs 2-3.
        public var maximumRuns = 5
        /// Misses at the maximum level that end a frequency as "no response".
        public var missesAtMaximumForNoResponse = 2
        /// A backstop for listeners who answer in patterns the runs do not catch.
        public static let maximumPresentations = 40
        /// The most masking noise per ear it plays in and frequency (dB EM): what the headphones
        /// can play under the output limit. Empty: no masking; thresholds the other ear may have
        /// heard stay unmasked and are flagged (`HearingTestFindings`).
        public var maximumMaskingDBEM: [Ear: [Int: Int]] = [:]
        /// The headphones' least interaural attenuation (`Transducer.interauralAttenuationDB`).
        public var interauralAttenuationDB = 40
        /// Masking's safety margin: the noise lies this far above what it must mask (the other
        /// ear's threshold, and the tone as it arrives there through the head).
        public static let maskingSafetyDB = 10
        /// The plateau: the masked threshold is found again with this much more noise, and it
        /// holds when it rises by at most `plateauToleranceDB` (5 dB: one step, the bracketing's
        /// own uncertainty); otherwise the noise was too weak, and it goes up again, at most
        /// `maximumMaskingRounds` times in all.
        public static let plateauStepDB = 10
        public static let plateauToleranceDB = 5
        public static let maximumMaskingRounds = 3

        /// `betterEar` first when the person knows it; otherwise the right ear first.
        public init(maximumDBHL: [Ear: [Int: Int]], betterEar: Ear? = nil) {
            self.maximumDBHL = maximumDBHL
            let first = betterEar ?? .right
            ears = [first, first == .right ? .left : .right]
        }

        /// One maximum for every frequency of both ears (a test's convenience).
        public init(maximumDBHL: Int, betterEar: Ear? = nil) {
            let all = Dictionary(uniqueKeysWithValues: Set(Self.clinicalOrder).map { ($0, maximumDBHL) })
            self.init(maximumDBHL: [.left: all, .right: all], betterEar: betterEar)
        }
    }

    struct Step: Sendable {
        var ear: Ear
        var frequencyHz: Int
        var isRetest: Bool
        var maximumDBHL: Int
        var masking: MaskedStep? = nil
    }

    /// A threshold measured again with noise in the other ear. The noise follows the tone (the
    /// way automated audiometers such as AMTAS tie the masker to the signal): `safety` dB over
    /// the other ear's threshold and over the tone as it arrives there (its level less the
    /// interaural attenuation), plus `offsetDB`, raised for each round of the plateau.
    struct MaskedStep: Sendable {
        var otherEarDBHL: Int
        var maximumDBEM: Int
        var startDBHL: Int
        var round = 0
        var previousDBHL: Int? = nil

        var offsetDB: Int { round * Plan.plateauStepDB }

        func noiseDBEM(toneDBHL: Int, interauralAttenuationDB: Int) -> Int {
            max(otherEarDBHL, toneDBHL - interauralAttenuationDB) + Plan.maskingSafetyDB + offsetDB
        }
    }

    /// One frequency's staircase.
    struct Track: Sendable {
        var levelDBHL: Int
        var firstEstimate = true
        /// The next presentation follows a miss (or starts at the floor): it is ascending.
        var ascending = false
        var ascendingPresented: [Int: Int] = [:]
        var ascendingResponded: [Int: Int] = [:]
        var runs = 0
        var presentations = 0
        var missesAtMaximum = 0
        /// The loudest ambient noise (octave band at the frequency) over its presentations.
        var ambientNoiseDBSPL: Double?
    }

    public let plan: Plan
    var steps: [Step]
    var stepIndex = 0
    var track: Track?
    var pending: Presentation?
    var results: [FrequencyResult] = []
    var log: [LoggedPresentation] = []
    var strayPresses = 0
    /// The masked steps were added (once the unmasked test of both ears ended).
    var maskingPlanned = false
    /// Tone presentations of a masked threshold's earlier rounds, counted into its result.
    var maskedPresentations = 0

    public init(plan: Plan) {
        self.plan = plan
        var steps: [Step] = []
        for ear in plan.ears {
            var seen = Set<Int>()
            for frequencyHz in plan.frequenciesHz {
                guard let maximum = plan.maximumDBHL[ear]?[frequencyHz], maximum >= Plan.floorDBHL else { continue }
                steps.append(Step(ear: ear, frequencyHz: frequencyHz, isRetest: seen.contains(frequencyHz), maximumDBHL: maximum))
                seen.insert(frequencyHz)
            }
        }
        self.steps = steps
    }

    public var isFinished: Bool { stepIndex >= steps.count }

    /// What is being tested now (nil once finished).
    public var currentStep: (ear: Ear, frequencyHz: Int, isRetest: Bool)? {
        isFinished ? nil : (steps[stepIndex].ear, steps[stepIndex].frequencyHz, steps[stepIndex].isRetest)
    }

    /// Whether the step being tested plays masking noise in the other ear.
    public var currentStepIsMasked: Bool { isFinished ? false : steps[stepIndex].masking != nil }

    /// The presentation drawn and not yet answered (what `next` returns), if any.
    public var pendingPresentation: Presentation? { pending }

    /// How far the test has got: frequencies done of all.
    public var progress: (done: Int, total: Int) { (stepIndex, steps.count) }

    /// The presentation to play now; the same one until `record` takes its outcome. nil when the
    /// test is over.
    public mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Presentation? {
        if let pending { return pending }
        guard !isFinished else { return nil }
        let step = steps[stepIndex]
        if track == nil { track = Track(levelDBHL: startLevel(for: step)) }
        let level = track!.levelDBHL
        let masking = step.masking?.noiseDBEM(toneDBHL: level, interauralAttenuationDB: plan.interauralAttenuationDB)
        if let masking, let masked = step.masking, masking > masked.maximumDBEM {
            // The headphones cannot play the noise this needs: the unmasked threshold stays, flagged.
            skipStep()
            return next(using: &generator)
        }
        var catchTrial: CatchTrial? = nil
        if Double.random(in: 0..<1, using: &generator) < plan.catchTrialProbability {
            // With noise in the other ear a tone there would be masked: silent catch trials only.
            catchTrial = plan.answersNameTheEar && masking == nil && Bool.random(using: &generator) ? .otherEar : .silent
            // The other ear's limits hold too: no louder than its maximum, no frequency it lacks.
            let other: Ear = step.ear == .right ? .left : .right
            if catchTrial == .otherEar, level > plan.maximumDBHL[other]?[step.frequencyHz] ?? Int.min { catchTrial = .silent }
        }
        let toneEar: Ear? =
            switch catchTrial {
            case nil: step.ear
            case .silent: nil
            case .otherEar: step.ear == .right ? .left : .right
            }
        let presentation = Presentation(
            testEar: step.ear, toneEar: toneEar, frequencyHz: step.frequencyHz, levelDBHL: level, catchTrial: catchTrial,
            isRetest: step.isRetest, waitMs: Int.random(in: plan.waitRangeMs, using: &generator), pulses: plan.pulses,
            responseWindowMs: plan.pulses.totalMs + plan.afterToneMs, maskingDBEM: masking)
        pending = presentation
        return presentation
    }

    /// Drops the pending presentation unanswered and unlogged: the driver could not play it or
    /// listen to all of it (the room got loud, the test was paused). The next `next(using:)`
    /// draws a new one at the same step.
    public mutating func withdraw() { pending = nil }

    /// A press while no tone's window was open (during a wait): a false alarm.
    public mutating func recordPressOutsideWindow() { strayPresses += 1 }

    /// The outcome of the pending presentation, and the ambient noise it was given in (the
    /// microphone's octave band around the frequency, dB SPL; nil: not measured). Without one
    /// pending it does nothing: an answer that arrives late is the driver's press outside a window.
    public mutating func record(_ outcome: Outcome, ambientNoiseDBSPL: Double? = nil) {
        guard let presentation = pending else { return }
        pending = nil
        var entry = LoggedPresentation(presentation: presentation, outcome: outcome)
        entry.ambientNoiseDBSPL = ambientNoiseDBSPL
        defer { log.append(entry) }
        if let catchTrial = presentation.catchTrial {
            // A response is false unless it names the ear the tone was really in.
            if case .responded(_, let ear) = outcome {
                entry.falseAlarm = catchTrial == .silent || ear != presentation.toneEar
            }
            return
        }
        // Naming the other ear is not hearing the tested one (cross-hearing): a miss here.
        var heard = outcome != .missed
        if plan.answersNameTheEar, case .responded(_, let ear?) = outcome, ear != presentation.testEar { heard = false }
        advance(presentation: presentation, responded: heard, ambientNoiseDBSPL: ambientNoiseDBSPL)
    }

    mutating func advance(presentation: Presentation, responded: Bool, ambientNoiseDBSPL: Double?) {
        let step = steps[stepIndex]
        var t = track!
        let level = t.levelDBHL
        t.presentations += 1
        if let noise = ambientNoiseDBSPL { t.ambientNoiseDBSPL = max(t.ambientNoiseDBSPL ?? noise, noise) }
        // The floor cannot be approached from below, so a presentation there counts as ascending.
        let countsAscending = !t.firstEstimate && (t.ascending || level == Plan.floorDBHL)
        if countsAscending {
            t.ascendingPresented[level, default: 0] += 1
            if responded { t.ascendingResponded[level, default: 0] += 1 }
        }
        if !responded && level == step.maximumDBHL { t.missesAtMaximum += 1 }
        let responses = t.ascendingResponded[level, default: 0]
        if countsAscending && responded && responses >= 2 && 2 * responses >= t.ascendingPresented[level, default: 0] {
            return finish(step: step, track: t, status: .threshold, thresholdDBHL: level)
        }
        if t.missesAtMaximum >= plan.missesAtMaximumForNoResponse {
            return finish(step: step, track: t, status: .noResponse, thresholdDBHL: nil)
        }
        if t.presentations >= Plan.maximumPresentations {
            return finish(step: step, track: t, status: .undetermined, thresholdDBHL: nil)
        }
        if responded {
            if countsAscending { t.runs += 1 }
            if t.runs >= plan.maximumRuns {
                return finish(step: step, track: t, status: .undetermined, thresholdDBHL: nil)
            }
            t.firstEstimate = false
            t.levelDBHL = max(level - 10, Plan.floorDBHL)
            t.ascending = false
        } else {
            t.levelDBHL = min(level + (t.firstEstimate ? 10 : 5), step.maximumDBHL)
            t.ascending = true
        }
        track = t
    }

    mutating func finish(step: Step, track t: Track, status: FrequencyResult.Status, thresholdDBHL: Int?) {
        var measured = FrequencyResult(
            ear: step.ear, frequencyHz: step.frequencyHz, isRetest: step.isRetest, status: status, thresholdDBHL: thresholdDBHL,
            maximumTestedDBHL: step.maximumDBHL, presentations: t.presentations, ambientNoiseDBSPL: t.ambientNoiseDBSPL)
        guard let masked = step.masking else {
            results.append(measured)
            track = nil
            stepIndex += 1
            if plan.addsInterOctaves { addInterOctaves(ear: step.ear) }
            if isFinished { planMasking() }
            return
        }
        let level = thresholdDBHL ?? step.maximumDBHL
        measured.maskingDBEM = masked.noiseDBEM(toneDBHL: level, interauralAttenuationDB: plan.interauralAttenuationDB)
        measured.presentations += maskedPresentations
        switch status {
        case .noResponse:
            // Not heard with the least noise: masked, no response. After a threshold with less
            // noise, only where that threshold lay within the plateau's 5 dB of the maximum (it
            // may have moved no more); otherwise the noise may have crossed to the tested ear
            // (overmasking; bone conduction, which would tell, is not measured), so the unmasked
            // threshold stays, flagged.
            if masked.round == 0 || (masked.previousDBHL ?? Int.min) >= step.maximumDBHL - Plan.plateauToleranceDB {
                results.append(measured)
            }
        case .threshold:
            if let previous = masked.previousDBHL, level - previous <= Plan.plateauToleranceDB {
                results.append(measured)  // the plateau: it held with more noise
            } else if masked.round + 1 < Plan.maximumMaskingRounds {
                var next = step
                next.masking = MaskedStep(
                    otherEarDBHL: masked.otherEarDBHL, maximumDBEM: masked.maximumDBEM, startDBHL: level, round: masked.round + 1,
                    previousDBHL: level)
                maskedPresentations = measured.presentations
                steps.insert(next, at: stepIndex + 1)
                track = nil
                stepIndex += 1
                return
            }
        // Still rising with the most noise tried: the unmasked threshold stays, flagged.
        case .undetermined: break
        }
        maskedPresentations = 0
        track = nil
        stepIndex += 1
    }

    /// Leaves a masked step unmeasured (the noise it needs is more than the headphones play).
    mutating func skipStep() {
        maskedPresentations = 0
        track = nil
        stepIndex += 1
    }

    /// After both ears' unmasked test: the thresholds the other ear may have heard (the rule
    /// `HearingTestFindings` flags: within its margin of the interaural attenuation above the
    /// other ear's) are measured again with masking noise there, where the plan has a maximum
    /// for the noise.
    mutating func planMasking() {
        guard !maskingPlanned else { return }
        maskingPlanned = true
        let need = plan.interauralAttenuationDB - HearingTestFindings.crossHearingMarginDB
        for ear in plan.ears {
            let other: Ear = ear == .right ? .left : .right
            for measured in results.audiogram(ear: ear) {
                guard measured.status == .threshold, let threshold = measured.thresholdDBHL,
                    let otherThreshold = results.kept(ear: other, frequencyHz: measured.frequencyHz)?.thresholdDBHL,
                    threshold - otherThreshold >= need,
                    let maximumNoise = plan.maximumMaskingDBEM[other]?[measured.frequencyHz],
                    let maximum = plan.maximumDBHL[ear]?[measured.frequencyHz]
                else { continue }
                steps.append(
                    Step(
                        ear: ear, frequencyHz: measured.frequencyHz, isRetest: false, maximumDBHL: maximum,
                        masking: MaskedStep(otherEarDBHL: otherThreshold, maximumDBEM: maximumNoise, startDBHL: threshold)))
            }
        }
    }

    /// Next, the half-octaves whose two octaves this ear has now measured 20 dB or more apart (the
    /// audiogram's values, a retest's better one included; a no-response counts at its maximum,
    /// as the least it can be).
    mutating func addInterOctaves(ear: Ear) {
        func level(_ hz: Int) -> Int? {
            guard let measured = results.kept(ear: ear, frequencyHz: hz) else { return nil }
            return measured.status == .noResponse ? measured.maximumTestedDBHL : measured.thresholdDBHL
        }
        for mid in Plan.interOctaves.reversed() {
            guard !steps.contains(where: { $0.ear == ear && $0.frequencyHz == mid.hz }),
                let maximum = plan.maximumDBHL[ear]?[mid.hz], maximum >= Plan.floorDBHL,
                let below = level(mid.below), let above = level(mid.above), abs(above - below) >= Plan.interOctaveStepDB
            else { continue }
            steps.insert(Step(ear: ear, frequencyHz: mid.hz, isRetest: false, maximumDBHL: maximum), at: stepIndex)
        }
    }

    func startLevel(for step: Step) -> Int {
        // Masked: from the threshold before (masking can only raise it).
        if let masked = step.masking { return min(masked.startDBHL, step.maximumDBHL) }
        var start = plan.startDBHL
        // The nearest frequency already measured in this ear (500 Hz starts from 1 kHz, not 8 kHz).
        func octaveRatio(_ other: Int) -> Double { Double(max(other, step.frequencyHz)) / Double(min(other, step.frequencyHz)) }
        let measured = results.filter { $0.ear == step.ear && !$0.isRetest && $0.thresholdDBHL != nil }
        if !step.isRetest, let nearest = measured.min(by: { octaveRatio($0.frequencyHz) < octaveRatio($1.frequencyHz) }) {
            start = nearest.thresholdDBHL!
        }
        return min(max(start, Plan.floorDBHL), step.maximumDBHL)
    }

    /// What has been measured so far (all of it once `isFinished`), with its reliability.
    public var result: HearingTestResult {
        HearingTestResult(plan: plan, frequencies: results, log: log, strayPresses: strayPresses, complete: isFinished)
    }
}
