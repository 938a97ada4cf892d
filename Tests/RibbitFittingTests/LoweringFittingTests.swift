import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSignals
import RibbitTestSupport
import Testing

/// Frequency lowering from the prescription to what the engine runs.
@Suite struct LoweringFittingTests {
    static func prescription(_ name: String) throws -> Prescription {
        try Prescription.parse(Array(try String(contentsOf: TestPaths.prescription(name), encoding: .utf8).utf8))
    }

    /// No lowering key: the plan carries no lowering, and an ear not lowered beside one that is
    /// gets exactly the filters it had.
    @Test func withoutTheKeyThePlanIsUnchanged() throws {
        let plain = try Self.prescription("iec-s2.rx")
        var oneEar = plain
        oneEar.lowering[.right] = FrequencyLowering(cutoffHz: 1500, ratio: 3)
        let before = try Fitting(prescription: plain, sampleRate: 48000).processing(
            ears: [.left, .right], trusted: false, calibration: .uncalibrated)
        let after = try Fitting(prescription: oneEar, sampleRate: 48000).processing(
            ears: [.left, .right], trusted: false, calibration: .uncalibrated)
        #expect(before.compressor.lowering.isEmpty)
        #expect(after.compressor.lowering.count == 2 && after.compressor.lowering[0] == nil && after.compressor.lowering[1] != nil)
        #expect(after.compressor.bandTaps[0] == before.compressor.bandTaps[0])
        #expect(after.compressor.settings == before.compressor.settings)
        #expect(after.filters.taps == before.filters.taps, "the linear filters do not lower")
        #expect(after.compressor.bandTaps[1] != before.compressor.bandTaps[1])
        let again = try Fitting(prescription: plain, sampleRate: 48000).processing(
            ears: [.left, .right], trusted: false, calibration: .uncalibrated)
        #expect(again.compressor == before.compressor)
    }

    /// `ribbitd process`'s path: the fitting of `Prescriptions/steep-lowering.rx` through the
    /// engine moves a 6 kHz tone to 1500 (6000 / 1500)^(1/3) = 2381 Hz, within a bin.
    @Test func theSampleLowersThroughTheEngine() throws {
        let rx = try Self.prescription("steep-lowering.rx")
        #expect(rx.lowering[.left] == FrequencyLowering(cutoffHz: 1500, ratio: 3))
        let geometry = EngineGeometry.standard(sampleRate: 48000)
        let fitting = try Fitting(prescription: rx, sampleRate: 48000, geometry: geometry)
        let (filters, plan) = fitting.processing(ears: [.left, .right], trusted: false, calibration: .uncalibrated)
        let engine = try OverlapSaveEngine(playing: filters, compressor: plan, geometry: geometry, sampleRate: 48000, blockSize: 64)
        let tone = Signals.sine(count: 12288, frequencyHz: 6000, sampleRate: 48000, amplitude: 0.01)
        let out = engine.process([tone, tone])
        for channel in 0..<2 {
            let spectrum = Self.magnitudes(Array(out[channel][4096..<12288]))
            let k = spectrum.indices.max { spectrum[$0] < spectrum[$1] }!
            let hz = Double(k) * 48000 / 8192
            print(String(format: "steep-lowering.rx, channel %d: 6000 Hz comes out at %.1f Hz", channel, hz))
            #expect(abs(hz - rx.lowering[.left]!.mappedHz(6000)) <= 187.5)
        }
    }

    /// The worked example of docs/prescription-format.md: IEC S2 (55 dB HL at 2 kHz, 95 from
    /// 4 kHz), lowering 1500 Hz / 3. Per source band, 65 dB SPL speech's band level, where it
    /// lands, the gain played there for 65 dB SPL speech and the threshold there in dB SPL
    /// (dB HL + ISO 389-7), against the same band unlowered.
    @Test func theWorkedExampleBringsFourToEightKilohertzAboveThreshold() throws {
        let rx = try Self.prescription("steep-lowering.rx")
        let lowering = try #require(rx.lowering[.right])
        let thresholds = try #require(rx.thresholds[.right]).mapValues(Double.init)
        let delivery = try #require(CompressorFitting.delivery(rx, ear: .right, trusted: false))
        let centres = delivery.map(\.centreHz)
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: centres, overallDBSPL: 65)
        // The gain played for 65 dB SPL speech, read on a log-frequency axis between centres.
        let played = Dictionary(uniqueKeysWithValues: zip(centres.map { Int($0) }, delivery.map { $0.deliveredDB[1] }))
        func gain(_ hz: Double) -> Double { Camfit.interpolate(played.mapValues { $0 }, atHz: hz) }
        func threshold(_ hz: Double) -> Double { Camfit.interpolate(thresholds, atHz: hz) + Camfit.retsplDB(atHz: hz) }
        for source in [4000.0, 6000, 8000] {
            let i = try #require(centres.firstIndex(of: source))
            let destination = lowering.mappedHz(source)
            let unlowered = levels[i] + gain(source) - threshold(source)
            let lowered = levels[i] + gain(destination) - threshold(destination)
            print(
                String(
                    format:
                        "S2, %.0f Hz band: speech %.1f dB SPL; unlowered +%.1f dB, %.1f dB SPL against %.1f (%+.1f dB); lowered to %.0f Hz: +%.1f dB, %.1f dB SPL against %.1f (%+.1f dB)",
                    source, levels[i], gain(source), levels[i] + gain(source), threshold(source), unlowered, destination, gain(destination),
                    levels[i] + gain(destination), threshold(destination), lowered))
            #expect(lowered > 0, "\(source) Hz lowered stays below threshold")
            #expect(lowered > unlowered + 10)
        }
    }

    /// The clinical note suggests the key for a steep loss, and says lowering is on once it is.
    @Test func theClinicalNoteKnowsAboutLowering() throws {
        for (name, expected) in [
            ("iec-s2.rx", "Frequency lowering ('lowering-right:' in the prescription"),
            ("steep-lowering.rx", "Frequency lowering is on (lowering-right, lowering-left): these sounds play lower down"),
        ] {
            let rx = try Self.prescription(name)
            let note = try #require(ClinicalNote.text(rx, deliveries: CompressorFitting.deliveries(rx, trusted: false)))
            #expect(note.contains(expected), "\(name): \(note)")
        }
    }

    /// |X[k]| of `x` (a power of two) through a Hann window, FFTW.
    static func magnitudes(_ x: [Float]) -> [Double] {
        let n = x.count
        let fft = RealFFT(length: n, planning: .estimate)
        let input = RealFFT.allocateReal(n)
        let output = RealFFT.allocateComplex(n / 2 + 1)
        defer {
            RealFFT.free(input)
            RealFFT.free(output)
        }
        for t in 0..<n { input[t] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(t) / Double(n))) * x[t] }
        fft.forward(input, output)
        return (0...(n / 2)).map { hypot(Double(output[2 * $0]), Double(output[2 * $0 + 1])) }
    }
}
