import Glibc
import RibbitDSP
import RibbitFitting
import RibbitMeasure
import RibbitPlot
import RibbitPrescription
import RibbitSignals

/// Runs the test-box measurements on the real engine, configured exactly as the daemon plays a
/// prescription: `Fitting.processing(ears: [.left, .right], ...)` gives the filters (and the
/// ceiling) an `OverlapSaveEngine` starts with and the `CompressorPlan` it publishes; both
/// channels get the same test signal. Levels go through the calibration: a tone of L dB SPL is
/// a sine of L - inputDBSPLAtFullScale dBFS, an output of x dBFS in channel c plays at
/// x + outputDBSPLAtFullScale[c] dB SPL. Every tone gets a fresh engine, so no detector carries
/// one tone's level into the next.
///
/// Settings (ANSI S3.22 terms):
/// - full-on: the wearer's volume at its top (the prescription's `volumeRange`, +10 dB by default), the most
///   gain the aid gives; OSPL90 and the full-on gain are measured there;
/// - reference test setting: the volume that brings the HFA gain at 60 dB SPL to the reference
///   test gain (HFA-OSPL90 - 77 dB, or the HFA full-on gain when lower), within the volume
///   range; the frequency response, distortion, noise, attack and release and the input/output
///   curves are measured there;
/// - as worn (volume 0): the target match, the latency and the wearer's program.
public struct Verifier: Sendable {
    public var prescription: Prescription
    public var trusted: Bool
    /// Channels left, right.
    public var calibration: Calibration
    public var program: Program?
    public var sampleRate: Double
    public var geometry: EngineGeometry
    /// Each pure tone's length; the level is read over its second half.
    public var toneSeconds: Double
    /// Each speech-like signal's length; the first half second is left out of the analysis.
    public var speechSeconds: Double
    /// Adaptive features (noise reduction, `SteadyNoiseDetector`) on: not as a test box measures
    /// (ANSI S3.22), but as the wearer hears; for checking that they leave speech in quiet alone.
    public var adaptive = false

    /// Where the signals go: nil plays them through a fresh engine in this process per signal;
    /// `ribbitd verify --live` gives the running daemon over JACK.
    public var path: (any VerifyPath)?

    public static let ears: [Ear] = [.left, .right]
    /// The daemon's JACK period need not be known: any multiple of the hop adds no buffering delay.
    public static let blockFrames = 1024

    public init(
        prescription: Prescription, trusted: Bool, calibration: Calibration, program: Program? = nil, sampleRate: Double = 48000,
        geometry: EngineGeometry? = nil, toneSeconds: Double = 0.5, speechSeconds: Double = 4
    ) {
        self.prescription = prescription
        self.trusted = trusted
        self.calibration = calibration
        self.program = program
        self.sampleRate = sampleRate
        self.geometry = geometry ?? .standard(sampleRate: sampleRate)
        self.toneSeconds = toneSeconds
        self.speechSeconds = speechSeconds
    }

    public var resolvedProgram: Program { program ?? .default(forEnvironment: prescription.environment) }

    // MARK: The engine

    /// A volume and what the daemon runs at it.
    public struct Setting: Sendable {
        public var volumeDB: Double
        public var filters: FilterSet
        public var compressor: CompressorPlan
    }

    /// What the daemon would run at this volume, as a test box measures it: adaptive features
    /// off (noise reduction, `SteadyNoiseDetector`), as the daemon runs while `--live` measures
    /// (unless `adaptive`).
    public func plan(volumeDB: Double) throws -> Setting {
        let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
        let processing = fitting.processing(
            ears: Self.ears, trusted: trusted, calibration: calibration, program: program, volumeDB: volumeDB, adaptive: adaptive)
        return Setting(volumeDB: volumeDB, filters: processing.filters, compressor: processing.compressor)
    }

    public func engine(_ plan: Setting) throws -> OverlapSaveEngine {
        try OverlapSaveEngine(
            playing: plan.filters, compressor: plan.compressor, geometry: geometry, sampleRate: sampleRate, blockSize: Self.blockFrames)
    }

    /// The input through a fresh engine, both channels, with the latency removed (output i is
    /// the engine's output i + latency; the input is padded with zeros to flush).
    public func run(_ input: [Float], plan: Setting) throws -> [[Float]] {
        if let path { return try path.run(input, volumeDB: plan.volumeDB) }
        let engine = try engine(plan)
        let latency = engine.latencyFrames
        let padded = input + [Float](repeating: 0, count: (latency + Self.blockFrames - 1) / Self.blockFrames * Self.blockFrames)
        let total = (padded.count + Self.blockFrames - 1) / Self.blockFrames * Self.blockFrames
        let block = padded + [Float](repeating: 0, count: total - padded.count)
        return engine.process([block, block], blockSize: Self.blockFrames).map { Array($0[latency..<(latency + input.count)]) }
    }

    func amplitudeDBFS(_ dbSPL: Double) -> Double { pow(10, (dbSPL - calibration.inputDBSPLAtFullScale) / 20) }

    func tone(_ hz: Double, dbSPL: Double, seconds: Double? = nil) -> [Float] {
        Signals.sine(
            count: Int(sampleRate * (seconds ?? toneSeconds)), frequencyHz: hz, sampleRate: sampleRate, amplitude: amplitudeDBFS(dbSPL))
    }

    /// Per channel, the output level (dB SPL) of the tone's fundamental over its second half.
    public func toneOutputDBSPL(_ hz: Double, inputDBSPL: Double, plan: Setting)
        throws
        -> [Double?]
    {
        let out = try run(tone(hz, dbSPL: inputDBSPL), plan: plan)
        return out.indices.map { c in
            let steady = out[c][(out[c].count / 2)...]
            return VerifyAnalysis.db(Tone.amplitude(steady, frequencyHz: hz, sampleRate: sampleRate)).map {
                $0 + calibration.outputDBSPLAtFullScale[c]
            }
        }
    }

    /// Per channel, a sweep's output levels.
    func sweep(_ frequencies: [Double], inputDBSPL: Double, plan: Setting) throws
        -> [[FrequencyPoint]]
    {
        var result: [[FrequencyPoint]] = Self.ears.map { _ in [] }
        for hz in frequencies {
            let levels = try toneOutputDBSPL(hz, inputDBSPL: inputDBSPL, plan: plan)
            for c in levels.indices { result[c].append(FrequencyPoint(hz: hz, db: levels[c])) }
        }
        return result
    }

    static func gains(_ levels: [FrequencyPoint], inputDBSPL: Double) -> [FrequencyPoint] {
        levels.map { FrequencyPoint(hz: $0.hz, db: $0.db.map { $0 - inputDBSPL }) }
    }

    // MARK: The report

    /// Full on: the wearer's volume at the top of the prescription's range (+10 dB by default).
    public var fullOnVolumeDB: Double { prescription.volumeRange.upperBound }
    public static let referenceTestOffsetDB = 77.0
    public static let ioFrequenciesHz: [Double] = [500, 1000, 2000, 4000]
    public static let ioLevelsDBSPL: [Double] = stride(from: 40.0, through: 100, by: 5).map { $0 }
    public static let distortionTests: [(hz: Double, dbSPL: Double)] = [(500, 70), (800, 70), (1600, 65)]
    public static let speechLevelsDBSPL: [Double] = [50, 65, 80]
    /// Where target match is judged: the compressor's band centres (audiometric frequencies).
    public static let targetFrequenciesHz = Camfit.defaultCentresHz
    public static let strictRangeHz = 250.0...2000.0
    /// A speech signal whose output peaks come this close to the sample ceiling is output-limited.
    public static let limitedWithinDB = 1.0
    public static let offlineDescription =
        "offline: ribbit's engine in this process (the code and settings the daemon runs), a fresh one per signal"

    /// Measures everything; `calibrationInfo`, `date` and the run time come from the caller.
    public func report(calibrationInfo: VerifyReport.CalibrationInfo, date: String, prescriptionText: String) throws
        -> VerifyReport
    {
        let fullOn = try plan(volumeDB: fullOnVolumeDB)
        let asWorn = try plan(volumeDB: 0)
        let ospl = try sweep(VerifyAnalysis.sweepHz, inputDBSPL: 90, plan: fullOn)
        let fullOnGain = try sweep(VerifyAnalysis.sweepHz, inputDBSPL: 50, plan: fullOn).map { Self.gains($0, inputDBSPL: 50) }

        // The reference test setting, per ear (the volume moves every band's gain by its dB,
        // so one correction lands on it unless an output limit binds; a second one then helps).
        let rtg = Self.ears.indices.map { c -> Double? in
            guard let hfaOSPL = VerifyAnalysis.highFrequencyAverage(ospl[c]) else { return nil }
            let full = VerifyAnalysis.highFrequencyAverage(fullOnGain[c]) ?? .infinity
            return min(hfaOSPL - Self.referenceTestOffsetDB, full)
        }
        var volumes = Self.ears.map { _ in 0.0 }
        var hfa60: [Double?] = Self.ears.map { _ in nil }
        var referencePlans: [Setting] = []
        var response: [[FrequencyPoint]] = Self.ears.map { _ in [] }
        for c in Self.ears.indices {
            var plan = asWorn
            for _ in 0..<3 {
                hfa60[c] = VerifyAnalysis.highFrequencyAverage(
                    Self.gains(try sweep(VerifyAnalysis.hfaFrequenciesHz, inputDBSPL: 60, plan: plan)[c], inputDBSPL: 60))
                guard let target = rtg[c], let measured = hfa60[c], abs(target - measured) > 0.5 else { break }
                let range = prescription.volumeRange
                let next = min(max(volumes[c] + target - measured, range.lowerBound), range.upperBound)
                if next == volumes[c] { break }
                volumes[c] = next
                plan = try self.plan(volumeDB: next)
            }
            referencePlans.append(plan)
            response[c] = try sweep(VerifyAnalysis.sweepHz, inputDBSPL: 60, plan: plan)[c]
        }

        // Distortion, noise, attack and release at each ear's reference setting.
        var distortion: [[EarReport.Distortion]] = Self.ears.map { _ in [] }
        var noise: [EarReport.Noise] = []
        var times: [(attack: Double?, release: Double?)] = []
        var notJudged: [String?] = []
        for c in Self.ears.indices {
            let plan = referencePlans[c]
            for test in Self.distortionTests {
                let out = try run(tone(test.hz, dbSPL: test.dbSPL), plan: plan)[c]
                distortion[c].append(
                    .init(
                        hz: test.hz, inputDBSPL: test.dbSPL,
                        thdPercent: Tone.thdPercent(out[(out.count / 2)...], frequencyHz: test.hz, sampleRate: sampleRate)))
            }
            noise.append(try self.noise(channel: c, plan: plan))
            times.append(try attackRelease(channel: c, plan: plan))
            notJudged.append(try timesNotJudged(channel: c, plan: plan))
        }

        let io = try Self.ears.indices.map { c throws in
            try Self.ioFrequenciesHz.map { hz throws in
                EarReport.IOCurve(
                    hz: hz,
                    points: try Self.ioLevelsDBSPL.map { level throws in
                        EarReport.IOPoint(
                            inputDBSPL: level, outputDBSPL: try toneOutputDBSPL(hz, inputDBSPL: level, plan: referencePlans[c])[c])
                    })
            }
        }
        let matches = try targetMatch(plan: asWorn)
        let latency = try measureLatency(plan: asWorn)

        var ears: [EarReport] = []
        for ear in Ear.plotOrder {
            let c = Self.ears.firstIndex(of: ear)!
            let settings = asWorn.compressor.settings[c]
            let maxPoint = ospl[c].filter { $0.db != nil }.max { $0.db! < $1.db! }
            ears.append(
                EarReport(
                    ear: ear.rawValue, fitted: prescription.targetGains(for: ear) != nil, ospl90: ospl[c], ospl90MaxDBSPL: maxPoint?.db,
                    ospl90MaxHz: maxPoint?.hz ?? 0, hfaOSPL90DBSPL: VerifyAnalysis.highFrequencyAverage(ospl[c]),
                    fullOnGain: fullOnGain[c], hfaFullOnGainDB: VerifyAnalysis.highFrequencyAverage(fullOnGain[c]),
                    fullOnVolumeDB: fullOnVolumeDB, referenceTestGainDB: rtg[c], referenceVolumeDB: volumes[c],
                    referenceHFAGainDB: hfa60[c], frequencyResponse: response[c], distortion: distortion[c], noise: noise[c],
                    attackMs: times[c].attack, releaseMs: times[c].release, designedAttackMs: settings.attackMs,
                    designedReleaseMs: settings.releaseMs, timesNotJudged: notJudged[c],
                    attackPass: notJudged[c] == nil ? EarReport.timeVerdict(measuredMs: times[c].attack, setMs: settings.attackMs) : nil,
                    releasePass: notJudged[c] == nil
                        ? EarReport.timeVerdict(measuredMs: times[c].release, setMs: settings.releaseMs) : nil,
                    ioCurves: io[c], targetMatch: matches[c], specOSPL90MaxDBSPL: spec(c, 90, fullOn, VerifyAnalysis.sweepHz).max(),
                    specHFAOSPL90DBSPL: mean(spec(c, 90, fullOn, VerifyAnalysis.hfaFrequenciesHz)),
                    specHFAFullOnGainDB: mean(spec(c, 50, fullOn, VerifyAnalysis.hfaFrequenciesHz)).map { $0 - 50 }))
        }
        return VerifyReport(
            prescriptionName: prescription.name, prescriptionText: prescriptionText, rule: prescription.rule.rawValue,
            program: resolvedProgram.rawValue, trusted: trusted, calibration: calibrationInfo, date: date, runSeconds: 0,
            sampleRate: sampleRate, engine: geometry.description, toneSeconds: toneSeconds,
            live: path != nil, measuredThrough: path?.description ?? Self.offlineDescription, latency: latency, ears: ears,
            wearerProgram: try wearerProgram())
    }

    /// ribbit's data sheet: the output (dB SPL) its fitting designs for pure tones at
    /// `inputDBSPL`, one per frequency: the input, plus the linear filter the band filters sum
    /// to (the prescription's insertion gain, its magnitude at the tone), plus the static curve
    /// of the band nearest the tone at the plan's volume (the compression on top of it); no more
    /// than the steady level the limiter holds a sine at (its knee under the sample ceiling,
    /// through the calibration).
    func spec(_ c: Int, _ inputDBSPL: Double, _ plan: Setting, _ frequencies: [Double]) -> [Double] {
        let compressor = plan.compressor
        let bands = compressor.settings[c].bands
        let taps = compressor.bandTaps[c].reduce(into: [Double](repeating: 0, count: compressor.bandTaps[c].first?.count ?? 0)) {
            sum, band in
            for i in band.indices { sum[i] += band[i] }
        }
        let held =
            20 * log10(Double(plan.filters.ceiling)) - PeakLimiter.kneeBelowCeilingDB + calibration.outputDBSPLAtFullScale[c]
        return frequencies.compactMap { hz in
            guard let band = bands.min(by: { abs(log2($0.centreHz / hz)) < abs(log2($1.centreHz / hz)) }) else { return nil }
            let w = 2 * Double.pi * hz / sampleRate
            var (re, im) = (0.0, 0.0)
            for (n, h) in taps.enumerated() {
                re += h * cos(w * Double(n))
                im -= h * sin(w * Double(n))
            }
            let linear = 10 * log10(max(re * re + im * im, 1e-30))
            return min(inputDBSPL + linear + band.gainDB(inputDBSPL: inputDBSPL, trimDB: compressor.trimDB), held)
        }
    }

    func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }

    /// The program's adaptive features (noise reduction, the steady-noise detector), by name;
    /// empty: the program plays as the test mode measures it.
    public var adaptiveFeatures: [String] {
        var names: [String] = []
        if resolvedProgram.noiseReductionStrength > 0 { names.append("noise reduction") }
        var withThem = self
        withThem.adaptive = true
        if let plan = try? withThem.plan(volumeDB: 0), plan.compressor.settings.contains(where: { $0.steadyNoise != nil }) {
            names.append("steady-noise detector")
        }
        return names
    }

    /// The wearer's program beside the test mode (`VerifyReport.WearerProgram`); nil when it
    /// has no adaptive features. Offline only: the daemon holds them off while it is measured.
    public func wearerProgram(steadySeconds: Double = 5) throws -> VerifyReport.WearerProgram? {
        let features = adaptiveFeatures
        guard !features.isEmpty, path == nil else { return nil }
        var withThem = self
        withThem.adaptive = true
        let testMode = try plan(volumeDB: 0)
        let wearer = try withThem.plan(volumeDB: 0)
        let (quarter, half) = (Int(sampleRate / 4), Int(sampleRate / 2))
        var rows: [VerifyReport.WearerProgram.Row] = []
        for hz in VerifyAnalysis.hfaFrequenciesHz {
            let test = try toneOutputDBSPL(hz, inputDBSPL: 60, plan: testMode)
            let out = try run(tone(hz, dbSPL: 60, seconds: steadySeconds), plan: wearer)
            func gain(_ c: Int, _ window: Range<Int>) -> Double? {
                VerifyAnalysis.db(Tone.amplitude(out[c][window], frequencyHz: hz, sampleRate: sampleRate)).map {
                    $0 + calibration.outputDBSPLAtFullScale[c] - 60
                }
            }
            for (c, ear) in Self.ears.enumerated() {
                rows.append(
                    .init(
                        ear: ear.rawValue, hz: hz, testModeGainDB: test[c].map { $0 - 60 }, onsetGainDB: gain(c, quarter..<half),
                        steadyGainDB: gain(c, (out[c].count - half)..<out[c].count)))
            }
        }
        // Each ear's rows together, in plot order.
        rows = Ear.plotOrder.flatMap { ear in rows.filter { $0.ear == ear.rawValue } }
        return .init(program: resolvedProgram.rawValue, features: features, steadySeconds: steadySeconds, rows: rows)
    }

    /// Digital silence in, at the reference setting: what the processing adds, and referred to
    /// the input by the HFA gain at 50 dB SPL, its equivalent input noise.
    func noise(channel c: Int, plan: Setting) throws -> EarReport.Noise {
        let count = Int(sampleRate * toneSeconds)
        let silent = try run([Float](repeating: 0, count: count), plan: plan)[c]
        let silenceOut = Levels.dBFS(silent[(count / 2)...]).map { $0 + calibration.outputDBSPLAtFullScale[c] }
        let hfa50 = VerifyAnalysis.highFrequencyAverage(
            Self.gains(try sweep(VerifyAnalysis.hfaFrequenciesHz, inputDBSPL: 50, plan: plan)[c], inputDBSPL: 50))
        return EarReport.Noise(
            silenceOutputDBSPL: silenceOut, hfa50GainDB: hfa50, einDBSPL: silenceOut.flatMap { level in hfa50.map { level - $0 } })
    }

    /// ANSI S3.22: a 2 kHz tone steps 55 -> 90 -> 55 dB SPL (on whole periods); the output's
    /// envelope (RMS per 0.5 ms) settles within 3 dB of its level at 90 (attack) and within 4 dB
    /// of its level at 55 (release). Each step lasts max(0.5 s, 4 x the release time).
    /// Why attack and release cannot be judged against the times set (nil: they can): the 2 kHz
    /// band does not compress, or a steady 90 dB SPL tone there reaches the output limiter's
    /// knee, so what the step times is the limiter.
    func timesNotJudged(channel c: Int, plan: Setting) throws -> String? {
        let band = plan.compressor.settings[c].bands.min { abs($0.centreHz - 2000) < abs($1.centreHz - 2000) }
        guard let band, band.ratio > 1 else { return "no compression at 2 kHz: the output limiter's" }
        let kneeDBSPL =
            20 * log10(Double(plan.filters.ceiling)) - PeakLimiter.kneeBelowCeilingDB + calibration.outputDBSPLAtFullScale[c]
        if let loud = try toneOutputDBSPL(2000, inputDBSPL: 90, plan: plan)[c], loud >= kneeDBSPL - 0.5 {
            return "the 90 dB SPL step reaches the output limiter: the limiter's"
        }
        return nil
    }

    public func attackRelease(channel c: Int, plan: Setting) throws -> (
        attack: Double?, release: Double?
    ) {
        let settings = plan.compressor.settings[c]
        let window = Int((sampleRate / 2000).rounded())
        let steps = Int(sampleRate * max(0.5, 4 * settings.releaseMs / 1000)) / window * window
        var input: [Float] = []
        for level in [55.0, 90, 55] {
            // Each step starts at phase 0 of the whole signal's sine, so the steps join without a jump.
            let phase = Double(input.count)
            input += (0..<steps).map { i in
                Float(amplitudeDBFS(level) * sin(2 * .pi * 2000 * (phase + Double(i)) / sampleRate))
            }
        }
        let out = try run(input, plan: plan)[c]
        let envelope = VerifyAnalysis.envelopeDB(out[...], window: window)
        let stepMs = 1000 * Double(window) / sampleRate
        let attackStart = steps / window, releaseStart = 2 * steps / window
        // As the engine's own test: the attack segment ends a little before the release step
        // (the detector sees the step a filter delay and a hop before the output does).
        let attack = VerifyAnalysis.settlingMs(Array(envelope[..<(releaseStart - 10)]), from: attackStart, stepMs: stepMs, withinDB: 3)
        // And the release segment ends 10 ms before the signal does (the detector sees the
        // silence after it coming, and the gain rises in the last windows).
        let release = VerifyAnalysis.settlingMs(
            Array(envelope[..<(envelope.count - 20)]), from: releaseStart, stepMs: stepMs, withinDB: 4)
        return (attack, release)
    }

    /// The speech-like signal at 50, 65 and 80 dB SPL through the as-worn engine; insertion gain
    /// per frequency = the output's long-term third-octave level less the input's, against the
    /// prescription's targets for that level (compressive fits: g50 / g65 / g80; linear fits:
    /// the one target), each with the prescription's low-pass, as the engine plays it.
    func targetMatch(plan: Setting) throws -> [[EarReport.TargetMatch]] {
        let count = Int(sampleRate * speechSeconds)
        let skip = min(Int(sampleRate / 2), count / 4)
        var result: [[EarReport.TargetMatch]] = Self.ears.map { _ in [] }
        let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
        let lowpass = LowpassCurve(passHz: prescription.lowpassHz.map(Double.init))
        let bands = Self.ears.enumerated().map { c, ear in
            CompressorFitting.delivery(prescription, ear: ear, trusted: trusted, calibration: calibration, channel: c) ?? []
        }
        for level in Self.speechLevelsDBSPL {
            let input = VerifyAnalysis.speechLikeSignal(
                count: count, sampleRate: sampleRate, levelDBFS: level - calibration.inputDBSPLAtFullScale, seed: 2026)
            let out = try run(input, plan: plan)
            let inLevels = Spectra.thirdOctaveLevelsDBFS(input[skip...], centresHz: Self.targetFrequenciesHz, sampleRate: sampleRate)
            for (c, ear) in Self.ears.enumerated() {
                let outLevels = Spectra.thirdOctaveLevelsDBFS(
                    out[c][skip...], centresHz: Self.targetFrequenciesHz, sampleRate: sampleRate)
                var rows: [EarReport.TargetRow] = []
                for (i, hz) in Self.targetFrequenciesHz.enumerated() {
                    guard let li = inLevels[i], let lo = outLevels[i] else { continue }
                    let inDB = li + calibration.inputDBSPLAtFullScale, outDB = lo + calibration.outputDBSPLAtFullScale[c]
                    let target = targetGainDB(ear: ear, hz: hz, speechDBSPL: level, fitting: fitting, lowpass: lowpass)
                    let short = Self.shortfall(bands[c], atHz: hz, speechDBSPL: level)
                    let deviation = (outDB - inDB) - (target - short.db)
                    rows.append(
                        EarReport.TargetRow(
                            hz: hz, inputDBSPL: inDB, outputDBSPL: outDB, measuredGainDB: outDB - inDB, targetGainDB: target,
                            deliveredGainDB: target - short.db, cappedBy: short.cap, deviationDB: deviation, pass: abs(deviation) <= 5,
                            strictPass: Self.strictRangeHz.contains(hz) ? abs(deviation) <= 3 : nil))
                }
                let worst = rows.max { abs($0.deviationDB) < abs($1.deviationDB) }
                let peak = VerifyAnalysis.db(Double(out[c][skip...].reduce(Float(0)) { max($0, abs($1)) }))
                result[c].append(
                    EarReport.TargetMatch(
                        levelDBSPL: level, rows: rows, pass: !rows.isEmpty && rows.allSatisfy(\.pass),
                        strictPass: rows.allSatisfy { $0.strictPass ?? true }, worstDeviationDB: worst?.deviationDB ?? 0,
                        worstHz: worst?.hz ?? 0, outputPeakDBFS: peak,
                        outputLimited: peak.map { $0 >= 20 * log10(Double(plan.filters.ceiling)) - Self.limitedWithinDB } ?? false))
            }
        }
        return result
    }

    /// How far below its target a frequency plays for speech at `speechDBSPL` (a level of
    /// `BandDelivery.speechLevelsDBSPL`), and why: the bands' shortfalls interpolated in log
    /// frequency (flat beyond the outer centres), the cap that of the nearer capped neighbour.
    static func shortfall(_ bands: [BandDelivery], atHz hz: Double, speechDBSPL: Double) -> (db: Double, cap: GainCap?) {
        guard let level = BandDelivery.speechLevelsDBSPL.firstIndex(of: speechDBSPL), !bands.isEmpty else { return (0, nil) }
        let short = bands.map { (hz: $0.centreHz, db: max(0, $0.targetDB[level] - $0.deliveredDB[level])) }
        let db = Camfit.interpolate(short, atHz: hz)
        guard db >= 0.05 else { return (0, nil) }
        let nearest = bands.indices.filter { bands[$0].cappedBy[level] != nil }.min {
            abs(log(bands[$0].centreHz / hz)) < abs(log(bands[$1].centreHz / hz))
        }
        return (db, nearest.flatMap { bands[$0].cappedBy[level] })
    }

    /// The prescription's target insertion gain at a frequency for speech at `speechDBSPL`.
    public func targetGainDB(ear: Ear, hz: Double, speechDBSPL: Double, fitting: Fitting, lowpass: LowpassCurve) -> Double {
        guard let level = prescription.levelGains(for: ear) else { return fitting.targetGainDB(for: ear, atHz: hz) }
        let gains = speechDBSPL <= 50 ? level.g50 : speechDBSPL >= 80 ? level.g80 : level.g65
        return Camfit.interpolate(gains, atHz: hz) + 20 * log10(max(lowpass.amplitude(atHz: hz), 1e-10))
    }

    /// An impulse (one sample at 0.1, -20 dBFS) through the as-worn
    /// engine: where the output's largest sample lies, against what the engine reports.
    func measureLatency(plan: Setting) throws -> VerifyReport.Latency {
        if let path { return try path.latency(volumeDB: plan.volumeDB) }
        let engine = try engine(plan)
        let at = Self.blockFrames
        let count = 4 * Self.blockFrames
        let out = engine.process(
            [Signals.impulse(count: count, at: at, amplitude: 0.1), Signals.impulse(count: count, at: at, amplitude: 0.1)],
            blockSize: Self.blockFrames)
        let peak = out[0].indices.max { abs(out[0][$0]) < abs(out[0][$1]) } ?? at
        let reported = engine.latencyFrames
        return VerifyReport.Latency(
            measuredFrames: peak - at, reportedFrames: reported, measuredMs: 1000 * Double(peak - at) / sampleRate,
            reportedMs: 1000 * Double(reported) / sampleRate)
    }
}

/// Where `Verifier` sends its signals instead of a fresh engine: the running hearing aid. Its
/// detectors carry state from one signal to the next, so it must leave silence between them
/// long enough for them to release (the offline engine starts each signal fresh).
public protocol VerifyPath: AnyObject, Sendable, CustomStringConvertible {
    /// `input` into both ears at the wearer's volume `volumeDB`; per channel (left, right), the
    /// output aligned with the input (the latency removed), as long as the input.
    func run(_ input: [Float], volumeDB: Double) throws -> [[Float]]
    /// The latency by impulse, and what the hearing aid reports.
    func latency(volumeDB: Double) throws -> VerifyReport.Latency
}
