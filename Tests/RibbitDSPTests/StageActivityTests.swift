import Foundation
import RibbitSignals
import Testing

@testable import RibbitDSP

/// What `status` says each stage did (`InputLevelTotals.activity`), read from the totals the
/// audio thread keeps, on signals whose answer is known: a steady tone (the compressor's gain
/// against its knee's in closed form), steady noise (the gain follows speech, noise reduction
/// acts), and a tone between two centres (the output limit on the combined output acts).
extension SteadyNoiseDetectorTests {
    /// The activity over the signal's last second.
    func lastSecond(_ cfg: CompressorConfig, _ x: [Float]) -> StageActivity? {
        let hops = (x.count - geometry.fftLength) / geometry.hopSize
        let secondHops = Int(sampleRate) / geometry.hopSize
        var hop = 0
        var start = InputLevelTotals()
        var end = InputLevelTotals()
        driveHopByHop(cfg, x, geometry: geometry) { stage, _ in
            hop += 1
            if hop == hops - secondHops { start = stage.totals.pointee }
            end = stage.totals.pointee
        }
        return end.activity(since: start, bands: centres.count, channels: 1, inputDBSPLAtFullScale: 100)
    }

    @Test func aSteadyToneIsCompressedAsItsCurveSays() throws {
        // 1 kHz at 70 dB SPL (a unit sine reads 100): 30 dB above the 40 dB SPL knee at ratio
        // 3, the gain stands (70 - 40) (1 - 1/3) = 20 dB under the knee's. No noise reduction,
        // no steady-noise detector: neither says it acted.
        let x = Signals.sine(count: Int(3 * sampleRate), frequencyHz: 1000, sampleRate: sampleRate, amplitude: pow(10, -30.0 / 20))
        let activity = try #require(lastSecond(config(steady: nil), x))
        print("1 kHz tone at 70 dB SPL: input \(activity.inputDBSPL[band]) dB SPL, compression \(activity.compressionDB[band]) dB")
        #expect(abs(activity.inputDBSPL[band] - 70) < 0.2)
        #expect(abs(activity.compressionDB[band] + 20) < 0.2)
        #expect(activity.followingSpeech.allSatisfy { $0 == 0 })
        #expect(activity.noiseReductionDB.allSatisfy { $0 == 0 })
    }

    @Test func inSteadyNoiseTheGainFollowsSpeechAndTheNoiseIsReduced() throws {
        // Noise at 55 dB SPL in the 1 kHz band with no words: after 6 s the band's floor is
        // the noise, so its gain follows the (slow) level of the whole second, and noise
        // reduction turns it down (at full strength by up to 15 dB).
        let cfg = config(steady: .standard, noiseReduction: .default)
        let x = Signals.whiteNoise(count: Int(6 * sampleRate), rms: noiseRMS(dBSPL: 55, cfg: cfg), seed: 31)
        let activity = try #require(lastSecond(cfg, x))
        print(
            "white noise, 55 dB SPL at 1 kHz: following speech \(activity.followingSpeech), noise reduction \(activity.noiseReductionDB) dB"
        )
        #expect(abs(activity.inputDBSPL[band] - 55) < 1)
        #expect(activity.followingSpeech[band] > 0.99)
        #expect(activity.noiseReductionDB[band] < -6)
        #expect(activity.noiseReductionDB.allSatisfy { $0 >= -15.01 })
        // The slow level of the noise: (55 - 40) (1 - 1/3) = 10 dB, within the level's ripple.
        #expect(abs(activity.compressionDB[band] + 10) < 1.5)
    }

    @Test func theOutputLimitSaysWhereItActed() throws {
        // A 1414 Hz tone between the 1 and 1.5 kHz centres, each band's own curve limited to
        // 75 dB SPL: the two bands' shares add up over the limit, so the limit on the combined
        // output lowers them (measured: 3.1 dB at 1.5 kHz); the bands the tone does not reach
        // are left alone.
        let ear = CompressorSettings(
            bands: centres.map {
                CompressorBand(
                    centreHz: $0, gainDB: 20, kneeDBSPL: 40, ratio: 1, expansionKneeDBSPL: -100, expansionRatio: 1, limitDBSPL: 75)
            }, attackMs: 5, releaseMs: 70)
        let cfg = CompressorConfig(
            settings: [ear], amplitude: [{ _ in 1 }], calibration: .uncalibrated, taps: geometry.filterLength,
            fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate)
        let x = Signals.sine(count: Int(3 * sampleRate), frequencyHz: 1414, sampleRate: sampleRate, amplitude: pow(10, -35.0 / 20))
        let activity = try #require(lastSecond(cfg, x))
        print("1414 Hz tone at 65 dB SPL, limit 75: lowered \(activity.outputLimitDB) dB")
        #expect(min(activity.outputLimitDB[4], activity.outputLimitDB[5]) < -1)
        #expect([0, 1, 2, 8, 9, 10].allSatisfy { activity.outputLimitDB[$0] == 0 })
        #expect(activity.outputLimitDB.allSatisfy { $0 <= 0 })
    }
}
