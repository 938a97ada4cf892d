import Foundation
import RibbitDSP
import RibbitMeasure
import RibbitSignals
import Testing

/// The measurement kit the dump, `verify`, `measure` and the tests share, against closed forms.
@Suite struct MeasureKitTests {
    /// The periodic window's halves overlap to exactly 1 (so Welch's segments weigh every sample
    /// alike); the symmetric one is 0 at both ends and 1 in the middle.
    @Test func hannWindowsHaveTheirClosedForms() {
        let n = 1024
        let periodic = HannWindow.values(length: n)
        for i in 0..<(n / 2) { #expect(abs(periodic[i] + periodic[i + n / 2] - 1) < 1e-12) }
        #expect(HannWindow.symmetricValue(0, length: 101) == 0)
        #expect(abs(HannWindow.symmetricValue(100, length: 101)) < 1e-12)
        #expect(abs(HannWindow.symmetricValue(50, length: 101) - 1) < 1e-12)
    }

    /// A sine of peak a is 20 log10(a) dBFS (sine-referenced) whole, as its amplitude and in
    /// its third-octave band; a pure sine has no distortion to speak of.
    @Test func aSineReadsTheSameEveryWay() {
        let a = 0.25
        let x = Signals.sine(count: 48000, frequencyHz: 1000, sampleRate: 48000, amplitude: a)
        let expected = 20 * log10(a)
        #expect(abs(Levels.dBFS(x[...])! - expected) < 0.01)
        #expect(abs(Tone.amplitude(x[...], frequencyHz: 1000, sampleRate: 48000) - a) < 1e-4)
        let band = Spectra.thirdOctaveLevelsDBFS(x[...], centresHz: [1000], sampleRate: 48000)[0]!
        #expect(abs(band - expected) < 0.1, "\(band)")
        #expect(Tone.thdPercent(x[...], frequencyHz: 1000, sampleRate: 48000)! < 0.01)
        #expect(Tone.thdPlusNoiseDB(x[...], frequencyHz: 1000, sampleRate: 48000) < -100)
        #expect(Levels.dBFS([Float](repeating: 0, count: 10)[...]) == nil)
    }
}
