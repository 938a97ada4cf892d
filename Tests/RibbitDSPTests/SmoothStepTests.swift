import Foundation
import Testing

@testable import RibbitDSP

@Suite struct SmoothStepTests {
    @Test func endsAreExactlyZeroAndOne() {
        #expect(SmoothStep.value(0) == 0)
        #expect(SmoothStep.value(-3) == 0)
        #expect(SmoothStep.value(1) == 1)
        #expect(SmoothStep.value(7) == 1)
        #expect(abs(SmoothStep.value(0.5) - 0.5) < 1e-15)
    }

    @Test func isAPartitionOfUnityAndIncreasing() {
        var previous = 0.0
        for i in 1..<1000 {
            let x = Double(i) / 1000
            #expect(abs(SmoothStep.value(x) + SmoothStep.value(1 - x) - 1) < 1e-15)
            #expect(SmoothStep.value(x) >= previous)
            if x > 0.05 && x < 0.95 { #expect(SmoothStep.value(x) > previous) }
            previous = SmoothStep.value(x)
        }
    }

    @Test func isFlatAtBothEnds() {
        // Every derivative vanishes at 0 and 1: s(h) / h^k -> 0 for any k.
        let h = 0.02
        #expect(SmoothStep.value(h) / pow(h, 4) < 1e-6)
        #expect((1 - SmoothStep.value(1 - h)) / pow(h, 4) < 1e-6)
    }

    @Test func lowpassPassesToCornerAndStopsAtOneAndAQuarter() {
        let lowpass = LowpassCurve(passHz: 8000)
        #expect(lowpass.amplitude(atHz: 100) == 1)
        #expect(lowpass.amplitude(atHz: 8000) == 1)
        #expect(abs(lowpass.amplitude(atHz: 9000) - 0.5) < 1e-12)
        #expect(lowpass.amplitude(atHz: 10000) == 0)
        #expect(lowpass.amplitude(atHz: 20000) == 0)
        #expect(LowpassCurve.none.amplitude(atHz: 20000) == 1)
    }

    @Test func gainCurveInterpolatesOnLogFrequencyAndIsFlatOutside() {
        let curve = GainCurve(points: [.init(frequencyHz: 1000, gainDB: 10), .init(frequencyHz: 4000, gainDB: 30)])
        #expect(curve.gainDB(atHz: 125) == 10)
        #expect(curve.gainDB(atHz: 8000) == 30)
        #expect(abs(curve.gainDB(atHz: 2000) - 20) < 1e-12)  // one octave of two
        #expect(abs(curve.amplitude(atHz: 1000) - pow(10, 0.5)) < 1e-12)
        #expect(GainCurve.unity.gainDB(atHz: 500) == 0)
    }
}
