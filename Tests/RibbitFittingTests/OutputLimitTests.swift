import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSignals
import RibbitTestSupport
import Testing

/// The output limits in dB SPL as the daemon and `process` play them (`Fitting.processing`:
/// the filters' ceiling and the compressor), through a calibration, on the real engine.
@Suite struct OutputLimitTests {
    let rx: Prescription

    init() throws {
        rx = try Prescription.parse(
            Array(
                """
                RIBBIT-RX 2
                name: Strong sloping
                env: quiet
                rule: camfit
                left: 250=20 500=30 1000=40 2000=50 3000=55 4000=55 6000=50 8000=45
                right: 250=20 500=30 1000=40 2000=50 3000=55 4000=55 6000=50 8000=45
                ucl-right: 500=95 1000=95 2000=90 4000=90

                """.utf8))
    }

    /// Loud headphones: 0 dBFS plays at 125 dB SPL; the microphone reads 0 dBFS at 100.
    let loud = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [125, 125])

    func engine(_ calibration: Calibration) throws -> (OverlapSaveEngine, FilterSet, CompressorPlan) {
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        let (filters, plan) = fitting.processing(ears: [.left, .right], trusted: false, calibration: calibration)
        let geometry = fitting.geometry
        let engine = try OverlapSaveEngine(playing: filters, compressor: plan, geometry: geometry, sampleRate: 48000, blockSize: 64)
        return (engine, filters, plan)
    }

    /// Unsigned and compressing: the OTC cap of 117 dB SPL is the sample ceiling through the
    /// calibration (117 - 125 = -8 dBFS), and no sample of full-scale noise, a square wave,
    /// impulses, DC or NaN/Inf gets above it in either ear.
    @Test func noSampleIsAboveTheOutputLimitThroughTheCalibration() throws {
        let ceiling = CompressorFitting.ceilingDBFS(rx, ears: [.left, .right], trusted: false, calibration: loud)
        // The right ear's loudest band limit (from its UCLs) is below the OTC cap, and the one
        // ceiling holds both ears: it is the lower.
        let loudest = [Ear.left, .right].map { CompressorFitting.settings(rx, ear: $0, trusted: false)!.bands.map(\.limitDBSPL).max()! }
        #expect(loudest[0] == CompressorFitting.otcCompressionLimitDBSPL && loudest[1] < loudest[0])
        #expect(ceiling == loudest[1] - 125)
        let limit = Float(pow(10, ceiling / 20))
        let n = 24000
        var square = [Float](repeating: 0, count: n)
        for i in square.indices { square[i] = (i / 60) % 2 == 0 ? 1 : -1 }
        var impulses = [Float](repeating: 0, count: n)
        for i in stride(from: 100, to: n, by: 997) { impulses[i] = 1 }
        var hostile = Signals.whiteNoise(count: n, rms: 0.5, seed: 3)
        for i in stride(from: 50, to: n, by: 301) { hostile[i] = i % 2 == 0 ? .nan : .infinity }
        let signals: [(String, [Float])] = [
            ("full-scale noise", Signals.uniformNoise(count: n, peak: 1, seed: 2)), ("square", square), ("impulses", impulses),
            ("DC", [Float](repeating: 1, count: n)), ("NaN and Inf", hostile),
        ]
        for (name, signal) in signals {
            let (engine, _, _) = try engine(loud)
            let out = engine.process([signal, signal])
            for ear in out {
                let peak = ear.map { abs($0) }.max()!
                #expect(ear.allSatisfy { $0.isFinite }, "\(name)")
                #expect(peak <= limit, "\(name): peak \(20 * log10(peak)) dBFS = \(125 + 20 * log10(Double(peak))) dB SPL over 117")
            }
        }
    }

    /// The UCL's band limit holds a loud steady tone in that band: 2 kHz at 100 dB SPL in the
    /// right ear (UCL 90 dB HL) plays at the band's limit, UCL + RETSPL - 5 dB, within 1.5 dB
    /// and never above it by more than that; the left ear (no UCL) plays louder.
    @Test func aLoudToneStopsAtTheUCLBandLimit() throws {
        let roomy = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [125, 125])
        let (engine, _, _) = try engine(roomy)
        let limit = try #require(CompressorFitting.settings(rx, ear: .right, trusted: false)?.bands.first { $0.centreHz == 2000 })
            .limitDBSPL
        let input = Signals.sine(count: 48000, frequencyHz: 2000, sampleRate: 48000, amplitude: 1)  // 100 dB SPL
        let out = engine.process([input, input])
        func splDB(_ x: ArraySlice<Float>) -> Double {
            10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)) + 10 * log10(2.0) + 125
        }
        let right = splDB(out[1][24000...])
        let left = splDB(out[0][24000...])
        print(String(format: "2 kHz at 100 dB SPL: right %.1f dB SPL (UCL band limit %.1f), left %.1f", right, limit, left))
        #expect(abs(right - limit) <= 1.5)
        #expect(right <= limit + 0.5, "bands sharing 2 kHz must not add up above the limit")
        #expect(left > right + 3, "without a UCL the left ear stops at the OTC cap, higher")
    }

    /// The headphones' measured response (re 1 kHz) is taken out: where they play 6 dB louder,
    /// the engine sends 6 dB less, so the ear gets the prescribed level; at 1 kHz nothing
    /// changes; and the sample ceiling allows for the loudest frequency.
    @Test func theHeadphonesResponseIsTakenOut() throws {
        let flat = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [100, 100])
        var bright = flat
        bright.outputResponseDB = [[2000: 0, 4000: 6], [2000: 0, 4000: 6]]
        func digitalDB(_ calibration: Calibration, hz: Double) throws -> Double {
            let (engine, _, _) = try engine(calibration)
            let tone = Signals.sine(count: 24000, frequencyHz: hz, sampleRate: 48000, amplitude: 0.01)  // 57 dB SPL
            let out = engine.process([tone, tone])[0][12000...]
            return 10 * log10(out.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(out.count))
        }
        let at4k = try digitalDB(bright, hz: 4000) - digitalDB(flat, hz: 4000)
        let at1k = try digitalDB(bright, hz: 1000) - digitalDB(flat, hz: 1000)
        print(String(format: "response +6 dB at 4 kHz: output %.2f dB at 4 kHz, %.2f dB at 1 kHz", at4k, at1k))
        #expect(abs(at4k + 6) < 0.5)
        #expect(abs(at1k) < 0.1)
        #expect(abs(bright.responseDB(channel: 0, atHz: 2000 * 2.0.squareRoot()) - 3) < 1e-9, "halfway on a log axis")
        let loudest = [Ear.left, .right].map { CompressorFitting.settings(rx, ear: $0, trusted: false)!.bands.map(\.limitDBSPL).max()! }
        let ceiling = CompressorFitting.ceilingDBFS(rx, ears: [.left, .right], trusted: false, calibration: bright)
        #expect(ceiling == min(rx.maxOutputDBFS, loudest.min()! - 106), "the limit less the loudest the phones play (100 + 6)")
    }
}

/// However the prescription, the volume and the calibration add up, no band's digital gain
/// goes past `Calibration.maximumDigitalGainDB`; a plausible calibration leaves it alone.
@Suite struct DigitalGainBoundTests {
    @Test func theTotalDigitalGainIsBounded() throws {
        let rx = try Prescription.parse(Array(try String(contentsOf: TestPaths.prescription("camfit-sloping.rx"), encoding: .utf8).utf8))
        let fitting = try Fitting(prescription: rx, sampleRate: 48000)
        // The most a plausible profile can add: the microphone's full scale at 135 dB SPL, the
        // headphones' at 80 (55 dB), plus the volume's +10.
        let extreme = Calibration(inputDBSPLAtFullScale: 135, outputDBSPLAtFullScale: [80, 80])
        let plan = fitting.compressorPlan(ears: [.left, .right], trusted: false, calibration: extreme, volumeDB: 10)
        for (channel, ear) in [Ear.left, .right].enumerated() {
            let shape = fitting.curve(for: ear).gain
            for band in plan.settings[channel].bands {
                let insertion = min(band.gainDB + plan.trimDB, band.maximumGainDB) + shape.gainDB(atHz: band.centreHz)
                let digital = extreme.digitalGainDB(insertionGainDB: insertion, channel: channel, atHz: band.centreHz)
                #expect(digital <= Calibration.maximumDigitalGainDB + 1e-9, "\(ear) \(band.centreHz) Hz: \(digital) dB")
            }
        }
        // Uncalibrated (insertion gain = digital gain) the digital bound is far away: the volume's
        // 10 dB (the plan's trim) moves every band's curve by exactly 10, up to the maximum gain
        // of +50 dB; the design itself is the same at every volume.
        let plain = fitting.compressorPlan(ears: [.left, .right], trusted: false, calibration: .uncalibrated, volumeDB: 10)
        let atZero = fitting.compressorPlan(ears: [.left, .right], trusted: false, calibration: .uncalibrated, volumeDB: 0)
        #expect(plain.trimDB == 10 && atZero.trimDB == 0)
        var untrimmed = plain
        untrimmed.trimDB = 0
        #expect(untrimmed == atZero, "a volume is a trim, not a new design")
        for (channel, ear) in [Ear.left, .right].enumerated() {
            let shape = fitting.curve(for: ear).gain
            for (var a, var b) in zip(plain.settings[channel].bands, atZero.settings[channel].bands) {
                (a.limitDBSPL, b.limitDBSPL) = (200, 200)
                let s = shape.gainDB(atHz: a.centreHz)
                for level in stride(from: 40.0, through: 100, by: 0.5) where level > a.expansionKneeDBSPL {
                    let raised = b.gainDB(inputDBSPL: level, trimDB: atZero.trimDB) + s + 10
                    #expect(
                        abs(a.gainDB(inputDBSPL: level, trimDB: plain.trimDB) + s - min(raised, Prescription.maxGainDB)) < 1e-9,
                        "\(ear) \(a.centreHz) Hz at \(level)")
                }
            }
        }
    }

    /// The volume is the prescription's: kept for it and clamped to its range; for another
    /// prescription its defaults.
    @Test func theVolumeBelongsToItsPrescription() throws {
        var narrow = Prescription(name: "N", environment: "quiet", thresholds: [.left: [1000: 40]], maxOutputDBFS: -1)
        narrow.version = 2
        narrow.volumeRangeDB = 6
        let other = Prescription(name: "O", environment: "quiet", thresholds: [.left: [1000: 50]], maxOutputDBFS: -1)
        #expect(narrow.fingerprint != other.fingerprint && narrow.fingerprint == narrow.fingerprint && narrow.fingerprint.count == 16)
        let set = Listening(program: .music, volumeDB: 1e308, prescription: narrow.fingerprint)
        #expect(set.belonging(to: narrow) == Listening(program: .music, volumeDB: 6, prescription: narrow.fingerprint))
        #expect(set.belonging(to: other) == Listening(prescription: other.fingerprint))
        var nan = set
        nan.volumeDB = .nan
        #expect(nan.belonging(to: narrow).volumeDB == 0)
    }
}
