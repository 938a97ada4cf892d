import Foundation
import RibbitMeasure
import RibbitSignals
import RibbitTestSupport
import Testing

@testable import RibbitDSP
@testable import RibbitFitting
@testable import RibbitPrescription

func loadSample(_ name: String) throws -> Prescription {
    try Prescription.parse(Array(try Data(contentsOf: TestPaths.prescription(name))))
}

let samplePrescriptions = [
    "normal-hearing.rx", "mild-presbycusis.rx", "moderate-flat.rx", "moderate-flat-music.rx", "ski-slope.rx",
    "asymmetric.rx", "flat.rx",
]

/// The audiometric frequencies where gain accuracy is promised.
let checkedFrequencies: [Double] = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000]

/// White noise through the prescription's stereo engine; returns the worst |measured - target|
/// in dB over both ears and the checked frequencies, and the engine for its counters.
func worstGainError(_ rx: Prescription, sampleRate: Double, geometry: EngineGeometry? = nil) throws
    -> (errorDB: Double, at: String, engine: OverlapSaveEngine)
{
    let fitting = try Fitting(prescription: rx, sampleRate: sampleRate, geometry: geometry)
    let engine = try OverlapSaveEngine(
        geometry: fitting.geometry, sampleRate: sampleRate, filters: fitting.filterSet(ears: [.left, .right]), blockSize: 1024)
    let frames = Int(sampleRate) * 6
    // -60 dBFS RMS keeps even +50 dB of gain below the limiter's knee: this measures the filter.
    let input = [Signals.whiteNoise(count: frames, rms: 0.001, seed: 11), Signals.whiteNoise(count: frames, rms: 0.001, seed: 12)]
    let output = engine.process(input)
    var worst = (0.0, "")
    for (channel, ear) in [Ear.left, .right].enumerated() {
        let spectra = Spectra.crossSpectra(input: input[channel], output: output[channel], sampleRate: sampleRate)
        for f in checkedFrequencies {
            let error = abs(spectra.gainDB(atHz: f) - fitting.targetGainDB(for: ear, atHz: f))
            if error > worst.0 { worst = (error, "\(ear) \(Int(f)) Hz") }
        }
    }
    return (worst.0, worst.1, engine)
}

@Suite struct SignalQualityTests {
    @Test(arguments: samplePrescriptions)
    func gainMatchesEverySamplePrescriptionWithin2dB(_ name: String) throws {
        let (error, at, engine) = try worstGainError(try loadSample(name), sampleRate: 48000)
        #expect(error <= 2, "worst \(error) dB at \(at)")
        #expect(engine.counters.limitedSamples == 0)
    }

    @Test(arguments: [44100.0, 96000])
    func gainMatchesAtOtherSampleRates(_ sampleRate: Double) throws {
        for name in ["ski-slope.rx", "asymmetric.rx"] {
            let (error, at, _) = try worstGainError(try loadSample(name), sampleRate: sampleRate)
            #expect(error <= 2, "\(name): worst \(error) dB at \(at)")
        }
    }

    /// A filter that is too short for the curve must fail the same check: the test can fail.
    @Test func theGainCheckCatchesAFilterTooShortForTheCurve() throws {
        let short = EngineGeometry(fftLength: 256, hopSize: 64, filterLength: 31)
        let (error, _, _) = try worstGainError(try loadSample("ski-slope.rx"), sampleRate: 48000, geometry: short)
        #expect(error > 2)
    }

    @Test func flatPrescriptionIsAnExactDelay() throws {
        let fitting = try Fitting(prescription: try loadSample("flat.rx"), sampleRate: 48000)
        let engine = try OverlapSaveEngine(
            geometry: fitting.geometry, sampleRate: 48000, filters: fitting.filterSet(ears: [.left, .right]), blockSize: 64)
        let x = [Signals.whiteNoise(count: 48000, rms: 0.05, seed: 21), Signals.whiteNoise(count: 48000, rms: 0.05, seed: 22)]
        let y = engine.process(x)
        for c in 0..<2 {
            #expect(Reference.residualDB(y[c], Reference.delayed(x[c], by: engine.latencyFrames)) <= -90)
        }
    }

    @Test(arguments: samplePrescriptions)
    func impulsePeakIsAtTheReportedLatency(_ name: String) throws {
        let fitting = try Fitting(prescription: try loadSample(name), sampleRate: 48000)
        let engine = try OverlapSaveEngine(
            geometry: fitting.geometry, sampleRate: 48000, filters: fitting.filterSet(ears: [.left, .right]), blockSize: 64)
        let impulse = Signals.impulse(count: 4096, at: 1000, amplitude: 0.001)
        let y = engine.process([impulse, impulse])
        for c in 0..<2 {
            let peak = y[c].indices.max { abs(y[c][$0]) < abs(y[c][$1]) }!
            #expect(peak - 1000 == engine.latencyFrames)
        }
    }

    @Test func sineThroughTheSteepestSlopeHasTHDPlusNoiseBelowMinus60dB() throws {
        for name in ["ski-slope.rx", "mild-presbycusis.rx"] {
            let fitting = try Fitting(prescription: try loadSample(name), sampleRate: 48000)
            let engine = try OverlapSaveEngine(
                geometry: fitting.geometry, sampleRate: 48000, filters: fitting.filterSet(ears: [.left, .right]), blockSize: 64)
            let sine = Signals.sine(count: 48000, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01)
            let y = engine.process([sine, sine])
            for c in 0..<2 {
                let thdn = Tone.thdPlusNoiseDB(y[c][4800...], frequencyHz: 1000, sampleRate: 48000)
                #expect(thdn <= -60, "\(name) channel \(c): \(thdn) dB")
            }
        }
    }

    @Test func ceilingHoldsForFullScaleNoiseThroughTheMaximumGain() throws {
        let text = """
            RIBBIT-RX 1
            name: Maximum gain
            env: quiet
            rule: explicit
            gain-left: 250=50 500=50 1000=50 2000=50 4000=50 8000=50
            gain-right: 250=50 500=50 1000=50 2000=50 4000=50 8000=50
            lowpass: none
            max-output: -1

            """
        let rx = try Prescription.parse(Array(text.utf8))
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        let engine = try OverlapSaveEngine(
            geometry: fitting.geometry, sampleRate: 48000, filters: fitting.filterSet(ears: [.left, .right]), blockSize: 64)
        let noise = Signals.uniformNoise(count: 5 * 48000, peak: 1, seed: 31)
        let y = engine.process([noise, Signals.uniformNoise(count: 5 * 48000, peak: 1, seed: 32)])
        let ceiling = Float(pow(10, -1.0 / 20))
        let peak = y.flatMap { $0 }.map(abs).max()!
        #expect(peak <= ceiling)
        #expect(peak > ceiling * 0.7)  // it is loud, just not louder than allowed
    }

    @Test func anEarTheRxLeavesOutIsUnprocessed() throws {
        let text = "RIBBIT-RX 1\nname: Left only\nenv: quiet\nleft: 500=40 1000=50 2000=60 4000=70\n"
        let fitting = try Fitting(prescription: try Prescription.parse(Array(text.utf8)), sampleRate: 48000)
        #expect(fitting.curve(for: .right) == .unity)
        #expect(fitting.curve(for: .left) != .unity)
    }
}
