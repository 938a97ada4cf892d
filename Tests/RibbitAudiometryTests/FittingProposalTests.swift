import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals
import Testing

/// `HearingTestRecord.proposedFitting`: a real test by a seeded listener, to a prescription.
@Suite struct FittingProposalTests {
    /// Mild enough for camfit within ribbit's +50 dB.
    static let sloping: [Int: Double] = [250: 15, 500: 20, 1000: 25, 2000: 30, 3000: 35, 4000: 40, 6000: 42, 8000: 45]

    func record(_ thresholds: [Ear: [Int: Double]], falseAlarmRate: Double = 0.02, seed: UInt64 = 1) -> HearingTestRecord {
        var listener = SimulatedListener(thresholdsDBHL: thresholds, falseAlarmRate: falseAlarmRate, random: SeededRandom(seed: seed))
        let result = runTest(listener: &listener, plan: HearingTest.Plan(maximumDBHL: 90), seed: seed &+ 17)
        return HearingTestRecord(
            id: 4, date: "2026-11-24T03:05:00Z", transducer: .consumer, calibrationProfile: nil, outputLeftDBSPL: 100,
            outputRightDBSPL: 100, inputDBSPL: 110, uncertaintyDB: 6, retsplIsStandard: false, ceilingDBHL: 90, result: result)
    }

    @Test func thresholdsBecomeACamfitPrescriptionNamedAndNotedAsSelfMeasured() throws {
        let test = record([.right: Self.sloping, .left: Self.sloping])
        #expect(test.result.flags.isEmpty, "flags \(test.result.flags)")
        let fitting = try test.proposedFitting()
        let rx = fitting.prescription
        #expect(rx.name == "self-test 2026-11-24" && rx.date == "2026-11-24" && rx.environment == "quiet")
        #expect(rx.rule == .camfit && rx.version == 2 && rx.signature == nil)
        #expect(rx.note == HearingTestRecord.disclaimer)
        for ear in Ear.allCases {
            for (hz, truth) in Self.sloping {
                let measured = try #require(test.result.threshold(ear: ear, frequencyHz: hz)?.thresholdDBHL)
                #expect(rx.thresholds[ear]?[hz] == measured)
                #expect(abs(Double(measured) - truth) <= 10)
            }
        }
        // The 1 kHz retest is an indicator, not a second value; the text reads back as it is.
        #expect(rx.thresholds[.right]?.count == 8 && rx.noResponse.isEmpty)
        #expect(fitting.noResponseAt.isEmpty && fitting.untested.isEmpty && fitting.undetermined.isEmpty && fitting.earsLeftOut.isEmpty)
        #expect(try Prescription.parse(Array(rx.text.utf8)) == rx)
        #expect(try test.proposedFitting(rule: .nalR, environment: "music").prescription.version == 1)
    }

    /// An ordinary older listener's loss: more than ribbit's +50 dB of camfit gain at the top.
    static let steep: [Int: Double] = [250: 20, 500: 25, 1000: 35, 2000: 45, 3000: 55, 4000: 60, 6000: 65, 8000: 70]

    @Test func aSteepLossKeepsCamfitAndTheAudiogram() throws {
        let test = record([.right: Self.steep, .left: Self.steep], seed: 3)
        #expect(test.result.flags.isEmpty, "flags \(test.result.flags)")
        let rx = try test.proposedFitting().prescription
        // The rule and the measured audiogram, as the audiologist's software would write them:
        // what the hearing aid cannot play is its business (`CompressorFitting.delivery`).
        #expect(rx.rule == .camfit && rx.note == HearingTestRecord.disclaimer && rx.extensions.isEmpty)
        #expect(try Prescription.parse(Array(rx.text.utf8)) == rx)
        for ear in [Ear.right, .left] {
            for (hz, _) in Self.steep {
                #expect(rx.thresholds[ear]?[hz] == test.result.threshold(ear: ear, frequencyHz: hz)?.thresholdDBHL)
            }
            // Camfit wants more than ribbit's maximum at the top; the prescription says so unchanged.
            #expect(try #require(rx.levelGains(for: ear)).g50[8000]! > Prescription.maxGainDB)
        }
    }

    @Test func aNoResponseIsFittedAtTheLevelTested() throws {
        var left = Self.sloping
        left[8000] = nil  // never heard: no response at 90
        let test = record([.right: Self.sloping, .left: left], seed: 2)
        #expect(!test.result.isUnreliable, "flags \(test.result.flags)")
        let fitting = try test.proposedFitting()
        #expect(fitting.prescription.thresholds[.left]?[8000] == 90 && fitting.prescription.noResponse[.left] == [8000])
        #expect(fitting.prescription.rule == .camfit && fitting.prescription.text.contains("8000=90nr"))
        #expect(fitting.noResponseAt == [.init(ear: .left, frequencyHz: 8000, dBHL: 90)])
        let nalR = try test.proposedFitting(rule: .nalR)
        #expect(nalR.prescription.thresholds[.left]?[8000] == 90 && nalR.prescription.noResponse[.left] == [8000])
        #expect(nalR.noResponseAt == [.init(ear: .left, frequencyHz: 8000, dBHL: 90)])
        #expect(nalR.prescription.text.contains("8000=90nr"))
    }

    @Test func undeterminedAndUntestedAreLeftOutAndSaidWhich() throws {
        var test = record([.right: Self.sloping, .left: Self.sloping])
        let index6k = try #require(test.result.frequencies.firstIndex { $0.ear == .right && $0.frequencyHz == 6000 })
        test.result.frequencies[index6k].status = .undetermined
        test.result.frequencies[index6k].thresholdDBHL = nil
        test.result.frequencies.removeAll { $0.ear == .right && $0.frequencyHz == 250 }
        // A required frequency undetermined: that whole ear is left out.
        let left2k = try #require(test.result.frequencies.firstIndex { $0.ear == .left && $0.frequencyHz == 2000 })
        test.result.frequencies[left2k].status = .undetermined
        test.result.frequencies[left2k].thresholdDBHL = nil
        let fitting = try test.proposedFitting()
        #expect(fitting.prescription.thresholds[.right]?[6000] == nil && fitting.prescription.thresholds[.right]?[250] == nil)
        #expect(fitting.prescription.thresholds[.left] == nil)
        #expect(fitting.undetermined.contains(.init(ear: .right, frequencyHz: 6000, dBHL: nil)))
        #expect(fitting.untested.contains(.init(ear: .right, frequencyHz: 250, dBHL: nil)))
        #expect(fitting.earsLeftOut.map(\.ear) == [.left] && fitting.earsLeftOut.first?.missingHz == [2000])

        // Neither ear usable: refused, one line.
        let right2k = try #require(test.result.frequencies.firstIndex { $0.ear == .right && $0.frequencyHz == 2000 })
        test.result.frequencies[right2k].status = .undetermined
        #expect { try test.proposedFitting() } throws: { error in
            let text = "\(error)"
            return text.contains("no ear with levels at 500, 1000, 2000 and 4000 Hz") && !text.contains("\n")
        }
    }

    @Test func anUnreliableTestIsRefusedUnlessForced() throws {
        let test = record([.right: Self.sloping, .left: Self.sloping], falseAlarmRate: 0.4, seed: 5)
        #expect(test.result.isUnreliable)
        #expect { try test.proposedFitting() } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("hearing test 4 is unreliable: too many false alarms") && text.contains("--force") && !text.contains("\n")
        }
        #expect(try !test.proposedFitting(rule: .nalR, force: true).prescription.thresholds.isEmpty)

        let deaf = record([:], seed: 6)  // headphones off: nothing heard anywhere
        #expect(deaf.result.flags.contains(.noResponseAnywhere))
        #expect { try deaf.proposedFitting() } throws: { "\($0)".contains("nothing was heard at any frequency") }
    }
}
