import Foundation
import RibbitAudiometry
import RibbitControl
import RibbitPrescription
import RibbitSignals

/// One hearing test run by the daemon: the pure procedure (`HearingTest`) put in time. It draws
/// each presentation, waits its random 1-3 s, asks for its pulses, opens the response window at
/// the tone's onset, takes answers, and pauses while the room is too loud. It does no I/O: the
/// daemon calls `tick` every turn of its poll loop and carries out the actions it returns.
final class HearingTestSession {
    /// What the daemon does for it.
    enum Action: Equatable {
        /// Play a presentation's pulses (a hearing test's tone: the tone mode stays on, silent,
        /// after them).
        case play(frequencyHz: Int, levelDBFS: Double, ear: Ear, pulses: PulsePattern)
        /// Play masking noise (dB EM converted to dBFS through that ear's calibration) around a
        /// frequency in one ear for `seconds`, or stop it (`levelDBFS` nil).
        case mask(frequencyHz: Int, levelDBFS: Double?, ear: Ear, seconds: Double)
        /// Keep the tone mode on, silent (the hearing aid stays off between tones).
        case holdSilence
        /// The test is over: the hearing aid plays again.
        case end
    }

    enum Phase: Equatable {
        /// A presentation is drawn; it plays at `until`.
        case waiting(until: Double)
        /// Answers between `onset` and `windowEnds` count; the next wait starts after `soundEnds`.
        case presenting(onset: Double, windowEnds: Double, soundEnds: Double)
        /// Too loud for the frequency being tested; resumes after `AmbientNoiseCheck.quietSecondsToResume` of quiet.
        case pausedForNoise(quietSince: Double?)
        case ended
    }

    /// The room as the microphone hears it, judged for one presentation.
    struct NoiseReading {
        var tooLoud: Bool
        var status: HearingTestStatus.Noise
    }

    /// The tone mode is renewed this often while nothing plays (a hold lasts a minute).
    static let holdRefreshSeconds = 20.0
    /// How long past the estimated window a tone that has not been told started is waited for
    /// (a loaded machine), before it is taken as never played and drawn again.
    static let startGraceSeconds = 2.0
    /// Tones in a row never told started after which the test stops: the audio process does
    /// not play them.
    static let unstartedTonesToStop = 3
    /// Masking noise is asked for this long and renewed once less than `maskerRenewSeconds` is
    /// left: it sounds through a masked frequency's waits and tones without a gap, and stops by
    /// itself should the daemon go away.
    static let maskerSeconds = 8.0
    static let maskerRenewSeconds = 4.0

    private(set) var test: HearingTest
    private var random: SeededRandom
    let transducer: Transducer
    let levels: [Ear: ToneLevels]
    let ceilingDBHL: Double
    /// The consumer headphones' biological calibration the levels went through (nil: none).
    var biologicalReferenceDBHL: [Int: Double]?
    let started: Double
    /// When it ended (finished or stopped): its length stays what it was.
    private(set) var ended: Double?
    private(set) var phase: Phase
    private(set) var answers = 0
    private var lastHold: Double
    /// Whether the audio process tells when each tone began (`toneStarted`): the window then
    /// opens at that real onset, not at the estimate (`toneStartDelay`) made when it was asked.
    var startsAreTold = false
    /// The tone presented has not been told started yet (only while `startsAreTold`).
    private var awaitingStart = false
    /// A press that came while the onset was not known yet: judged once it is.
    private var heldPress: (at: Double, ear: Ear?)?
    /// Tones in a row given up on (never told started).
    private var unstartedTones = 0
    /// Judges the room for a frequency and level (dB HL); nil: no reading yet (no check).
    private let judgeNoise: (_ frequencyHz: Int, _ levelDBHL: Int) -> NoiseReading?
    private var lastNoise: HearingTestStatus.Noise?
    /// The masking noise asked for last (nil: none).
    private var masker: (frequencyHz: Int, dBEM: Int, ear: Ear, until: Double)?
    /// The last tone's sound (its last fade-out) ends then: the masking noise does not change
    /// before, so it never starts in an ear a tone is still fading out in.
    private var lastSoundEnds = -Double.infinity
    /// Why it stopped early, or why its result could not be stored.
    var problem: String?
    /// Stopped before every frequency was measured.
    private(set) var stoppedEarly = false
    var recordID: Int64?

    init(
        plan: HearingTest.Plan, levels: [Ear: ToneLevels], transducer: Transducer, ceilingDBHL: Double, seed: UInt64, now: Double,
        judgeNoise: @escaping (_ frequencyHz: Int, _ levelDBHL: Int) -> NoiseReading?
    ) {
        test = HearingTest(plan: plan)
        random = SeededRandom(seed: seed)
        self.levels = levels
        self.transducer = transducer
        self.ceilingDBHL = ceilingDBHL
        self.judgeNoise = judgeNoise
        started = now
        lastHold = now
        // A second to settle (and to hear the room) before the first wait.
        phase = .waiting(until: now + 1)
        if let first = test.next(using: &random) { phase = .waiting(until: now + 1 + Double(first.waitMs) / 1000) }
    }

    var isOver: Bool { phase == .ended }

    /// The start of the test: the tone mode on, silent.
    var startActions: [Action] { [.holdSilence] }

    /// One turn: `toneStartDelay` is how long after a request the audio process plays a tone's
    /// first frame (the response window opens then).
    func tick(now: Double, toneStartDelay: Double) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .ended: return []
        case .waiting(let until):
            guard let presentation = test.next(using: &random) else { return finish(now: now) }
            if let noise = reading(for: presentation), noise.tooLoud {
                test.withdraw()
                phase = .pausedForNoise(quietSince: nil)
                break
            }
            guard now >= until else { break }
            let onset: Double
            if let ear = presentation.toneEar,
                let dBFS = levels[ear]?.dBFS(dBHL: Double(presentation.levelDBHL), frequencyHz: presentation.frequencyHz)
            {
                // The noise is asked again with the tone (the same level crossfades seamlessly):
                // should the audio process have dropped it (it takes noise only in the tone
                // mode), the tone does not play unmasked.
                if let dBEM = presentation.maskingDBEM {
                    actions += ask(masker: (presentation.frequencyHz, dBEM, ear == .right ? .left : .right), now: now)
                }
                actions.append(.play(frequencyHz: presentation.frequencyHz, levelDBFS: dBFS, ear: ear, pulses: presentation.pulses))
                onset = now + toneStartDelay
                awaitingStart = startsAreTold
            } else {
                onset = now  // a silent catch trial: the window opens as a tone's would
                awaitingStart = false
            }
            heldPress = nil
            let pattern = presentation.pulses
            phase = .presenting(
                onset: onset, windowEnds: onset + Double(presentation.responseWindowMs) / 1000,
                soundEnds: onset + Double(pattern.totalMs + pattern.rampMs) / 1000)
            if presentation.toneEar != nil { lastSoundEnds = onset + Double(pattern.totalMs + pattern.rampMs) / 1000 }
            lastHold = now
        case .presenting(_, let windowEnds, let soundEnds):
            guard let presentation = test.next(using: &random) else { return finish(now: now) }
            if let noise = reading(for: presentation), noise.tooLoud {
                // Masked or not, this one cannot be trusted: drawn again once it is quiet.
                test.withdraw()
                forgetOnset()
                phase = .pausedForNoise(quietSince: nil)
                break
            }
            if awaitingStart {
                // Not begun as far as we know: no miss before it could be heard. Well past the
                // estimate it is taken as never played (replaced, lost): not scored, drawn again.
                guard now > windowEnds + Self.startGraceSeconds else { break }
                forgetOnset()
                test.withdraw()
                unstartedTones += 1
                if unstartedTones >= Self.unstartedTonesToStop {
                    return stop(why: "the audio process did not play the test's tones (\(unstartedTones) in a row never began)", now: now)
                }
                guard let next = test.next(using: &random) else { return finish(now: now) }
                phase = .waiting(until: now + Double(next.waitMs) / 1000)
                // Silence replaces it, should the audio process only have been held up: a tone
                // that came now would sound during the wait and draw a stray press.
                actions.append(.holdSilence)
                lastHold = now
                break
            }
            if now > windowEnds {
                test.record(.missed, ambientNoiseDBSPL: lastNoise?.testBandDBSPL)
                actions += afterAnswer(now: now, soundEnds: soundEnds)
            }
        case .pausedForNoise(let quietSince):
            guard let presentation = test.next(using: &random) else { return finish(now: now) }
            if let noise = reading(for: presentation), noise.tooLoud {
                phase = .pausedForNoise(quietSince: nil)
            } else if let since = quietSince {
                if now - since >= AmbientNoiseCheck.quietSecondsToResume {
                    phase = .waiting(until: now + Double(presentation.waitMs) / 1000)
                }
            } else {
                phase = .pausedForNoise(quietSince: now)
            }
        }
        var presenting = false
        if case .presenting = phase { presenting = true }
        if phase != .ended, !presenting, now - lastHold >= Self.holdRefreshSeconds {
            actions.append(.holdSilence)
            lastHold = now
        }
        return actions + maskerActions(now: now)
    }

    /// The masking noise the presentation drawn asks for, from the start of its wait (so the
    /// noise's changes never mark a tone's onset) through its window; none while paused for the
    /// room or once the test is over.
    private func maskerActions(now: Double) -> [Action] {
        // The tone answered may still be fading out: the noise changes once it is over.
        if phase != .ended, now < lastSoundEnds { return [] }
        var wanted: (frequencyHz: Int, dBEM: Int, ear: Ear)?
        switch phase {
        case .waiting, .presenting:
            if let presentation = test.pendingPresentation, let dBEM = presentation.maskingDBEM {
                wanted = (presentation.frequencyHz, dBEM, presentation.testEar == .right ? .left : .right)
            }
        default: break
        }
        guard let wanted else {
            guard let playing = masker else { return [] }
            masker = nil
            return [.mask(frequencyHz: playing.frequencyHz, levelDBFS: nil, ear: playing.ear, seconds: 0)]
        }
        if let playing = masker, playing.frequencyHz == wanted.frequencyHz, playing.dBEM == wanted.dBEM, playing.ear == wanted.ear,
            now < playing.until - Self.maskerRenewSeconds
        {
            return []
        }
        return ask(masker: wanted, now: now)
    }

    /// Asks for masking noise (the record of what plays follows), or stops it when the ear's
    /// calibration has no level for it.
    private func ask(masker wanted: (frequencyHz: Int, dBEM: Int, ear: Ear), now: Double) -> [Action] {
        guard let dBFS = levels[wanted.ear]?.maskingDBFS(dBEM: Double(wanted.dBEM), frequencyHz: wanted.frequencyHz) else {
            // No level for it (the plan gives noise only where the calibration has one): none.
            guard let playing = masker else { return [] }
            masker = nil
            return [.mask(frequencyHz: playing.frequencyHz, levelDBFS: nil, ear: playing.ear, seconds: 0)]
        }
        masker = (wanted.frequencyHz, wanted.dBEM, wanted.ear, now + Self.maskerSeconds)
        return [.mask(frequencyHz: wanted.frequencyHz, levelDBFS: dBFS, ear: wanted.ear, seconds: Self.maskerSeconds)]
    }

    /// The audio process began the tone presented at `at`: the window opens there (moved with
    /// the sound's end), and a press held meanwhile is judged against it.
    func toneStarted(at: Double) -> [Action] {
        guard awaitingStart, case .presenting(let onset, let windowEnds, let soundEnds) = phase else { return [] }
        awaitingStart = false
        unstartedTones = 0
        let late = at - onset
        phase = .presenting(onset: at, windowEnds: windowEnds + late, soundEnds: soundEnds + late)
        lastSoundEnds = soundEnds + late
        guard let press = heldPress else { return [] }
        heldPress = nil
        return judge(press: press.at, ear: press.ear)
    }

    /// The listener pressed (naming `ear` when the screen asks).
    func answer(ear: Ear?, now: Double) -> [Action] {
        guard phase != .ended else { return [] }
        answers += 1
        if awaitingStart, case .presenting = phase {
            // The first press waits for the onset; more presses before it add nothing.
            if heldPress == nil { heldPress = (now, ear) }
            return []
        }
        return judge(press: now, ear: ear)
    }

    /// A press at `now`: a response in the window, else a false alarm (none while paused for noise).
    private func judge(press now: Double, ear: Ear?) -> [Action] {
        if case .presenting(let onset, let windowEnds, let soundEnds) = phase, now >= onset, now <= windowEnds {
            test.record(
                .responded(responseTimeMs: Int(((now - onset) * 1000).rounded()), ear: ear), ambientNoiseDBSPL: lastNoise?.testBandDBSPL)
            return afterAnswer(now: now, soundEnds: soundEnds)
        }
        // While paused for noise nothing is asked: a press then (often at the tone the noise
        // interrupted) is no false alarm.
        if case .pausedForNoise = phase { return [] }
        test.recordPressOutsideWindow()
        return []
    }

    /// Ends it before every frequency is measured (the pending presentation is not counted).
    func stop(why: String, now: Double) -> [Action] {
        guard phase != .ended else { return [] }
        ended = now
        test.withdraw()
        forgetOnset()
        problem = why
        stoppedEarly = true
        phase = .ended
        return [.end]
    }

    /// Leaving a presentation: nothing of its onset carries over to the next.
    private func forgetOnset() {
        awaitingStart = false
        heldPress = nil
    }

    private func afterAnswer(now: Double, soundEnds: Double) -> [Action] {
        forgetOnset()
        guard let next = test.next(using: &random) else { return finish(now: now) }
        phase = .waiting(until: max(now, soundEnds) + Double(next.waitMs) / 1000)
        return []
    }

    private func finish(now: Double) -> [Action] {
        forgetOnset()
        ended = now
        phase = .ended
        return [.end]
    }

    private func reading(for presentation: Presentation) -> NoiseReading? {
        let reading = judgeNoise(presentation.frequencyHz, presentation.levelDBHL)
        // No reading (the microphone silent) leaves the noise unknown, not as it was last heard.
        lastNoise = reading?.status
        return reading
    }

    /// The record to store: the result so far (flagged incomplete when stopped early).
    func record(date: Date, calibration: DaemonStatus.Calibration) -> HearingTestRecord {
        HearingTestRecord(
            date: Self.isoDate(date), transducer: transducer, calibrationProfile: calibration.profile,
            outputLeftDBSPL: calibration.outputLeftDBSPL, outputRightDBSPL: calibration.outputRightDBSPL,
            inputDBSPL: calibration.inputDBSPL,
            uncertaintyDB: calibration.uncertaintyDB, retsplIsStandard: RETSPLTable.standard(transducer).isStandard,
            ceilingDBHL: ceilingDBHL,
            result: test.result, biologicalReferenceDBHL: biologicalReferenceDBHL)
    }

    static func isoDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// What a screen may show: never when a tone plays, how loud, or whether it is a catch trial.
    func status(now: Double) -> HearingTestStatus {
        let result = test.result
        let state: HearingTestStatus.State =
            switch phase {
            case .ended: stoppedEarly ? .stopped : .finished
            case .pausedForNoise: .pausedForNoise
            default: .running
            }
        let current = phase == .ended ? nil : test.currentStep
        let progress = test.progress
        return HearingTestStatus(
            state: state, transducer: transducer, ear: current?.ear, frequencyHz: current?.frequencyHz,
            isRetest: current?.isRetest, done: progress.done, total: progress.total, answers: answers,
            elapsedSeconds: (ended ?? now) - started,
            frequencies: result.frequencies, flags: phase == .ended ? result.flags : [], noise: lastNoise, recordID: recordID,
            problem: problem,
            findings: phase == .ended ? HearingTestFindings(frequencies: result.frequencies, transducer: transducer) : nil,
            maskingEar: current != nil && test.currentStepIsMasked ? (current!.ear == .right ? .left : .right) : nil)
    }
}
