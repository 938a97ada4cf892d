import Foundation
import RibbitAudioFile
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitTestSupport
import Testing

/// What `ribbitd process` plays for three of the IEC 60118-15 standard audiograms (N3, N4, S2),
/// measured with band noise at the level each band has in LTASS speech at 50, 65 and 80 dB SPL:
/// the gain equals `CompressorFitting.delivery`'s delivered gain, min(target, maximum, output
/// limit), within 1.5 dB, and no sample passes the ceiling. Under nal-r (linear) every band and
/// level is measured; under camfit the bands the maximum gain caps (the capped curve is flat at
/// the maximum there, so the gain does not depend on how the detector reads noise rather than
/// speech). Headphones that play 0 dBFS at 125 dB SPL, so the samples' full scale is not what
/// limits (the uncalibrated 100 dB SPL would cut loud speech's peaks at the ceiling).
@Suite struct DeliveredGainCLITests {
    static let sampleRate = 48000.0
    /// One band's noise per segment, the bands one after another; the first `settle` of each
    /// segment is left out (the detectors' attack and the previous band's release).
    static let segmentSeconds = 1.0, settleSeconds = 0.4
    static let calibration = Calibration(inputDBSPLAtFullScale: 100, outputDBSPLAtFullScale: [125, 125])

    /// Third-octave noise around `centreHz` whose RMS is `levelDBSPL` through the input
    /// calibration (a full-scale sine reads `inputDBSPLAtFullScale`): bins of equal magnitude
    /// and random phase, made periodic by one inverse FFT.
    static func bandNoise(centreHz: Double, levelDBSPL: Double, count: Int, seed: UInt64) -> [Float] {
        let fft = RealFFT(length: count, measure: false)
        let spectrum = RealFFT.allocateComplex(fft.complexCount), samples = RealFFT.allocateReal(count)
        defer {
            RealFFT.free(spectrum)
            RealFFT.free(samples)
        }
        var state = seed
        for k in 0..<fft.complexCount {
            let hz = Double(k) * sampleRate / Double(count)
            let inBand = hz >= centreHz * pow(2, -1.0 / 6) && hz < centreHz * pow(2, 1.0 / 6)
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let phase = 2 * Double.pi * Double(state >> 11) / Double(1 << 53)
            spectrum[2 * k] = inBand ? Float(cos(phase)) : 0
            spectrum[2 * k + 1] = inBand ? Float(sin(phase)) : 0
        }
        fft.inverse(spectrum, samples)
        let x = Array(UnsafeBufferPointer(start: samples, count: count))
        let rms = (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(count)).squareRoot()
        let wanted = pow(10, (levelDBSPL - calibration.inputDBSPLAtFullScale) / 20) / 2.0.squareRoot()
        return x.map { Float(Double($0) * wanted / rms) }
    }

    static func rmsDB(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    /// Gains measured per band (ears in channel order left, right) for band noise at each band's
    /// level in speech at `speechDBSPL`, and the largest sample.
    static func measure(_ rxText: String, speechDBSPL: Double, in folder: URL, environment: [String: String]) throws
        -> (gainsDB: [[Double]], peak: Float)
    {
        let centres = Camfit.defaultCentresHz
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: centres, overallDBSPL: speechDBSPL)
        let segment = Int(sampleRate * segmentSeconds), settle = Int(sampleRate * settleSeconds)
        var input: [Float] = []
        for (i, hz) in centres.enumerated() {
            input += bandNoise(centreHz: hz, levelDBSPL: levels[i], count: segment, seed: UInt64(i + 1))
        }
        let rxPath = folder.appendingPathComponent("fit.rx"), inPath = folder.appendingPathComponent("in.wav").path
        let outPath = folder.appendingPathComponent("out.wav").path
        try Data(rxText.utf8).write(to: rxPath)
        let writer = try AudioFileWriter(path: inPath, format: .wav(sampleRate: Int(sampleRate), channelCount: 2))
        try writer.write(channels: [input, input])
        try writer.close()
        let run = try Built.run(Ribbitd.binary, ["process", inPath, outPath, "--rx", rxPath.path], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let output = try AudioFileReader(path: outPath).readAll()
        let gains = output.map { channel in
            centres.indices.map { i in
                let range = (i * segment + settle)..<((i + 1) * segment)
                return rmsDB(channel[range]) + calibration.outputDBSPLAtFullScale[0] - calibration.inputDBSPLAtFullScale
                    - rmsDB(input[range])
            }
        }
        return (gains, output.map { $0.map(abs).max() ?? 0 }.max() ?? 0)
    }

    @Test(arguments: ["iec-n3.rx", "iec-n4.rx", "iec-s2.rx"])
    func theGainPlayedIsTheDeliveredGain(sample: String) throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = try TestPaths.privateHome(in: folder)
        let config = folder.appendingPathComponent("config/ribbit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("calibration = \"loud\"\n[profile.loud]\ninput = 100\noutput-left = 125\noutput-right = 125\n".utf8)
            .write(to: config.appendingPathComponent("calibration.toml"))
        let camfit = try String(contentsOf: TestPaths.prescription(sample), encoding: .utf8)
        let nalR = camfit.replacingOccurrences(of: "rule: camfit", with: "rule: nal-r")
        #expect(nalR != camfit)
        var compared = 0, capped = 0
        var worst = 0.0
        for (text, every) in [(camfit, false), (nalR, true)] {
            let rx = try Prescription.parse(Array(text.utf8))
            let ceiling = Float(pow(10, rx.maxOutputDBFS / 20))
            for (k, speech) in BandDelivery.speechLevelsDBSPL.enumerated() {
                let measured = try Self.measure(text, speechDBSPL: speech, in: folder, environment: environment)
                #expect(measured.peak <= ceiling, "\(rx.rule) at \(speech) dB SPL: a sample at \(measured.peak)")
                for (c, ear) in [Ear.left, .right].enumerated() {
                    let bands = try #require(
                        CompressorFitting.delivery(rx, ear: ear, trusted: false, calibration: Self.calibration, channel: c))
                    for (i, band) in bands.enumerated() where every || band.cappedBy[k] == .maximumGain {
                        let error = measured.gainsDB[c][i] - band.deliveredDB[k]
                        #expect(
                            abs(error) <= 1.5,
                            "\(sample) \(rx.rule) \(ear) \(Int(band.centreHz)) Hz at \(speech) dB SPL: measured \(measured.gainsDB[c][i]), delivered \(band.deliveredDB[k]), target \(band.targetDB[k])"
                        )
                        worst = max(worst, abs(error))
                        compared += 1
                        if band.cappedBy[k] != nil { capped += 1 }
                    }
                }
            }
        }
        print(
            "\(sample): \(compared) band gains measured (\(capped) short of target), worst |measured - delivered| \(String(format: "%.2f", worst)) dB"
        )
        #expect(compared >= 60 && capped > 0)
    }
}
