import Foundation
import Testing
@testable import RibbitDSP

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
}
