import Foundation
import RibbitPrescription
import RibbitSignals
import Testing

@testable import RibbitAudiometry

/// Masking on simulated listeners who hear a loud tone with the other ear too: through the head
/// 40 to 60 dB down (supra-aural and consumer headphones; the procedure assumes the least, 40),
/// masking noise in the other ear adding to its threshold (powers add) and crossing back to the
/// tested ear the same way, over seven audiograms and three psychometric slopes.
@Suite struct MaskingTests {
    static let frequencies = Set(HearingTest.Plan.clinicalOrder).sorted()
    static let runs = 30
    static let maximumDBHL = 90

    static func audiogram(_ right: [Double], _ left: [Double]) -> [Ear: [Int: Double]] {
        [
            .right: Dictionary(uniqueKeysWithValues: zip(frequencies, right)),
            .left: Dictionary(uniqueKeysWithValues: zip(frequencies, left)),
        ]
    }

    //                                            250 500 1k  2k  3k  4k  6k  8k
    static let audiograms: [(name: String, truth: [Ear: [Int: Double]], refer: Bool)] = [
        ("normal", audiogram([5, 5, 5, 10, 10, 10, 15, 15], [5, 10, 5, 5, 10, 15, 15, 10]), false),
        ("mild flat", audiogram([30, 30, 35, 35, 35, 40, 40, 40], [35, 30, 30, 35, 40, 35, 40, 45]), false),
        ("sloping presbycusis", audiogram([20, 25, 30, 45, 55, 60, 65, 70], [25, 25, 35, 45, 50, 60, 70, 70]), false),
        ("4 kHz notch", audiogram([10, 10, 10, 20, 40, 50, 30, 20], [10, 10, 15, 25, 45, 50, 25, 20]), false),
        ("asymmetric (40 dB)", audiogram([50, 55, 55, 60, 65, 70, 70, 70], [10, 15, 15, 20, 25, 30, 30, 30]), true),
        ("unilateral (right 90)", audiogram(Array(repeating: 90, count: 8), [5, 5, 10, 10, 10, 15, 15, 20]), true),
        ("severe", audiogram([60, 65, 70, 75, 80, 80, 85, 85], [65, 65, 70, 75, 75, 80, 85, 85]), false),
    ]

    static func plan() -> HearingTest.Plan {
        var plan = HearingTest.Plan(maximumDBHL: maximumDBHL)
        let noise = Dictionary(uniqueKeysWithValues: frequencies.map { ($0, 75) })
        plan.maximumMaskingDBEM = [.left: noise, .right: noise]
        plan.interauralAttenuationDB = Transducer.tdh39.interauralAttenuationDB
        return plan
    }

    struct Tally {
        var thresholds = 0
        var within = 0
        var errors: [Double] = []
        var masked = 0
        var crossHeardUnflagged: [String] = []
        var referred = 0
        var seconds = 0.0
        var presentations = 0
    }

    /// A run's listener: the audiogram moved off the 5 dB grid (each threshold by up to +-2.5 dB,
    /// so a run is not helped by the bracketing's steps), and the interaural attenuation drawn
    /// per frequency from 40...60 dB.
    static func listener(_ grid: [Ear: [Int: Double]], slope: Double, seed: UInt64, offGrid: Bool = true) -> (
        SimulatedListener, [Int: Double]
    ) {
        var random = SeededRandom(seed: seed &* 104_729 &+ 17)
        let attenuation = Dictionary(uniqueKeysWithValues: frequencies.map { ($0, Double.random(in: 40...60, using: &random)) })
        var truth = grid
        for ear in [Ear.right, .left] {
            for hz in frequencies where offGrid { truth[ear]![hz]! += Double.random(in: -2.5...2.5, using: &random) }
        }
        return (SimulatedListener(thresholdsDBHL: truth, slopePerDB: slope, random: random), attenuation)
    }

    static func tally(_ grid: [Ear: [Int: Double]], slope: Double, offGrid: Bool = true) -> Tally {
        var tally = Tally()
        let plan = plan()
        for seed in 1...UInt64(runs) {
            var (listener, attenuation) = listener(grid, slope: slope, seed: seed, offGrid: offGrid)
            let truth = listener.thresholdsDBHL
            // One attenuation per frequency: the listener runs one presentation at a time.
            var test = HearingTest(plan: plan)
            var generator = SeededRandom(seed: seed)
            while let presentation = test.next(using: &generator) {
                listener.interauralAttenuationDB = attenuation[presentation.frequencyHz]
                listener.take(presentation, in: &test)
            }
            let result = test.result
            let findings = HearingTestFindings(frequencies: result.frequencies, transducer: .tdh39)
            tally.seconds += durationSeconds(result, plan: plan)
            tally.presentations += result.log.count
            if findings.seeADoctor { tally.referred += 1 }
            for ear in [Ear.right, .left] {
                let other: Ear = ear == .right ? .left : .right
                for measured in result.frequencies.audiogram(ear: ear) {
                    let hz = measured.frequencyHz
                    let true_ = truth[ear]![hz]!
                    tally.thresholds += 1
                    if measured.isMasked { tally.masked += 1 }
                    switch (measured.status, measured.thresholdDBHL) {
                    case (.threshold, let value?):
                        if abs(Double(value) - true_) <= 5 { tally.within += 1 }
                        tally.errors.append(Double(value) - true_)
                        // Too good by more than 5 dB where the other ear could hear it: flagged, or a failure.
                        let crossable = true_ > truth[other]![hz]! + attenuation[hz]! - 5
                        if crossable, Double(value) < true_ - 5,
                            !findings.crossHeard.contains(where: { $0.ear == ear && $0.frequencyHz == hz })
                        {
                            tally.crossHeardUnflagged.append("seed \(seed) \(ear.rawValue) \(hz) Hz: \(value) for \(true_)")
                        }
                    case (.noResponse, _):
                        // Not heard at the maximum: right when the truth is within a step of it or above.
                        if true_ >= Double(measured.maximumTestedDBHL) - 5 { tally.within += 1 }
                    default: break
                    }
                }
            }
        }
        return tally
    }

    /// The table, twice. The audiograms as written (on the 5 dB grid): within 5 dB of
    /// the truth (masked where needed) in 90 % of thresholds at every slope. Moved off the grid
    /// by up to 2.5 dB: 90 % at a slope of 2 per dB and 88 % at 1 (0.5 printed): the bracketing's
    /// 5 dB steps put the threshold at the first level heard, +2.5 dB on average for the masked
    /// and the unmasked ears alike, so the masked rows are held to the unmasked ones' bound. No
    /// threshold the other ear heard is left unflagged, and the asymmetric and one-sided losses
    /// are sent to a doctor every time.
    @Test func maskedThresholdsAreTheTestEarsAndCrossHearingIsNeverLeftUnflagged() {
        for offGrid in [false, true] { table(offGrid: offGrid) }
    }

    func table(offGrid: Bool) {
        print("Masking, simulated listeners: \(Self.runs) runs per row, both ears, 8 frequencies; interaural attenuation")
        print("40-60 dB (drawn per frequency), false alarms 2 %, lapses 2 %, masker at most 75 dB EM, tones at most 90 dB HL;")
        print(offGrid ? "thresholds moved off the 5 dB grid by up to +-2.5 dB" : "thresholds on the 5 dB grid, as the audiograms give them")
        print("audiogram               slope  within 5 dB  mean error  masked/run  cross-heard unflagged  referred  minutes  tones")
        for (name, truth, refer) in Self.audiograms {
            for slope in [0.5, 1, 2] {
                let t = Self.tally(truth, slope: slope, offGrid: offGrid)
                let within = Double(t.within) / Double(t.thresholds)
                print(
                    name.padding(toLength: 24, withPad: " ", startingAt: 0)
                        + String(
                            format: "%4.1f   %6.1f %%     %+5.1f       %5.1f       %3d                    %3d/%d    %5.1f    %5.1f", slope,
                            100 * within, t.errors.reduce(0, +) / Double(max(t.errors.count, 1)), Double(t.masked) / Double(Self.runs),
                            t.crossHeardUnflagged.count, t.referred, Self.runs,
                            t.seconds / Double(Self.runs) / 60, Double(t.presentations) / Double(Self.runs)))
                if !offGrid || slope >= 1 { #expect(within >= (offGrid && slope < 2 ? 0.88 : 0.9), "\(name), slope \(slope): \(within)") }
                #expect(t.crossHeardUnflagged.isEmpty, "\(name), slope \(slope): \(t.crossHeardUnflagged.prefix(5))")
                #expect(t.referred == (refer ? Self.runs : 0) || (!refer && t.referred <= Self.runs / 10), "\(name) referred \(t.referred)")
            }
        }
    }

    /// Without masking (the plan has no noise levels) the dead ear reads as a loss 40-60 dB above
    /// the good ear's, and is flagged; with it, it reads "no response", masked.
    @Test func aDeadEarReadsAsNoResponseOnlyWithMasking() {
        let truth = Self.audiograms.first { $0.name.hasPrefix("unilateral") }!.truth
        for masking in [false, true] {
            var plan = Self.plan()
            if !masking { plan.maximumMaskingDBEM = [:] }
            var (listener, attenuation) = Self.listener(truth, slope: 1, seed: 4)
            var test = HearingTest(plan: plan)
            var generator = SeededRandom(seed: 4)
            while let presentation = test.next(using: &generator) {
                listener.interauralAttenuationDB = attenuation[presentation.frequencyHz]
                listener.take(presentation, in: &test)
            }
            let right = test.result.frequencies.audiogram(ear: .right)
            if masking {
                #expect(right.allSatisfy { $0.isMasked && ($0.status == .noResponse || ($0.thresholdDBHL ?? 0) >= 85) }, "\(right)")
                #expect(test.result.log.contains { $0.maskingDBEM != nil && $0.toneEar == nil }, "silent catch trials carry the noise")
            } else {
                #expect(right.allSatisfy { !$0.isMasked && ($0.thresholdDBHL ?? 90) < 80 }, "\(right)")
            }
        }
    }

    /// The noise follows the tone: 10 dB over the other ear's threshold and over the tone less
    /// 40 dB, 10 dB more each plateau round; a masked threshold needs the plateau (held within 5
    /// dB with 10 dB more noise), and a step whose noise would exceed the maximum is left
    /// unmasked, so the finding stays.
    @Test func theNoiseFollowsTheToneAndThePlateauDecides() throws {
        var plan = Self.plan()
        plan.catchTrialProbability = 0
        let noise = Dictionary(uniqueKeysWithValues: Self.frequencies.map { ($0, 75) })
        plan.maximumMaskingDBEM = [.left: noise, .right: noise]
        // A listener whose right ear is the good left ear 40 dB up until masked, truly 70 dB HL.
        let truth = Self.audiogram(Array(repeating: 70, count: 8), Array(repeating: 10, count: 8))
        var listener = SimulatedListener(
            thresholdsDBHL: truth, slopePerDB: 4, falseAlarmRate: 0, lapseRate: 0, random: SeededRandom(seed: 1))
        listener.interauralAttenuationDB = 40
        listener.pressesDuringWaits = false
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 1)
        var rounds: [Int: Set<Int>] = [:]
        while let presentation = test.next(using: &generator) {
            if let noise = presentation.maskingDBEM {
                // Exactly the other ear's measured threshold or the tone less 40, + 10, + 10 a round.
                let other = try #require(test.result.frequencies.kept(ear: .left, frequencyHz: presentation.frequencyHz)?.thresholdDBHL)
                let offset = noise - (max(other, presentation.levelDBHL - 40) + 10)
                #expect([0, 10, 20].contains(offset) && noise <= 75, "\(presentation), left \(other)")
                rounds[presentation.frequencyHz, default: []].insert(offset)
            }
            listener.take(presentation, in: &test)
        }
        let right = test.result.frequencies.audiogram(ear: .right)
        #expect(right.allSatisfy { $0.isMasked && abs(($0.thresholdDBHL ?? 0) - 70) <= 5 }, "\(right)")
        // Every masked threshold took the plateau: two rounds of noise at least.
        #expect(right.allSatisfy { (rounds[$0.frequencyHz]?.count ?? 0) >= 2 }, "\(rounds)")
        #expect(HearingTestFindings(frequencies: test.result.frequencies, transducer: .tdh39).crossHeard.isEmpty)

        // With at most 30 dB EM of noise the 70 dB HL ear cannot be masked (it needs 40): flagged.
        let little = Dictionary(uniqueKeysWithValues: Self.frequencies.map { ($0, 30) })
        plan.maximumMaskingDBEM = [.left: little, .right: little]
        test = HearingTest(plan: plan)
        generator = SeededRandom(seed: 1)
        while let presentation = test.next(using: &generator) { listener.take(presentation, in: &test) }
        #expect(test.result.frequencies.allSatisfy { !$0.isMasked })
        let findings = HearingTestFindings(frequencies: test.result.frequencies, transducer: .tdh39)
        #expect(findings.crossHeard.filter { $0.ear == .right }.count == Self.frequencies.count, "\(findings.lines)")
    }

    /// A masked "no response" after a threshold with less noise is not taken: more noise that
    /// silences an ear the test ear heard with less may have crossed to it (overmasking, which
    /// bone conduction would tell); the unmasked threshold stays, flagged. A listener who hears
    /// the right ear at 70 with the first noise and at nothing with 10 dB more.
    @Test func aMaskedNoResponseAfterAThresholdIsNotTaken() throws {
        var plan = Self.plan()
        plan.catchTrialProbability = 0
        plan.frequenciesHz = [1000]
        var test = HearingTest(plan: plan)
        var generator = SeededRandom(seed: 2)
        while let presentation = test.next(using: &generator) {
            var heard: Bool
            switch (presentation.testEar, presentation.maskingDBEM) {
            case (.left, _): heard = presentation.levelDBHL >= 10
            case (.right, nil): heard = presentation.levelDBHL >= 50  // the left ear, 40 dB down
            case (.right, let noise?):
                let offset = noise - (max(10, presentation.levelDBHL - 40) + 10)
                heard = offset == 0 && presentation.levelDBHL >= 70
            }
            test.record(heard ? .responded(responseTimeMs: 400) : .missed)
        }
        let right = test.result.frequencies.filter { $0.ear == .right }
        #expect(right.allSatisfy { !$0.isMasked }, "\(right)")
        #expect(test.result.log.contains { $0.maskingDBEM != nil }, "masking was tried")
        let findings = HearingTestFindings(frequencies: test.result.frequencies, transducer: .tdh39)
        #expect(findings.crossHeard.contains { $0.ear == .right && $0.frequencyHz == 1000 }, "\(findings.lines)")
    }

    /// The most noise the plan may ask, converted as the daemon converts it, keeps the noise's
    /// peak (`peakOverSine` over a sine of its power) under the highest level the player plays,
    /// and its power no more than a tone at the ceiling's, for loud and quiet headphones, every
    /// table and frequency, and a low output ceiling; and the dB EM go to dBFS through the RETSPL
    /// and the narrow-band correction.
    @Test func theMostNoiseAskedStaysUnderTheLimits() {
        // At least NarrowBandNoise.peakOverSineDB (10.054: a crest of 4.5; MaskerTests hold it to this).
        let peakOverSine = 10.06
        for transducer in [Transducer.tdh39, .hda200, .er3a, .consumer] {
            for (atZero, highest) in [(110.0, -1.0), (95, -1), (100, -21)] {
                let levels = ToneLevels(
                    table: .standard(transducer), calibration: ToneCalibration(dBSPLAtZeroDBFS: atZero, responseDB: [4000: 3]),
                    highestPlayedDBFS: highest)
                for hz in HearingTest.Plan.clinicalOrder {
                    guard let most = levels.maximumMaskingDBEM(frequencyHz: hz, peakOverSineDB: peakOverSine),
                        let dBFS = levels.maskingDBFS(dBEM: Double(most), frequencyHz: hz)
                    else { continue }
                    #expect(dBFS + peakOverSine <= highest + 1e-9, "\(transducer) \(hz) Hz: \(most) dB EM peaks at \(dBFS + peakOverSine)")
                    #expect(Double(most) + ToneLevels.narrowBandCorrectionDB(frequencyHz: hz) <= ToneLevels.selfTestCeilingDBHL)
                    let retspl = RETSPLTable.standard(transducer).dBSPLAtZeroHL[hz]!
                    let expected = 40 + retspl + ToneLevels.narrowBandCorrectionDB(frequencyHz: hz) - atZero - (hz == 4000 ? 3 : 0)
                    #expect(abs(levels.maskingDBFS(dBEM: 40, frequencyHz: hz)! - expected) < 1e-9)
                }
            }
        }
    }
}
