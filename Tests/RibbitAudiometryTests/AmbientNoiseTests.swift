import Foundation
import RibbitAudiometry
import RibbitPrescription
import RibbitSignals
import Testing

/// The octave-band meter against physics (sines, white and pink noise in closed form, leakage)
/// and the noise check's verdicts against ANSI S3.1's limits.
@Suite struct AmbientNoiseTests {
    static let sampleRate = 48_000.0

    /// Fed in 256-sample blocks, as the daemon's control thread gets them.
    static func levels(_ signal: [Float], windowSeconds: Double = 0.25) -> [Int: Double] {
        var meter = OctaveBandMeter(sampleRate: sampleRate, windowSeconds: windowSeconds)
        var start = 0
        while start < signal.count {
            let end = min(start + 256, signal.count)
            signal[start..<end].withUnsafeBufferPointer { meter.append($0) }
            start = end
        }
        return meter.levelsDBFS()
    }

    @Test func sinesAtBandCentresReadTheirLevelWithinHalfADecibel() {
        var worst = 0.0
        defer { print("Sines at the band centres, 0 and -40 dBFS: worst error \(String(format: "%.3f", worst)) dB") }
        for band in OctaveBandMeter.bandsHz {
            for levelDBFS in [0.0, -40.0] {
                let sine = Signals.sine(
                    count: Int(Self.sampleRate), frequencyHz: Double(band), sampleRate: Self.sampleRate, amplitude: pow(10, levelDBFS / 20))
                let read = Self.levels(sine)[band]!
                worst = max(worst, abs(read - levelDBFS))
                #expect(abs(read - levelDBFS) <= 0.5, "\(band) Hz at \(levelDBFS) dBFS read \(read)")
            }
        }
    }

    /// A 1 kHz tone in the 250 and 4000 Hz bands (two octaves away): at least 30 dB down.
    @Test func aToneLeaksLittleIntoBandsTwoOctavesAway() {
        let sine = Signals.sine(count: Int(Self.sampleRate), frequencyHz: 1000, sampleRate: Self.sampleRate, amplitude: 1)
        let read = Self.levels(sine)
        print("1 kHz full-scale sine, band levels dBFS:", OctaveBandMeter.bandsHz.map { "\($0): \(String(format: "%.1f", read[$0]!))" })
        #expect(read[1000]! - read[250]! >= 30)
        #expect(read[1000]! - read[4000]! >= 30)
        #expect(read[1000]! - read[500]! >= 10)
    }

    /// White noise of variance s^2 has s^2 / (fs/2) per Hz: an octave band holds
    /// s^2 (f sqrt 2 - f / sqrt 2) / (fs/2), read as 10 log10(2 x that) sine-referred. A long
    /// window (10 s) so the estimate's own spread (1/sqrt(B T)) stays well under 1 dB.
    @Test func whiteNoiseBandLevelsMatchTheClosedForm() {
        let rms = 0.1
        let noise = Signals.whiteNoise(count: Int(Self.sampleRate * 10), rms: rms, seed: 61260)
        let read = Self.levels(noise, windowSeconds: 10)
        for band in OctaveBandMeter.bandsHz {
            let width = Double(band) * (2.0.squareRoot() - 1 / 2.0.squareRoot())
            let expected = 10 * log10(2 * rms * rms * width / (Self.sampleRate / 2))
            print(
                "white noise, \(band) Hz band: read \(String(format: "%.2f", read[band]!)), closed form \(String(format: "%.2f", expected)) dBFS"
            )
            #expect(abs(read[band]! - expected) <= 1, "\(band) Hz")
        }
    }

    /// Pink noise from white through Paul Kellet's pinking filter (six one-pole sections and a
    /// direct path, within 0.05 dB of 1/f above 9 Hz): the expected band power is the integral
    /// of the filter's |H(f)|^2 times the white density over the band's edges.
    @Test func pinkNoiseBandLevelsMatchTheClosedForm() {
        let rms = 0.05
        let white = Signals.whiteNoise(count: Int(Self.sampleRate * 10), rms: rms, seed: 1260)
        let poles = [0.99886, 0.99332, 0.96900, 0.86650, 0.55000, -0.7616]
        let gains = [0.0555179, 0.0750759, 0.1538520, 0.3104856, 0.5329522, -0.0168980]
        var sections = [Double](repeating: 0, count: 6)
        var previous = 0.0
        let pink = white.map { sample -> Float in
            let x = Double(sample)
            for index in 0..<6 { sections[index] = poles[index] * sections[index] + gains[index] * x }
            let y = sections.reduce(0, +) + 0.5362 * x + 0.115926 * previous
            previous = x
            return Float(y)
        }
        func powerGain(_ frequency: Double) -> Double {
            let omega = 2 * Double.pi * frequency / Self.sampleRate
            var real = 0.5362 + 0.115926 * cos(omega)
            var imaginary = -0.115926 * sin(omega)
            for index in 0..<6 {
                // g / (1 - a e^-jw)
                let denominatorReal = 1 - poles[index] * cos(omega)
                let denominatorImaginary = poles[index] * sin(omega)
                let magnitude = denominatorReal * denominatorReal + denominatorImaginary * denominatorImaginary
                real += gains[index] * denominatorReal / magnitude
                imaginary -= gains[index] * denominatorImaginary / magnitude
            }
            return real * real + imaginary * imaginary
        }
        let read = Self.levels(pink, windowSeconds: 10)
        var levels: [Double] = []
        for band in OctaveBandMeter.bandsHz {
            let (low, high) = (Double(band) / 2.0.squareRoot(), Double(band) * 2.0.squareRoot())
            let steps = 2000
            var integral = 0.0
            for step in 0..<steps {
                let f = low + (Double(step) + 0.5) * (high - low) / Double(steps)
                integral += powerGain(f) * (high - low) / Double(steps)
            }
            let expected = 10 * log10(2 * rms * rms * integral / (Self.sampleRate / 2))
            levels.append(read[band]!)
            print(
                "pink noise, \(band) Hz band: read \(String(format: "%.2f", read[band]!)), closed form \(String(format: "%.2f", expected)) dBFS"
            )
            #expect(abs(read[band]! - expected) <= 1, "\(band) Hz")
        }
        // And pink it is: every octave holds the same power.
        #expect(levels.max()! - levels.min()! <= 1.5)
    }

    @Test func theWindowForgetsWhatWasLoudBefore() {
        var meter = OctaveBandMeter(sampleRate: Self.sampleRate)
        meter.append(Signals.sine(count: 24_000, frequencyHz: 1000, sampleRate: Self.sampleRate, amplitude: 1))
        #expect(abs(meter.levelsDBFS()[1000]!) < 0.5)
        meter.append([Float](repeating: 0, count: 14_400))  // 0.3 s of silence: more than the window
        #expect(meter.levelsDBFS()[1000]! < -100)
    }

    @Test func maximumPermissibleNoiseFollowsTheTransducer() {
        let supraAural = MaximumPermissibleAmbientNoise.octaveBandDBSPL(.tdh39)
        #expect(supraAural == [125: 39, 250: 25, 500: 21, 1000: 26, 2000: 34, 4000: 37, 8000: 37])
        #expect(MaximumPermissibleAmbientNoise.octaveBandDBSPL(.tdh39, lowestTestFrequencyHz: 125)[125] == 35)
        #expect(MaximumPermissibleAmbientNoise.octaveBandDBSPL(.er3a)[1000] == 47)
        #expect(MaximumPermissibleAmbientNoise.octaveBandDBSPL(.consumer) == supraAural)
        let hda200 = MaximumPermissibleAmbientNoise.octaveBandDBSPL(.hda200)
        // A circumaural earphone lets more noise in the room than a supra-aural, fewer than an insert at low frequencies.
        for band in OctaveBandMeter.bandsHz { #expect(hda200[band]! > supraAural[band]!) }
        #expect(hda200[250]! < MaximumPermissibleAmbientNoise.octaveBandDBSPL(.er3a)[250]!)
        #expect(AmbientNoiseCheck.band(containing: 3000) == 4000)
        #expect(AmbientNoiseCheck.band(containing: 6000) == 8000)
        #expect(AmbientNoiseCheck.band(containing: 250) == 250)
        #expect(AmbientNoiseCheck.band(containing: 1000) == 1000)
    }

    @Test func verdicts() {
        let check = AmbientNoiseCheck(transducer: .tdh39)
        let quiet = Dictionary(uniqueKeysWithValues: OctaveBandMeter.bandsHz.map { ($0, 15.0) })
        let quietVerdict = check.verdict(bandLevelsDBSPL: quiet, presentationDBHL: 0, testFrequencyHz: 1000)
        #expect(!quietVerdict.tooLoud)
        #expect(quietVerdict.testBandDBSPL == 15)

        var rumble = quiet
        rumble[250] = 60
        let loud = check.verdict(bandLevelsDBSPL: rumble, presentationDBHL: 20, testFrequencyHz: 4000)
        #expect(loud.tooLoud)
        #expect(loud.worstBandHz == 250)
        #expect(loud.worstBandDBSPL == 60)
        #expect(loud.worstBandLimitDBSPL == 25 + 20)
        #expect(loud.testBandDBSPL == 15)

        // The limits rise with the level presented: 60 dB SPL at 250 Hz does not mask a tone at 40 dB HL.
        let louderTone = check.verdict(bandLevelsDBSPL: rumble, presentationDBHL: 40, testFrequencyHz: 250)
        #expect(!louderTone.tooLoud)
        #expect(louderTone.worstBandLimitDBSPL == 65)
        #expect(louderTone.testBandDBSPL == 60)
        // Below 0 dB HL the limits stay those for 0 dB HL.
        #expect(check.verdict(bandLevelsDBSPL: quiet, presentationDBHL: -10, testFrequencyHz: 1000).worstBandLimitDBSPL >= 21)
        #expect(check.verdict(bandLevelsDBSPL: rumble, presentationDBHL: -10, testFrequencyHz: 1000).worstBandLimitDBSPL == 25)
        // Insert earphones shut out more: the same rumble passes at 20 dB HL.
        #expect(!AmbientNoiseCheck(transducer: .er3a).verdict(bandLevelsDBSPL: rumble, presentationDBHL: 20, testFrequencyHz: 4000).tooLoud)
    }

    /// The cost on the daemon's control thread: seconds of CPU per second of 48 kHz audio.
    @Test func costPerSecondOfAudio() {
        let seconds = 10
        let noise = Signals.whiteNoise(count: Int(Self.sampleRate), rms: 0.1, seed: 9)
        var meter = OctaveBandMeter(sampleRate: Self.sampleRate)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<seconds {
                var start = 0
                while start < noise.count {
                    noise[start..<min(start + 256, noise.count)].withUnsafeBufferPointer { meter.append($0) }
                    start += 256
                }
                _ = meter.levelsDBFS()
            }
        }
        let perSecond = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "OctaveBandMeter: \(String(format: "%.2f", perSecond / Double(seconds) * 1000)) ms of CPU per second of 48 kHz audio (this build)"
        )
        #expect(perSecond / Double(seconds) < 0.2)
    }
}
