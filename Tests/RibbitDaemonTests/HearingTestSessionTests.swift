import RibbitAudiometry
import RibbitControl
import RibbitPrescription
import Testing

@testable import RibbitDaemon

/// The daemon's hearing test in time, on its own: a clock stepped by hand, no JACK, no socket.
@Suite struct HearingTestSessionTests {
    static let levels = ToneLevels(table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 100))

    static func session(
        seed: UInt64 = 1, catchTrials: Double = 0, noise: @escaping (Int, Int) -> HearingTestSession.NoiseReading? = { _, _ in nil }
    ) -> HearingTestSession {
        var plan = HearingTest.Plan(maximumDBHL: [.right: [1000: 90]])
        plan.ears = [.right]
        plan.frequenciesHz = [1000]
        plan.catchTrialProbability = catchTrials
        return HearingTestSession(
            plan: plan, levels: [.right: levels], transducer: .tdh39, ceilingDBHL: 90, seed: seed, now: 0, judgeNoise: noise)
    }

    /// Steps the clock by 10 ms until `until` or the end; `listener` sees each tone (its level
    /// in dB HL from the dBFS asked, and its onset) and says when it answers (nil: it does not).
    @discardableResult
    static func run(
        _ session: HearingTestSession, until: Double = 600, startDelay: Double = 0.02,
        listener: (_ dBHL: Double, _ onset: Double) -> Double? = { _, _ in nil }
    ) -> (tones: [(time: Double, dBFS: Double)], end: Double) {
        var tones: [(Double, Double)] = []
        var now = 0.0
        var pressAt: Double?
        while now < until && !session.isOver {
            for action in session.tick(now: now, toneStartDelay: startDelay) {
                if case .play(let hz, let dBFS, _, _) = action {
                    tones.append((now, dBFS))
                    let dBHL = levels.dBHL(dBFS: dBFS, frequencyHz: hz)!
                    pressAt = listener(dBHL, now + startDelay)
                }
            }
            if let at = pressAt, now >= at {
                _ = session.answer(ear: nil, now: now)
                pressAt = nil
            }
            now += 0.01
        }
        return (tones, now)
    }

    @Test func tonesFollowTheirWaitsAndAnswersCountFromTheOnset() throws {
        let session = Self.session()
        // Hears 35 dB HL and up, 400 ms after the onset.
        let (tones, end) = Self.run(session) { dBHL, onset in dBHL >= 34.5 ? onset + 0.4 : nil }
        #expect(session.isOver && session.status(now: end).state == .finished)
        #expect(session.status(now: end + 60).elapsedSeconds <= end, "a finished test's time kept counting")
        let result = session.test.result
        #expect(result.frequencies.first?.thresholdDBHL == 35, "\(result.frequencies)")
        // The first tone after the settling second and its 1-3 s wait; each later one after the
        // previous one's sound (or answer) and a wait of 1-3 s.
        #expect(tones.first.map { (2.0...4.01).contains($0.time) } == true, "\(tones.map(\.time))")
        for (a, b) in zip(tones, tones.dropFirst()) { #expect(b.time - a.time >= 1.0, "tones \(a.time) and \(b.time)") }
        for entry in result.log where entry.responded {
            #expect(entry.responseTimeMs.map { (395...415).contains($0) } == true, "response time \(entry.responseTimeMs ?? -1) ms")
        }
        // 20 dB HL at 1 kHz through TDH-39 (7 dB) and 100 dB SPL at 0 dBFS: -73 dBFS.
        #expect(abs(tones[0].dBFS - (-73)) < 1e-9)
    }

    /// A session told each tone's start, stepped (10 ms, a 20 ms estimate) to its first tone:
    /// when that was asked for and when the estimated window closes.
    static func firstTone() throws -> (session: HearingTestSession, asked: Double, estimatedEnd: Double) {
        let session = Self.session()
        session.startsAreTold = true
        var now = 0.0
        while !session.tick(now: now, toneStartDelay: 0.02).contains(where: { if case .play = $0 { true } else { false } }) { now += 0.01 }
        guard case .presenting(_, let estimatedEnd, _) = session.phase else { throw TestFailure("no tone presented at \(now) s") }
        return (session, now, estimatedEnd)
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A loaded machine: the audio thread began the tone half a second after the whole window
    /// the estimate opened had closed. Told when it began, the session waits for it (no miss
    /// before the tone could be heard) and counts a press 400 ms after the real onset.
    @Test func theWindowOpensWhenTheToneReallyBegan() throws {
        let (session, asked, estimatedEnd) = try Self.firstTone()
        let real = estimatedEnd + 0.5
        var now = asked
        while now < real {
            now += 0.01
            _ = session.tick(now: now, toneStartDelay: 0.02)
        }
        #expect(now > estimatedEnd && session.test.result.log.isEmpty, "decided before the tone began")
        _ = session.toneStarted(at: real)
        now = real + 0.4
        _ = session.tick(now: now, toneStartDelay: 0.02)
        _ = session.answer(ear: nil, now: now)
        let first = try #require(session.test.result.log.first)
        #expect(first.responded && first.responseTimeMs.map { abs($0 - 400) <= 1 } == true, "\(first)")
        #expect(session.test.result.strayPresses == 0)
    }

    /// A press that arrives before the start was told (the audio process's message behind it)
    /// is held and judged against the real onset; presses before a real onset are false alarms.
    @Test func aPressBeforeTheStartIsToldIsJudgedByTheRealOnset() throws {
        for (pressAfterOnset, counts) in [(0.5, true), (-0.2, false)] {
            let (session, asked, _) = try Self.firstTone()
            let real = asked + 0.8
            _ = session.answer(ear: nil, now: real + pressAfterOnset)
            #expect(session.test.result.log.isEmpty)
            _ = session.toneStarted(at: real)
            let result = session.test.result
            if counts {
                #expect(result.log.first?.responseTimeMs.map { abs($0 - 500) <= 1 } == true, "\(result.log)")
            } else {
                #expect(result.log.isEmpty && result.strayPresses == 1, "\(result.log), \(result.strayPresses) stray")
            }
        }
    }

    /// A tone never told started (replaced or lost on the way) is not scored: 2 s past the
    /// estimated window it is drawn again; a press held for it is dropped. Three in a row stop
    /// the test: the audio process does not play its tones.
    @Test func aToneNeverToldStartedIsDrawnAgainNotScored() throws {
        let (session, _, estimatedEnd) = try Self.firstTone()
        _ = session.answer(ear: nil, now: estimatedEnd - 0.1)
        _ = session.tick(now: estimatedEnd + 1.9, toneStartDelay: 0.02)
        #expect(session.test.result.log.isEmpty && session.status(now: estimatedEnd + 1.9).state == .running)
        var now = estimatedEnd + HearingTestSession.startGraceSeconds + 0.01
        #expect(session.tick(now: now, toneStartDelay: 0.02) == [.holdSilence], "the late tone is not replaced by silence")
        #expect(session.test.result.log.isEmpty && session.test.result.strayPresses == 0, "\(session.test.result.log)")
        guard case .waiting = session.phase else {
            Issue.record("not drawn again: \(session.phase)")
            return
        }
        // Two more never begin: stopped, nothing scored.
        var plays = 1
        while !session.isOver && now < 60 {
            now += 0.01
            plays += session.tick(now: now, toneStartDelay: 0.02).filter { if case .play = $0 { true } else { false } }.count
        }
        #expect(session.isOver && plays == HearingTestSession.unstartedTonesToStop, "\(plays) tones")
        #expect(session.status(now: now).state == .stopped && session.problem?.contains("did not play the test's tones") == true)
        #expect(session.test.result.log.isEmpty)
    }

    /// Nothing of a presentation's onset carries over: a press held for a tone the room then
    /// interrupted is forgotten, and the next tone waits for its own start and counts its own press.
    @Test func aHeldPressDoesNotOutliveItsTone() throws {
        nonisolated(unsafe) var loud = false
        let session = Self.session { _, _ in
            HearingTestSession.NoiseReading(
                tooLoud: loud,
                status: HearingTestStatus.Noise(loudBandHz: loud ? 1000 : nil, levelDBSPL: 30, limitDBSPL: 41, testBandDBSPL: 30))
        }
        session.startsAreTold = true
        var now = 0.0
        func stepToTone() -> Double? {
            while now < 60 {
                now += 0.01
                if session.tick(now: now, toneStartDelay: 0.02).contains(where: { if case .play = $0 { true } else { false } }) {
                    return now
                }
            }
            return nil
        }
        let first = try #require(stepToTone())
        _ = session.answer(ear: nil, now: first + 0.3)  // held: no start told yet
        loud = true
        now = first + 0.35
        _ = session.tick(now: now, toneStartDelay: 0.02)
        #expect(session.status(now: now).state == .pausedForNoise)
        loud = false
        let second = try #require(stepToTone())
        #expect(session.test.result.log.isEmpty && session.test.result.strayPresses == 0)
        _ = session.toneStarted(at: second + 0.1)
        _ = session.answer(ear: nil, now: second + 0.5)
        let logged = try #require(session.test.result.log.first)
        #expect(logged.responded && logged.responseTimeMs.map { abs($0 - 400) <= 1 } == true, "\(logged)")
        #expect(session.test.result.strayPresses == 0)
    }

    @Test func aPressBeforeTheOnsetOrAfterTheWindowIsAFalseAlarm() {
        let session = Self.session()
        // Presses 10 ms before each onset: never in a window.
        Self.run(session, until: 60) { _, onset in onset - 0.01 }
        let result = session.test.result
        #expect(result.strayPresses > 0 && result.log.allSatisfy { !$0.responded }, "\(result.strayPresses) stray")
    }

    /// A listener who says yes to everything (a press every half second, tones or not) is
    /// flagged for false alarms by the daemon's session, in time.
    @Test func aListenerWhoSaysYesToEverythingIsFlagged() {
        let session = Self.session(catchTrials: 0.125)
        var now = 0.0
        while now < 600 && !session.isOver {
            _ = session.tick(now: now, toneStartDelay: 0.02)
            if Int((now * 100).rounded()) % 50 == 0 { _ = session.answer(ear: nil, now: now) }
            now += 0.01
        }
        let result = session.test.result
        #expect(session.isOver && result.flags.contains(.falseAlarms), "\(result.flags), \(result.strayPresses) stray presses")
    }

    @Test func aLoudRoomPausesAndTwoQuietSecondsResume() {
        nonisolated(unsafe) var loud = false
        let session = Self.session { _, level in
            HearingTestSession.NoiseReading(
                tooLoud: loud,
                status: HearingTestStatus.Noise(loudBandHz: loud ? 500 : nil, levelDBSPL: 50, limitDBSPL: 41, testBandDBSPL: 30))
        }
        _ = session.tick(now: 0, toneStartDelay: 0)
        loud = true
        _ = session.tick(now: 0.5, toneStartDelay: 0)
        #expect(session.status(now: 0.5).state == .pausedForNoise)
        #expect(session.status(now: 0.5).noise?.loudBandHz == 500)
        // Nothing plays while it is loud.
        for step in 1...300 {
            #expect(
                session.tick(now: 0.5 + Double(step) * 0.01, toneStartDelay: 0).allSatisfy { if case .play = $0 { false } else { true } })
        }
        loud = false
        _ = session.tick(now: 4.0, toneStartDelay: 0)
        _ = session.tick(now: 5.9, toneStartDelay: 0)
        #expect(session.status(now: 5.9).state == .pausedForNoise, "resumed before 2 s of quiet")
        _ = session.tick(now: 6.01, toneStartDelay: 0)
        #expect(session.status(now: 6.01).state == .running)
        // A press while paused is no false alarm.
        loud = true
        _ = session.tick(now: 6.1, toneStartDelay: 0)
        _ = session.answer(ear: nil, now: 6.2)
        #expect(session.test.result.strayPresses == 0)
    }

    @Test func stoppingEndsItIncompleteAndALongPauseRenewsTheHold() {
        let session = Self.session { _, _ in
            HearingTestSession.NoiseReading(
                tooLoud: true, status: HearingTestStatus.Noise(loudBandHz: 250, levelDBSPL: 60, limitDBSPL: 45, testBandDBSPL: 30))
        }
        #expect(session.startActions == [.holdSilence])
        // Paused for 45 s: the tone mode (silent) is renewed every 20 s, so the hearing aid stays off.
        var holds = 0
        var now = 0.0
        while now < 45 {
            holds += session.tick(now: now, toneStartDelay: 0).filter { $0 == .holdSilence }.count
            now += 0.01
        }
        #expect(holds == 2)
        #expect(session.stop(why: "stopped before the end", now: now) == [.end])
        #expect(session.status(now: now).state == .stopped && session.test.result.flags.contains(.incomplete))
        #expect(session.stop(why: "again", now: now + 1) == [])
        // Its length stays what it was when it ended (the screens showed it still counting).
        #expect(session.status(now: now + 600).elapsedSeconds == session.status(now: now).elapsedSeconds)
    }
}
