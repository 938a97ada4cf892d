import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals

/// A listener with known thresholds answering through a logistic psychometric function:
/// P(yes) = falseAlarm + (1 - falseAlarm - lapse) / (1 + exp(-slope (L - T))), T the 50 % point
/// of the sensory part; silence (and a wait) gets yes with the false-alarm rate.
struct SimulatedListener {
    var thresholdsDBHL: [Ear: [Int: Double]]
    /// Logistic slope per dB. 1/dB: 10 % to 90 % across 4.4 dB, as steep as yes-no pure-tone
    /// psychometric functions of normal and cochlear-loss ears are reported to be (about 4-6 dB;
    /// Marshall & Jesteadt 1986, J Speech Hear Res 29:82-91; quoted from memory).
    var slopePerDB = 1.0
    var falseAlarmRate = 0.02
    var lapseRate = 0.02
    /// Added to the 1 kHz threshold on the retest (a headphone that moved, a listener who learned).
    var retestShiftDB = 0.0
    /// Presses during waits at the false-alarm rate; a yes-to-everything listener only answers
    /// when asked, so it does not.
    var pressesDuringWaits = true
    /// Cross-hearing: a tone in one ear reaches the other cochlea this many dB down (nil: never),
    /// so the ear hears it at the better of its own threshold and the other's plus this.
    var interauralAttenuationDB: Double?
    /// Noise in one ear raises the other's threshold a little through the brain, not the skull.
    var centralMaskingDB = 0.0
    var random: SeededRandom

    static func powerSum(_ a: Double, _ b: Double) -> Double { 10 * log10(pow(10, a / 10) + pow(10, b / 10)) }

    func yesProbability(levelDBHL: Int, thresholdDBHL: Double) -> Double {
        let sensory = 1 / (1 + exp(-slopePerDB * (Double(levelDBHL) - thresholdDBHL)))
        return falseAlarmRate + (1 - falseAlarmRate - lapseRate) * sensory
    }

    /// Drives one presentation through the procedure: presses during the wait, then the answer.
    mutating func take(_ presentation: Presentation, in test: inout HearingTest) {
        if pressesDuringWaits && Double.random(in: 0..<1, using: &random) < falseAlarmRate { test.recordPressOutsideWindow() }
        var yes: Double
        if let ear = presentation.toneEar, var threshold = thresholdsDBHL[ear]?[presentation.frequencyHz] {
            if presentation.isRetest { threshold += retestShiftDB }
            // Masking noise in the other ear (dB EM: it just masks a tone of that many dB HL)
            // adds to that ear's threshold (powers add); crossing the head it reaches the
            // tested ear `interauralAttenuationDB` down (overmasking), plus central masking.
            let noise = presentation.maskingDBEM.map(Double.init)
            if let noise {
                threshold = Self.powerSum(threshold, noise - (interauralAttenuationDB ?? 200)) + centralMaskingDB
            }
            if let attenuation = interauralAttenuationDB,
                var other = thresholdsDBHL[ear == .right ? .left : .right]?[presentation.frequencyHz]
            {
                if let noise { other = Self.powerSum(other, noise) }
                threshold = min(threshold, other + attenuation)
            }
            yes = yesProbability(levelDBHL: presentation.levelDBHL, thresholdDBHL: threshold)
        } else {
            yes = falseAlarmRate
        }
        if Double.random(in: 0..<1, using: &random) < yes {
            let timeMs = 300 + Int.random(in: 0...500, using: &random)
            test.record(.responded(responseTimeMs: timeMs))
        } else {
            test.record(.missed)
        }
    }

    /// Thresholds drawn uniformly (continuous, not on the 5 dB grid) from `range` per ear and
    /// frequency: flat, sloping and notched audiograms alike.
    static func randomThresholds(_ range: ClosedRange<Double>, random: inout SeededRandom) -> [Ear: [Int: Double]] {
        var out: [Ear: [Int: Double]] = [:]
        for ear in Ear.allCases {
            for frequencyHz in Set(HearingTest.Plan.clinicalOrder).sorted() {
                out[ear, default: [:]][frequencyHz] = Double.random(in: range, using: &random)
            }
        }
        return out
    }

    /// A presbycusis-like audiogram: flat to 1 kHz at 0-35 dB HL, falling 0-15 dB per octave
    /// above, each frequency off the line by up to +-5 dB; the two ears alike within +-10 dB.
    static func slopingThresholds(random: inout SeededRandom) -> [Ear: [Int: Double]] {
        let base = Double.random(in: 0...35, using: &random)
        let slopePerOctave = Double.random(in: 0...15, using: &random)
        var out: [Ear: [Int: Double]] = [:]
        for ear in Ear.allCases {
            let earOffset = Double.random(in: -5...5, using: &random)
            for frequencyHz in Set(HearingTest.Plan.clinicalOrder).sorted() {
                let octavesAbove1k = max(0, log2(Double(frequencyHz) / 1000))
                let line = base + earOffset + slopePerOctave * octavesAbove1k
                out[ear, default: [:]][frequencyHz] = min(line + Double.random(in: -5...5, using: &random), 85)
            }
        }
        return out
    }
}

/// A whole test, listener and procedure seeded separately.
func runTest(listener: inout SimulatedListener, plan: HearingTest.Plan, seed: UInt64) -> HearingTestResult {
    var test = HearingTest(plan: plan)
    var generator = SeededRandom(seed: seed)
    while let presentation = test.next(using: &generator) {
        listener.take(presentation, in: &test)
    }
    return test.result
}

/// The test's length as a driver plays it: every wait, tone and full response window.
func durationSeconds(_ result: HearingTestResult, plan: HearingTest.Plan) -> Double {
    let windowMs = plan.pulses.totalMs + plan.afterToneMs
    return Double(result.log.reduce(0) { $0 + $1.waitMs + windowMs }) / 1000
}

/// The same when a driver moves on as soon as the listener answers.
func durationAnsweringEarlySeconds(_ result: HearingTestResult, plan: HearingTest.Plan) -> Double {
    let windowMs = plan.pulses.totalMs + plan.afterToneMs
    return Double(result.log.reduce(0) { $0 + $1.waitMs + ($1.responseTimeMs ?? windowMs) }) / 1000
}
