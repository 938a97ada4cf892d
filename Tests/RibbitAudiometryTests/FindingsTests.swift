import RibbitPrescription
import RibbitSignals
import Testing

@testable import RibbitAudiometry

/// Referral and cross-hearing findings on simulated listeners who hear a loud tone with the other
/// ear too, 40 dB down (consumer or supra-aural headphones), as a real head does.
@Suite struct FindingsTests {
    static let frequencies = Set(HearingTest.Plan.clinicalOrder).sorted()

    static func run(_ thresholds: [Ear: [Int: Double]], seed: UInt64, transducer: Transducer = .consumer) -> (
        HearingTestResult, HearingTestFindings
    ) {
        var listener = SimulatedListener(thresholdsDBHL: thresholds, random: SeededRandom(seed: seed))
        listener.interauralAttenuationDB = Double(transducer.interauralAttenuationDB)
        let result = runTest(listener: &listener, plan: HearingTest.Plan(maximumDBHL: 90), seed: seed)
        return (result, HearingTestFindings(frequencies: result.frequencies, transducer: transducer))
    }

    static func audiogram(_ right: [Double], _ left: [Double]) -> [Ear: [Int: Double]] {
        [
            .right: Dictionary(uniqueKeysWithValues: zip(frequencies, right)),
            .left: Dictionary(uniqueKeysWithValues: zip(frequencies, left)),
        ]
    }

    /// The review's case: right 57-84 dB HL, left near normal. Through the head the right ear
    /// comes out too good; every such threshold is named "may be the other ear" and the
    /// asymmetry sends the person to a doctor first. A fitting is refused unless forced.
    @Test func anAsymmetricLossIsReferredAndItsCrossHeardThresholdsNamed() throws {
        //                        250 500 1k  2k  3k  4k  6k  8k
        let truth = Self.audiogram([57, 60, 62, 70, 75, 80, 84, 84], [10, 10, 15, 15, 20, 20, 25, 25])
        for seed in UInt64(1)...8 {
            let (result, findings) = Self.run(truth, seed: seed)
            #expect(findings.seeADoctor && findings.asymmetricFrequenciesHz.count >= 6, "seed \(seed): \(findings.lines)")
            for hz in Self.frequencies {
                guard let measured = result.threshold(ear: .right, frequencyHz: hz)?.thresholdDBHL else { continue }
                // Heard through the left ear (left + 40 dB): better than the truth, and flagged.
                if Double(measured) < truth[.right]![hz]! - 5 {
                    #expect(
                        findings.crossHeard.contains { $0.ear == .right && $0.frequencyHz == hz },
                        "seed \(seed): right \(hz) Hz measured \(measured), truth \(truth[.right]![hz]!), not flagged")
                }
            }
            let record = HearingTestRecord(
                date: "2026-11-29T01:00:00Z", transducer: .consumer, calibrationProfile: nil, outputLeftDBSPL: 100,
                outputRightDBSPL: 100, inputDBSPL: 100, uncertaintyDB: nil, retsplIsStandard: false, ceilingDBHL: 90, result: result)
            #expect(throws: FittingRefusal.self) { try record.proposedFitting() }
            #expect((try? record.proposedFitting(force: true)) != nil)
        }
        let (_, findings) = Self.run(truth, seed: 1)
        print("asymmetric loss (right 57-84, left 10-25 dB HL):\n  " + findings.lines.joined(separator: "\n  "))
    }

    /// One ear at 90 dB HL, the other normal: a unilateral loss, referred, and the dead ear's
    /// "thresholds" (the good ear's, 40 dB up) named.
    @Test func aUnilateralLossIsReferred() {
        let (_, findings) = Self.run(Self.audiogram(Array(repeating: 95, count: 8), Array(repeating: 5, count: 8)), seed: 3)
        #expect(findings.unilateralLossEar == .right && findings.seeADoctor)
        #expect(findings.crossHeard.filter { $0.ear == .right }.count >= 6, "\(findings.crossHeard)")
        #expect(findings.lines.contains { $0.contains("a loss in the right ear only") })
    }

    /// Symmetric losses, normal, sloping and notched, flag nothing.
    @Test func symmetricLossesFlagNothing() {
        for (name, right, left) in [
            ("normal", [5.0, 5, 5, 10, 10, 10, 15, 15], [5.0, 10, 5, 5, 10, 15, 15, 10]),
            ("sloping", [20.0, 25, 30, 45, 55, 60, 65, 70], [25.0, 25, 35, 45, 50, 60, 70, 70]),
            ("4 kHz notch", [10.0, 10, 10, 20, 40, 50, 30, 20], [10.0, 10, 15, 25, 45, 50, 25, 20]),
        ] {
            let (_, findings) = Self.run(Self.audiogram(right, left), seed: 5)
            #expect(!findings.seeADoctor && findings.crossHeard.isEmpty, "\(name): \(findings.lines)")
        }
    }

    /// Inserts lose 55 dB between the ears, so a 40 dB difference needs no flag with them and
    /// does with supra-aural headphones (40 dB; flagged from 30, the bone-conduction margin).
    @Test func theInterauralAttenuationIsTheHeadphones() {
        let frequencies: [FrequencyResult] = [Ear.right, .left].map { ear in
            FrequencyResult(
                ear: ear, frequencyHz: 1000, isRetest: false, status: .threshold, thresholdDBHL: ear == .right ? 50 : 10,
                maximumTestedDBHL: 90, presentations: 6, ambientNoiseDBSPL: nil)
        }
        #expect(HearingTestFindings(frequencies: frequencies, transducer: .tdh39).crossHeard.count == 1)
        #expect(HearingTestFindings(frequencies: frequencies, transducer: .er3a).crossHeard.isEmpty)
        // One frequency apart is not an asymmetry to refer.
        #expect(!HearingTestFindings(frequencies: frequencies, transducer: .tdh39).seeADoctor)
        // A borderline ear 5 dB off a normal one is not a one-sided loss.
        let borderline: [FrequencyResult] = [Ear.right, .left].flatMap { ear in
            [500, 1000, 2000, 4000].map { hz in
                FrequencyResult(
                    ear: ear, frequencyHz: hz, isRetest: false, status: .threshold,
                    thresholdDBHL: ear == .right && hz == 4000 ? 30 : 25, maximumTestedDBHL: 90, presentations: 6,
                    ambientNoiseDBSPL: nil)
            }
        }
        let findings = HearingTestFindings(frequencies: borderline, transducer: .tdh39)
        #expect(findings.unilateralLossEar == nil && !findings.seeADoctor && findings.lines.isEmpty)
    }
}
