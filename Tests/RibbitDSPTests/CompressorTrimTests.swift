import Foundation
import RibbitSignals
import Testing

@testable import RibbitDSP

/// The wearer's volume as a trim on the running compressor: against `capped` (an independent
/// form of "at most the maximum at any level", which moves the knee), and through the engine:
/// the output moves by the step up to the maximum, and glides there.
extension CompressorTests {
    @Test func aTrimUnderAMaximumIsTheCappedBandAtEveryLevel() {
        var generator = SeededRandom(seed: 29)
        for _ in 0..<500 {
            let ratio = Bool.random(using: &generator) ? 1 : Double.random(in: 1.2...4, using: &generator)
            let knee = Double.random(in: 30...70, using: &generator)
            let band = CompressorBand(
                centreHz: 1000, gainDB: Double.random(in: 0...50, using: &generator), kneeDBSPL: knee, ratio: ratio,
                expansionKneeDBSPL: knee - Double.random(in: 0...30, using: &generator),
                expansionRatio: Double.random(in: 1...3, using: &generator), limitDBSPL: Double.random(in: 90...130, using: &generator))
            let maximum = Double.random(in: 10...60, using: &generator)
            let trim = Double.random(in: -12...12, using: &generator)
            var trimmed = band
            trimmed.gainDB += trim
            let capped = trimmed.capped(atDB: maximum)
            guard capped.kneeDBSPL < 200 else { continue }  // `capped` stops moving the knee there
            var running = band
            running.maximumGainDB = maximum
            for level in stride(from: 0.0, through: 130, by: 0.5) {
                #expect(
                    abs(running.gainDB(inputDBSPL: level, trimDB: trim) - capped.gainDB(inputDBSPL: level)) < 1e-9,
                    "\(band) max \(maximum) trim \(trim) at \(level)")
            }
        }
    }

    /// A 1 kHz tone at 50 dB SPL (between the knees: the band's flat gain): +6 dB of trim lifts
    /// the output 6 dB, gliding at `trimStepDB` a hop, never faster; a trim past the band's
    /// maximum stops at the maximum; the digital gain the config computes agrees; a NaN trim
    /// is ignored; a new config starts at the trim asked for, with no glide.
    @Test func aTrimMovesTheOutputByTheStepUpToTheMaximumAndGlides() throws {
        func band(_ hz: Double) -> CompressorBand {
            CompressorBand(
                centreHz: hz, gainDB: 20, kneeDBSPL: 55, ratio: 2, expansionKneeDBSPL: 30, expansionRatio: 1, limitDBSPL: 110,
                maximumGainDB: 28)
        }
        let cfg = config([settings(band)], calibration: headroom)
        let engine = try engine(cfg)
        let hop = geometry.hopSize
        let amplitude = Float(pow(10, (50 - headroom.inputDBSPLAtFullScale) / 20))
        // Whole periods of 1 kHz at 48 kHz: 48 samples; one hop's level is read over 96.
        var phase = 0
        func levelAfter(hops: Int) -> Double {
            var last: [Float] = []
            for _ in 0..<hops {
                let input = (0..<hop).map { amplitude * Float(sin(2 * Double.pi * 1000 * Double(phase + $0) / sampleRate)) }
                phase += hop
                last = Array((last + engine.process([input])[0]).suffix(96))
            }
            return rmsDB(last[...]) - 20 * log10(Double(amplitude) / sqrt(2))
        }
        let before = levelAfter(hops: 1500)  // settled
        engine.setTrim(dB: 6)
        let early = levelAfter(hops: 10)
        let after = levelAfter(hops: 300)
        #expect(abs(after - before - 6) < 0.1, "\(before) -> \(after) dB")
        // 10 hops of the step, and the filter's delay: at most 2 dB of the 6 yet.
        #expect(early - before < 10 * Double(CompressorStage.trimStepDB) + 0.1, "\(before) -> \(early) dB after 10 hops")
        engine.setTrim(dB: 20)  // 40 dB asked, the band's maximum is 28
        let capped = levelAfter(hops: 1000)
        #expect(abs(capped - before - 8) < 0.1, "\(before) -> \(capped) dB: the maximum is 8 dB above the gain")
        engine.setTrim(dB: .nan)
        #expect(abs(levelAfter(hops: 100) - capped) < 0.1, "a NaN trim changes nothing")
        engine.setTrim(dB: -6)
        try engine.publish(config([settings(band)], calibration: headroom))  // a new config: it fades in at -6 at once
        #expect(abs(levelAfter(hops: 20) - before + 6) < 0.1, "the new config started at the trim")
        let b = try #require(centres.firstIndex(of: 1000))
        let lifted =
            cfg.digitalGainDB(channel: 0, band: b, levelDBSPL: 50, trimDB: 20) - cfg.digitalGainDB(channel: 0, band: b, levelDBSPL: 50)
        #expect(abs(lifted - 8) < 1e-4, "the config's curve: \(lifted) dB")
    }
}
