import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals

/// Stored-test fixtures made the real way: a seeded listener with known thresholds (a logistic
/// psychometric function, as Tests/RibbitAudiometryTests/SimulatedListener.swift) answers a real
/// `HearingTest`, and its result goes into a record.
public enum HearingTestRecords {
    /// `thresholds` per ear and frequency (dB HL); a frequency missing is never heard (no response).
    public static func record(
        thresholds: [Ear: [Int: Double]], falseAlarmRate: Double = 0.02, retestShiftDB: Double = 0, seed: UInt64 = 1,
        date: String = "2026-11-24T03:05:00Z", maximumDBHL: Int = 90, ambientNoiseDBSPL: Double = 24.5
    ) -> HearingTestRecord {
        var test = HearingTest(plan: HearingTest.Plan(maximumDBHL: maximumDBHL))
        var procedure = SeededRandom(seed: seed)
        var listener = SeededRandom(seed: seed &+ 1000)
        while let presentation = test.next(using: &procedure) {
            if Double.random(in: 0..<1, using: &listener) < falseAlarmRate { test.recordPressOutsideWindow() }
            var yes = falseAlarmRate
            if let ear = presentation.toneEar {
                if var threshold = thresholds[ear]?[presentation.frequencyHz] {
                    if presentation.isRetest { threshold += retestShiftDB }
                    // Slope 1/dB, lapse 2 %.
                    yes = falseAlarmRate + (0.98 - falseAlarmRate) / (1 + exp(-(Double(presentation.levelDBHL) - threshold)))
                }
            }
            if Double.random(in: 0..<1, using: &listener) < yes {
                test.record(
                    .responded(responseTimeMs: 300 + Int.random(in: 0...500, using: &listener)), ambientNoiseDBSPL: ambientNoiseDBSPL)
            } else {
                test.record(.missed, ambientNoiseDBSPL: ambientNoiseDBSPL)
            }
        }
        return HearingTestRecord(
            date: date, transducer: .consumer, calibrationProfile: "bench", outputLeftDBSPL: 104, outputRightDBSPL: 103.5, inputDBSPL: 110,
            uncertaintyDB: nil, retsplIsStandard: false, ceilingDBHL: Double(maximumDBHL), result: test.result)
    }

    /// A mild sloping loss, both ears alike (camfit fits it within ribbit's +50 dB).
    public static let sloping: [Int: Double] = [250: 15, 500: 20, 1000: 25, 2000: 30, 3000: 35, 4000: 40, 6000: 42, 8000: 45]

    public static func reliable(seed: UInt64 = 1, date: String = "2026-11-24T03:05:00Z") -> HearingTestRecord {
        record(thresholds: [.right: sloping, .left: sloping], seed: seed, date: date)
    }

    /// Reliable, the left ear never hearing 8 kHz: no response at 90 (camfit would need more
    /// than +50 dB there; nal-r fits it).
    public static func noResponseAt8k(seed: UInt64 = 4) -> HearingTestRecord {
        var left = sloping
        left[8000] = nil
        return record(thresholds: [.right: sloping, .left: left], seed: seed, date: "2026-11-22T08:30:00Z")
    }

    /// Presses at random 40 % of the time: flagged for false alarms.
    public static func unreliable(seed: UInt64 = 2) -> HearingTestRecord {
        record(thresholds: [.right: sloping, .left: sloping], falseAlarmRate: 0.4, seed: seed, date: "2026-11-23T10:00:00Z")
    }
}
