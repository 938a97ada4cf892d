import Foundation
import RibbitSignals
import Testing

@testable import RibbitDSP
@testable import RibbitMonitor

/// The dump's numbers against closed forms: a sine of amplitude A (whole periods) reads 20 log10(A / sqrt 2)
/// RMS and 20 log10(A) peak, and its third-octave band holds that level.
@Suite struct DumpAnalyzerTests {
    @Test(arguments: [(1000.0, 0.1), (250.0, 0.01), (4000.0, 0.5), (125.0, 0.05)])
    func sineLevelsAndItsBand(frequency: Double, amplitude: Double) {
        let x = Signals.sine(count: 8192, frequencyHz: frequency, sampleRate: 48000, amplitude: amplitude)
        let dump = DumpAnalyzer().analyze(input: x, output: x, recentInput: x[4352...], recentOutput: x[4352...], sampleRate: 48000)
        let rms = 20 * log10(amplitude / 2.0.squareRoot())
        #expect(abs(dump.inputRMSDB - rms) < 0.01)
        #expect(abs(dump.inputPeakDB - 20 * log10(amplitude)) < 0.01)
        let band = DumpAnalyzer.bandCentersHz.firstIndex(of: frequency)!
        #expect(abs(dump.inputBandsDB[band] - rms) < 0.5, "\(dump.inputBandsDB[band]) vs \(rms)")
        // Two bands away holds (almost) nothing.
        #expect(dump.inputBandsDB[min(band + 2, DumpAnalyzer.bandCentersHz.count - 1)] < rms - 40)
        #expect(dump.inputSpectrumDB.count == DumpAnalyzer.spectrumWindow / 2 + 1)
    }

    /// A dump that just started has fewer samples than the 4096 of its window: a steady tone
    /// must read the same level, without splatter into other bands (a cut-off edge would put
    /// energy everywhere, and the measured gain of empty bands would be nonsense).
    @Test(arguments: [600, 2400, 4095])
    func aPartlyFilledWindowReadsTheSameLevel(samples: Int) {
        let x = Signals.sine(count: samples, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.1)
        let dump = DumpAnalyzer().analyze(input: x, output: x, recentInput: x[...], recentOutput: x[...], sampleRate: 48000)
        let band = DumpAnalyzer.bandCentersHz.firstIndex(of: 1000)!
        let rms = 20 * log10(0.1 / 2.0.squareRoot())
        #expect(abs(dump.inputBandsDB[band] - rms) < 0.5, "\(dump.inputBandsDB[band]) vs \(rms)")
        // 125 Hz is three octaves away: the Hann window keeps it more than 70 dB down.
        #expect(dump.inputBandsDB[0] < rms - 70, "\(dump.inputBandsDB[0])")
    }

    @Test func silenceReadsTheFloorAndNaNDoesNotPoisonTheFrame() {
        let silence = [Float](repeating: 0, count: 4096)
        var broken = silence
        broken[100] = .nan
        let dump = DumpAnalyzer().analyze(
            input: silence, output: broken, recentInput: silence[...], recentOutput: broken[...], sampleRate: 48000)
        #expect(dump.inputRMSDB == DumpAnalyzer.floorDB && dump.inputBandsDB.allSatisfy { $0 == DumpAnalyzer.floorDB })
        #expect(dump.outputPeakDB == DumpAnalyzer.floorDB)
        #expect(dump.outputBandsDB.allSatisfy(\.isFinite) && dump.outputSpectrumDB.allSatisfy(\.isFinite))
    }

    /// The accumulator keeps the newest 4096 samples for the bands and only the samples since
    /// the previous frame for RMS and peak.
    @Test func accumulatorLevelsCoverOnlyTheSamplesSinceThePreviousFrame() {
        let accumulator = DumpAccumulator(earCount: 1)
        let loud = [Float](repeating: 0.5, count: 3000)
        let quiet = Signals.sine(count: 2400, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01)
        accumulator.append(ear: 0, input: loud, output: loud)
        #expect(accumulator.pendingFrames == 3000)
        _ = accumulator.analyze(sampleRate: 48000)
        #expect(accumulator.pendingFrames == 0)
        accumulator.append(ear: 0, input: quiet, output: quiet.map { $0 * 10 })
        let dump = accumulator.analyze(sampleRate: 48000)[0]
        #expect(abs(dump.inputPeakDB - (-40)) < 0.01 && abs(dump.outputPeakDB - (-20)) < 0.01)
        #expect(abs(dump.outputRMSDB - dump.inputRMSDB - 20) < 0.01)
    }

    /// A pure delay's response is 0 dB at every frequency; a two-tap average [1/2, 1/2] has
    /// |H(f)| = |cos(pi f / fs)| (closed form), so its gain is 20 log10 |cos(pi f / fs)|.
    @Test func filterResponseMatchesClosedForms() {
        let frequencies = DumpAnalyzer.spectrumFrequenciesHz(sampleRate: 48000)
        let delay = FilterSet.delay(96, channelCount: 1, fftLength: 256)
        #expect(delay.magnitudeDB(channel: 0, atHz: frequencies, sampleRate: 48000).allSatisfy { abs($0) < 1e-9 })
        let average = FilterSet(taps: [[0.5, 0.5]], fftLength: 256, ceilingDBFS: 0)
        let response = average.magnitudeDB(channel: 0, atHz: frequencies, sampleRate: 48000)
        for (hz, db) in zip(frequencies, response).dropLast() {
            #expect(abs(db - 20 * log10(abs(cos(Double.pi * hz / 48000)))) < 1e-6, "\(hz) Hz")
        }
        #expect(response.last == -140, "a zero at Nyquist reads the floor")
    }

    /// What the dump reports of a fitting: the target is the combination window at the band
    /// centres and bins (nil where the low-pass reaches 0), the applied gain is the filter's.
    @Test func earGainsReportTheWindowAndTheFilter() {
        let curve = CombinationCurve(
            gain: GainCurve(points: [.init(frequencyHz: 500, gainDB: 0), .init(frequencyHz: 4000, gainDB: 30)]),
            lowpass: LowpassCurve(passHz: 6000))
        let filter = LinearPhaseFIR.design(taps: 193, sampleRate: 48000, amplitude: curve.amplitude)
        let gains = EarGains(
            curve: curve, filters: FilterSet(taps: [filter], fftLength: 256, ceilingDBFS: -1), channel: 0, sampleRate: 48000)
        let bands = DumpAnalyzer.bandCentersHz
        #expect(gains.targetBandsDB[bands.firstIndex(of: 250)!] == 0)
        #expect(gains.targetBandsDB[bands.firstIndex(of: 4000)!] == 30)
        #expect(abs(gains.targetBandsDB[bands.firstIndex(of: 2000)!]! - 20) < 0.01)  // 2/3 of the way, in octaves
        #expect(gains.targetBandsDB[bands.firstIndex(of: 8000)!] == nil, "above 7500 Hz the low-pass stops everything")
        let bins = DumpAnalyzer.spectrumFrequenciesHz(sampleRate: 48000)
        for (k, hz) in bins.enumerated() where hz >= 250 && hz <= 5000 {
            #expect(abs(gains.appliedGainDB[k] - gains.combinationWindowDB[k]!) < 1, "\(hz) Hz: the filter misses the window")
        }
        let unity = EarGains(curve: .unity, filters: .delay(96, channelCount: 1, fftLength: 256), channel: 0, sampleRate: 48000)
        #expect(unity.appliedGainDB.allSatisfy { $0 == 0 } && unity.combinationWindowDB.allSatisfy { $0 == 0 })
    }
}
