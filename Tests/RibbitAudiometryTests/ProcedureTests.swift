import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals
import Testing

/// Simulated listeners through the real state machine, many seeded runs each.
@Suite struct ProcedureTests {
    static let runs = 200
    let plan = HearingTest.Plan(maximumDBHL: 90)

    func listener(seed: UInt64, thresholds: ClosedRange<Double> = -5...75) -> SimulatedListener {
        var random = SeededRandom(seed: seed &* 7919 &+ 1)
        let truth = SimulatedListener.randomThresholds(thresholds, random: &random)
        return SimulatedListener(thresholdsDBHL: truth, random: random)
    }

    /// Sloping audiograms like most adults who would take the test: the accuracy and the length
    /// the closing note quotes.
    @Test func typicalListenersGetThresholdsWithin5dBOfTheTruth() {
        let (within, minutes) = accuracy(title: "sloping audiograms (0-35 dB HL to 1 kHz, 0-15 dB/octave above, +-5 dB)") {
            SimulatedListener.slopingThresholds(random: &$0)
        }
        #expect(within >= 0.9)
        // The issue asks for about 10 minutes; full response windows make it 12-13 (see the report).
        #expect(minutes < 15)
    }

    /// Thresholds drawn independently per frequency: no help from the previous frequency's start.
    @Test func listenersWithAnyAudiogramGetThresholdsWithin5dBOfTheTruth() {
        let (within, _) = accuracy(title: "any audiogram (each threshold uniform in -5...75 dB HL)") {
            SimulatedListener.randomThresholds(-5...75, random: &$0)
        }
        #expect(within >= 0.9)
    }

    /// Half as steep (10 % to 90 % across 8.8 dB): a listener less sure of faint tones. Printed
    /// for the report; the bound is what it measured, rounded down.
    @Test func shallowerPsychometricFunctionsStillMostlyWithin5dB() {
        let (within, _) = accuracy(title: "sloping audiograms, slope 0.5/dB", slopePerDB: 0.5) {
            SimulatedListener.slopingThresholds(random: &$0)
        }
        #expect(within >= 0.75)
    }

    /// Prints the accuracy table; returns the fraction of frequencies within 5 dB and the mean
    /// simulated length in minutes.
    func accuracy(title: String, slopePerDB: Double = 1, thresholds: (inout SeededRandom) -> [Ear: [Int: Double]]) -> (Double, Double) {
        var errors: [String: [Int]] = [:]
        var tones: [String: [Int]] = [:]
        var missing: [String: Int] = [:]
        var presentations: [Int] = []
        var seconds: [Double] = []
        var earlySeconds: [Double] = []
        var flagged: [ReliabilityFlag: Int] = [:]
        for seed in 1...UInt64(Self.runs) {
            var random = SeededRandom(seed: seed &* 7919 &+ 1)
            let truth = thresholds(&random)
            var simulated = SimulatedListener(thresholdsDBHL: truth, slopePerDB: slopePerDB, random: random)
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.flags.allSatisfy { $0 != .incomplete && $0 != .noResponseAnywhere })
            #expect(result.log.allSatisfy { (HearingTest.Plan.floorDBHL...90).contains($0.levelDBHL) })
            for flag in result.flags { flagged[flag, default: 0] += 1 }
            presentations.append(result.log.count)
            seconds.append(durationSeconds(result, plan: plan))
            earlySeconds.append(durationAnsweringEarlySeconds(result, plan: plan))
            for measured in result.frequencies {
                let key = measured.isRetest ? "1000 retest" : "\(measured.frequencyHz)"
                tones[key, default: []].append(measured.presentations)
                if let threshold = measured.thresholdDBHL {
                    errors[key, default: []].append(threshold - Int(truth[measured.ear]![measured.frequencyHz]!.rounded()))
                } else {
                    missing[key, default: 0] += 1
                }
            }
        }
        print("Simulated listeners, \(title): \(Self.runs) runs x 2 ears,")
        print("logistic slope \(slopePerDB)/dB, false alarms 2 %, lapses 2 %; error = measured - true (rounded to 1 dB)")
        print("frequency     within 5 dB   mean error   SD    no number   tones")
        var within = 0
        var total = 0
        for key in ["250", "500", "1000", "2000", "3000", "4000", "6000", "8000", "1000 retest"] {
            let e = errors[key] ?? []
            let n = e.count + (missing[key] ?? 0)
            let inside = e.filter { abs($0) <= 5 }.count
            within += inside
            total += n
            let mean = Double(e.reduce(0, +)) / Double(max(e.count, 1))
            let sd = (e.map { (Double($0) - mean) * (Double($0) - mean) }.reduce(0, +) / Double(max(e.count - 1, 1))).squareRoot()
            let meanTones = Double(tones[key]!.reduce(0, +)) / Double(tones[key]!.count)
            print(
                key.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6.1f %%      %+5.2f      %4.2f   %-9d   %.1f", 100 * Double(inside) / Double(n), mean, sd,
                        missing[key] ?? 0,
                        meanTones))
        }
        let meanPresentations = Double(presentations.reduce(0, +)) / Double(presentations.count)
        let meanSeconds = seconds.reduce(0, +) / Double(seconds.count)
        print(String(format: "all frequencies: %.1f %% within 5 dB", 100 * Double(within) / Double(total)))
        print(
            String(
                format: "both ears: %.1f presentations (catch trials included), %.1f min simulated (%.1f to %.1f min)", meanPresentations,
                meanSeconds / 60, seconds.min()! / 60, seconds.max()! / 60))
        print(
            String(
                format: "moving on at each answer instead of the window's end: %.1f min", earlySeconds.reduce(0, +) / Double(Self.runs) / 60
            ))
        let raised = flagged.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", ")
        print("flags raised on these honest listeners: \(flagged.isEmpty ? "none" : raised) of \(Self.runs) runs")
        return (Double(within) / Double(total), meanSeconds / 60)
    }

    @Test func aListenerWhoSaysYesToEverythingIsFlagged() {
        for seed in 1...UInt64(Self.runs) {
            var simulated = listener(seed: seed)
            simulated.falseAlarmRate = 1
            simulated.lapseRate = 0
            simulated.pressesDuringWaits = false
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.flags.contains(.falseAlarms) && result.isUnreliable, "seed \(seed): \(result.flags)")
            #expect(result.catchTrialFalseAlarmRate == 1)
        }
    }

    /// Flagged "no response anywhere" (check the headphones), every frequency "no response" at
    /// its maximum, never a number; not called unreliable: a profound loss looks the same.
    @Test func aListenerWhoNeverAnswersGetsNoResponseEverywhereAndTheCheckFlag() {
        for seed in 1...UInt64(Self.runs) {
            var simulated = listener(seed: seed)
            simulated.falseAlarmRate = 0
            simulated.lapseRate = 1
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.frequencies.count == 18)
            #expect(result.frequencies.allSatisfy { $0.status == .noResponse && $0.thresholdDBHL == nil && $0.maximumTestedDBHL == 90 })
            #expect(result.flags == [.noResponseAnywhere], "seed \(seed): \(result.flags)")
            #expect(result.log.allSatisfy { $0.levelDBHL <= 90 })
        }
    }

    @Test func aListenerWith30PercentFalseAlarmsIsFlagged() {
        var rates: [Double] = []
        for seed in 1...UInt64(Self.runs) {
            var simulated = listener(seed: seed)
            simulated.falseAlarmRate = 0.3
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.flags.contains(.falseAlarms), "seed \(seed): rate \(result.falseAlarmRate ?? -1)")
            rates.append(result.falseAlarmRate!)
        }
        print(String(format: "30 %% false-alarm listener: measured false-alarm rate %.3f to %.3f", rates.min()!, rates.max()!))
    }

    @Test func aListenerWhose1kHzRetestDiffersBy20dBIsFlagged() {
        var differences: [Int] = []
        for seed in 1...UInt64(Self.runs) {
            var simulated = listener(seed: seed, thresholds: 0...60)
            simulated.retestShiftDB = 20
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.flags.contains(.retestDifference) && result.isUnreliable, "seed \(seed): \(result.retestDifferences)")
            differences += result.retestDifferences.map(\.differenceDB)
        }
        let caught = differences.filter { abs($0) > HearingTestResult.maximumRetestDifferenceDB }.count
        print(
            "retest shifted by 20 dB: measured differences \(differences.min()!) to \(differences.max()!) dB,"
                + " over \(HearingTestResult.maximumRetestDifferenceDB) dB in \(caught) of \(differences.count) ears; every run flagged")
    }

    /// A frequency the headphones cannot play loud enough ends at its own maximum with "no response".
    @Test func noResponseIsAtTheFrequencysOwnMaximum() {
        var maximum = HearingTest.Plan(maximumDBHL: 90).maximumDBHL
        maximum[.right]![8000] = 70
        maximum[.left]![250] = 55
        let plan = HearingTest.Plan(maximumDBHL: maximum, betterEar: .left)
        #expect(plan.ears == [.left, .right])
        var simulated = listener(seed: 3, thresholds: 10...30)
        simulated.thresholdsDBHL[.right]![8000] = 85
        simulated.thresholdsDBHL[.left]![250] = 100
        let result = runTest(listener: &simulated, plan: plan, seed: 3)
        let high = result.threshold(ear: .right, frequencyHz: 8000)!
        #expect(high.status == .noResponse && high.thresholdDBHL == nil && high.maximumTestedDBHL == 70)
        let low = result.threshold(ear: .left, frequencyHz: 250)!
        #expect(low.status == .noResponse && low.maximumTestedDBHL == 55)
        #expect(!result.log.contains { $0.testEar == .right && $0.frequencyHz == 8000 && $0.levelDBHL > 70 })
        #expect(result.log.first?.testEar == .left)
        // The audiogram order of each ear.
        let order = result.frequencies.filter { $0.ear == .right }.map(\.frequencyHz)
        #expect(order == HearingTest.Plan.clinicalOrder)
    }

    @Test func presentationsCarryTheWaitThePulsesAndAbout1In8CatchTrials() {
        var catches = 0
        var total = 0
        for seed in 1...UInt64(50) {
            var simulated = listener(seed: seed)
            let result = runTest(listener: &simulated, plan: plan, seed: seed)
            #expect(result.log.allSatisfy { (1000...3000).contains($0.waitMs) })
            #expect(result.log.allSatisfy { ($0.catchTrial == .silent) == ($0.toneEar == nil) })
            catches += result.catchTrials
            total += result.log.count
        }
        let rate = Double(catches) / Double(total)
        #expect(abs(rate - 1.0 / 8) < 0.02, "catch trials \(rate)")
        let pattern = PulsePattern()
        #expect(pattern.pulses == 3 && pattern.pulseMs == 200 && pattern.rampMs == 25 && pattern.totalMs == 1000)
    }

    /// Answers that name the ear catch a listener who hears the other ear's catch tone and
    /// names the wrong ear.
    @Test func otherEarCatchTrialsAreScoredByTheNamedEar() {
        var plan = HearingTest.Plan(maximumDBHL: 90)
        plan.answersNameTheEar = true
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 11)
        var otherEar = 0
        while let presentation = test.next(using: &generator) {
            if presentation.catchTrial == .otherEar {
                otherEar += 1
                // Alternate: right ear named (correct), then the test ear (a false alarm).
                test.record(.responded(responseTimeMs: 400, ear: otherEar % 2 == 1 ? presentation.toneEar : presentation.testEar))
            } else {
                test.record(presentation.levelDBHL >= 30 ? .responded(responseTimeMs: 400, ear: presentation.testEar) : .missed)
            }
        }
        let result = test.result
        let scored = result.log.filter { $0.catchTrial == .otherEar }
        #expect(otherEar > 0 && scored.count == otherEar)
        #expect(scored.filter(\.falseAlarm).count == otherEar / 2)
        #expect(result.frequencies.allSatisfy { $0.thresholdDBHL == 30 })
    }

    /// Naming the other ear on a real trial is not hearing the tested one (cross-hearing): a
    /// listener who always names the wrong ear gets no threshold anywhere. An other-ear catch
    /// trial never goes above the other ear's maximum.
    @Test func namingTheOtherEarIsNotHearingTheTestedOne() {
        var plan = HearingTest.Plan(maximumDBHL: [
            .right: [1000: 90, 2000: 90, 3000: 90, 4000: 90, 6000: 90, 8000: 90, 500: 90, 250: 90],
            .left: [1000: 40, 2000: 40, 3000: 40, 4000: 40, 6000: 40, 8000: 40, 500: 40, 250: 40],
        ])
        plan.answersNameTheEar = true
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 5)
        while let presentation = test.next(using: &generator) {
            if presentation.catchTrial == .otherEar {
                #expect(presentation.levelDBHL <= 40 || presentation.toneEar == .right, "\(presentation)")
            }
            let wrong: Ear = presentation.testEar == .right ? .left : .right
            test.record(presentation.catchTrial == nil ? .responded(responseTimeMs: 400, ear: wrong) : .missed)
        }
        #expect(test.result.frequencies.allSatisfy { $0.thresholdDBHL == nil }, "\(test.result.frequencies)")
    }

    @Test func aSeedReplaysTheTestAndTheResultIsJSON() throws {
        var first = listener(seed: 42)
        var second = listener(seed: 42)
        let a = runTest(listener: &first, plan: plan, seed: 42)
        let b = runTest(listener: &second, plan: plan, seed: 42)
        #expect(a == b)
        var flaggedListener = listener(seed: 42)
        flaggedListener.falseAlarmRate = 0.3
        let flagged = runTest(listener: &flaggedListener, plan: plan, seed: 42)
        let data = try JSONEncoder().encode(flagged)
        let json = try #require(String(data: data, encoding: .utf8))
        #expect(json.contains("\"flags\":[\"false-alarms\""))
        #expect(json.contains("\"status\":\"threshold\"") && json.contains("\"ear\":\"right\""))
        #expect(try JSONDecoder().decode(HearingTestResult.self, from: data) == flagged)
    }

    /// Runs a test with a scripted listener and no catch trials; returns the result.
    func scripted(_ answers: (Presentation, [LoggedPresentation]) -> Bool) -> HearingTestResult {
        var plan = HearingTest.Plan(maximumDBHL: 90)
        plan.catchTrialProbability = 0
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 5)
        while let presentation = test.next(using: &generator) {
            test.record(answers(presentation, test.result.log) ? .responded(responseTimeMs: 500) : .missed)
        }
        return test.result
    }

    /// The staircase step by step for a listener who hears exactly 35 dB HL and above.
    @Test func theStaircaseFollowsHughsonWestlake() {
        let result = scripted { presentation, _ in presentation.levelDBHL >= 35 }
        let first = result.log.prefix { $0.frequencyHz == 1000 && !$0.isRetest }.map(\.levelDBHL)
        // Up 10 from 20 to the first answer, down 10, up 5: 35 answered on two ascents.
        #expect(first == [20, 30, 40, 30, 35, 25, 30, 35])
        #expect(result.frequencies.allSatisfy { $0.status == .threshold && $0.thresholdDBHL == 35 })
        // The next frequency starts at 1 kHz's threshold: answered, so straight down.
        #expect(result.log.first { $0.frequencyHz == 2000 }?.levelDBHL == 35)
        #expect(result.retestDifferences.map(\.differenceDB) == [0, 0] && result.flags.isEmpty)
    }

    /// ASHA (2005): a 1 kHz retest within 5 dB agrees and the better threshold is the audiogram's;
    /// 10 dB apart is flagged (and the better still kept).
    @Test func theBetterOfTheTwo1kHzMeasurementsIsKeptAndMoreThan5dBApartIsFlagged() {
        for (retestHeardFrom, kept, flagged) in [(40, 35, false), (30, 30, false), (25, 25, true), (45, 35, true)] {
            let result = scripted { presentation, _ in presentation.levelDBHL >= (presentation.isRetest ? retestHeardFrom : 35) }
            for ear in [Ear.left, .right] {
                let pair = result.frequencies.retestPair(ear: ear)
                #expect(pair?.first.thresholdDBHL == 35 && pair?.retest.thresholdDBHL == retestHeardFrom)
                #expect(result.threshold(ear: ear, frequencyHz: 1000)?.thresholdDBHL == kept)
                #expect(result.frequencies.audiogram(ear: ear).map(\.frequencyHz) == Set(result.frequencies.map(\.frequencyHz)).sorted())
            }
            #expect(result.flags.contains(.retestDifference) == flagged, "retest \(retestHeardFrom): \(result.flags)")
        }
    }

    /// The right ear's octaves, no catch trials, half-octaves added where the rule asks.
    static var rightEarWithHalfOctaves: HearingTest.Plan {
        var plan = HearingTest.Plan(maximumDBHL: [.right: [250: 90, 500: 90, 750: 90, 1000: 90, 1500: 90, 2000: 90, 4000: 90]])
        plan.ears = [.right]
        plan.frequenciesHz = [1000, 2000, 4000, 1000, 500, 250]
        plan.catchTrialProbability = 0
        plan.addsInterOctaves = true
        return plan
    }

    /// ASHA (2005): 1500 Hz is tested when 1 and 2 kHz are 20 dB or more apart, 750 Hz when 500
    /// and 1000 Hz are; not otherwise, and never twice.
    @Test func halfOctavesAreAddedWhereNeighbouringOctavesDiffer20dB() {
        for (thresholds, added) in [
            ([250: 10, 500: 15, 1000: 20, 2000: 45, 4000: 60, 1500: 30], [1500]),
            ([250: 10, 500: 15, 1000: 40, 2000: 45, 4000: 60, 750: 25], [750]),
            ([250: 10, 500: 15, 1000: 30, 2000: 45, 4000: 60], []),
        ] {
            let plan = Self.rightEarWithHalfOctaves
            var test = HearingTest(plan: plan)
            var generator = SeededRandom(seed: 3)
            while let presentation = test.next(using: &generator) {
                test.record(presentation.levelDBHL >= thresholds[presentation.frequencyHz]! ? .responded(responseTimeMs: 400) : .missed)
            }
            let tested = test.result.frequencies.filter { !$0.isRetest }.map(\.frequencyHz)
            #expect(Set(tested).subtracting(plan.frequenciesHz).sorted() == added, "\(thresholds): tested \(tested)")
            #expect(Set(tested).count == tested.count)
            for hz in added { #expect(test.result.threshold(ear: .right, frequencyHz: hz)?.thresholdDBHL == thresholds[hz]) }
        }
        // The audiogram's 1 kHz decides, the better of the first and the retest: first 30 against
        // 2 kHz at 45 is 15 dB apart, a retest at 25 makes it 20 (1500 added after the retest) and
        // 500 Hz at 10 only 15 (no 750); a worse retest (35) leaves 30: 750 added, 1500 not.
        for (retest, added) in [(25, [1500]), (35, [750])] as [(Int, [Int])] {
            let first = 30
            let thresholds = [250: 10, 500: 10, 750: 20, 2000: 45, 1500: 40, 4000: 60]
            let plan = Self.rightEarWithHalfOctaves
            var test = HearingTest(plan: plan)
            var generator = SeededRandom(seed: 4)
            while let presentation = test.next(using: &generator) {
                let threshold =
                    presentation.frequencyHz == 1000 ? (presentation.isRetest ? retest : first) : thresholds[presentation.frequencyHz]!
                test.record(presentation.levelDBHL >= threshold ? .responded(responseTimeMs: 400) : .missed)
            }
            let tested = Set(test.result.frequencies.map(\.frequencyHz)).subtracting(plan.frequenciesHz).sorted()
            #expect(tested == added, "1 kHz \(first)/\(retest): added \(tested)")
        }
    }

    /// Answers at the floor count as ascending (nothing is below it): -10 dB HL, not a lower guess.
    @Test func aListenerWhoHearsEverythingEndsAtTheFloor() {
        let result = scripted { _, _ in true }
        #expect(result.log.prefix(5).map(\.levelDBHL) == [20, 10, 0, -10, -10])
        #expect(result.frequencies.allSatisfy { $0.thresholdDBHL == HearingTest.Plan.floorDBHL })
    }

    /// Answering each level only the first time it plays never meets 2 of 3: no number.
    @Test func aListenerWhoNeverRepeatsAnAnswerGetsNoNumber() {
        let result = scripted { presentation, log in
            !log.contains {
                $0.testEar == presentation.testEar && $0.frequencyHz == presentation.frequencyHz && $0.isRetest == presentation.isRetest
                    && $0.levelDBHL == presentation.levelDBHL
            }
        }
        #expect(result.frequencies.allSatisfy { $0.thresholdDBHL == nil && $0.status != .threshold })
        #expect(
            result.flags.contains(.undetermined)
                && result.frequencies.allSatisfy { $0.presentations <= HearingTest.Plan.maximumPresentations })
    }

    /// A withdrawn presentation (the room got loud) leaves no trace: same step, same level.
    @Test func aWithdrawnPresentationIsNotLogged() {
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 2)
        let first = test.next(using: &generator)!
        test.withdraw()
        let again = test.next(using: &generator)!
        #expect(again.levelDBHL == first.levelDBHL && again.frequencyHz == first.frequencyHz && test.result.log.isEmpty)
        test.withdraw()
        test.record(.missed)
        #expect(test.result.log.isEmpty, "nothing pending: nothing recorded")
    }

    @Test func aStoppedTestSaysItIsIncomplete() {
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 1)
        _ = test.next(using: &generator)
        let again = test.next(using: &generator)
        test.record(.missed)
        #expect(again != nil && test.result.log.count == 1)
        #expect(test.result.flags.contains(.incomplete) && test.progress.done == 0 && test.progress.total == 18)
    }
}
