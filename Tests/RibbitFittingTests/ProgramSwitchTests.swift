import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSignals
import RibbitTestSupport
import Testing

/// A volume or program change as the daemon makes it (a program: a new compressor plan published
/// to the running engine; a volume: the engine's trim), on a steady tone: no click, and the
/// volume moves the level by what it says.
/// The same as the daemon's test without JACK, so no xrun can blur it.
@Suite struct ProgramSwitchTests {
    @Test func volumeAndProgramChangesCrossfadeWithoutAClick() throws {
        let rx = try Prescription.parse(Array(try Data(contentsOf: TestPaths.prescription("camfit-sloping.rx"))))
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        let g = fitting.geometry
        // As a test box plays it: a steady tone is steady noise to `SteadyNoiseDetector`, whose
        // slow level reads a tone up to a dB off the fast one's and takes over during the
        // first second (0.56 dB of the 6 read as measured over 2 s); the volume is what is measured.
        func plan(_ program: Program) -> CompressorPlan {
            fitting.compressorPlan(ears: [.left, .right], trusted: false, calibration: .uncalibrated, program: program, adaptive: false)
        }
        let engine = try OverlapSaveEngine(
            playing: fitting.processing(ears: [.left, .right], trusted: false, calibration: .uncalibrated).filters,
            compressor: plan(.quiet), geometry: g, sampleRate: 48000, blockSize: 256)
        // 1 kHz at 60 dB SPL (uncalibrated), 1 s per setting: quiet, quiet +6 dB, music +6 dB, noisy +6 dB.
        let amplitude = 0.01 * 2.0.squareRoot()
        let tone = Signals.sine(count: 48000, frequencyHz: 1000, sampleRate: 48000, amplitude: amplitude)
        var out: [Float] = []
        var playing = Program.quiet
        for (program, volume) in [(Program.quiet, 0.0), (.quiet, 6), (.music, 6), (.noisy, 6)] {
            if program != playing { try engine.publish(plan: plan(program)) }
            playing = program
            engine.setTrim(dB: fitting.trimDB(volumeDB: volume))
            out += engine.process([tone, tone])[0]
        }
        func rms(_ range: Range<Int>) -> Double {
            10 * log10(out[range].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(range.count))
        }
        let step = rms(84000..<96000) - rms(36000..<48000)
        #expect(abs(step - 6) < 0.5, "the volume moved the level by \(step) dB")
        let settled = out[24000...]
        let peak = Double(settled.map { abs($0) }.max()!)
        let steepest = Double(zip(settled, settled.dropFirst()).map { abs($1 - $0) }.max()!)
        #expect(steepest <= peak * 2 * .pi * 1000 / 48000 * 1.02, "a step of \(steepest), peak \(peak)")
    }

    /// The prescription's `volume-range` bounds the trim: +20 asked of a range of 4 dB trims
    /// by 4, and the design (gains, maxima, output limits) does not move.
    @Test func theVolumeStaysInThePrescriptionsRange() throws {
        var rx = try Prescription.parse(Array(try Data(contentsOf: TestPaths.prescription("camfit-sloping.rx"))))
        rx.volumeRangeDB = 4
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        func plan(_ volume: Double) -> CompressorPlan {
            fitting.compressorPlan(ears: [.left, .right], trusted: false, calibration: .uncalibrated, volumeDB: volume)
        }
        let (flat, loud, soft) = (plan(0), plan(20), plan(-20))
        #expect(flat.trimDB == 0 && loud.trimDB == 4 && soft.trimDB == -4)
        #expect(loud.settings == flat.settings && soft.settings == flat.settings)
    }
}
