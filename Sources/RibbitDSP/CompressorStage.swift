import Glibc
import Synchronization

/// The compressor's immutable runtime config: per channel (ear), the prescription's filter
/// split into bands (`BandSplit`), each band's static curve and detector time constants, and
/// the calibration folded into per-band offsets. Built off the audio thread; `CompressorStage`
/// only reads the precomputed arrays.
///
/// What the engine applies per hop and channel: spectrum *= sum_b g_b H_b, H_b the band
/// filters and g_b = 10^(digitalGainDB / 20), digitalGainDB the band's static curve at its
/// smoothed input level through `Calibration.digitalGainDB`. The band filters carry the
/// prescription's `amplitude(f)`; the bands' `gainDB` come on top of it. A fitting therefore
/// either keeps its insertion gains in `amplitude` and sets gainDB 0 (then all ratios 1 is
/// exactly the linear filter), or passes amplitude 1 and puts the gains in the bands (then
/// all ratios 1 is exactly the FIR LinearPhaseFIR designs from the crossover-interpolated
/// band gains: the design is linear in its target). With `noiseReduction` on, each g_b is
/// multiplied by the band's noise reduction gain (`NoiseReduction`), read from the same
/// detector band power: still one symmetric FIR of the same length.
///
/// The level detector reads the input spectrum (before any filtering) through a Hann window
/// (applied in the frequency domain: 0.5 X[k] - 0.25 (X[k-1] + X[k+1])), so leakage stays out
/// of distant bands. Band b's level is sum_k W_b(f_k) |X_hann[k]|^2, scaled so that a
/// full-scale sine at the band's centre reads `Calibration.inputDBSPLAtFullScale`.
///
/// Time constants: the detector smooths the band level in dB with a one-pole filter per hop,
/// coefficient exp(-hop / (tau fs)), tau_attack while the level rises and tau_release while it
/// falls. ANSI S3.22 defines the attack time as the time for the output to settle within 3 dB
/// of its final level after a 55 -> 90 dB SPL step (release: within 4 dB after 90 -> 55). In dB
/// the smoothed level is 90 - 35 e^(-t / tau); the output is within 3 dB once the static
/// curve's gain at that level is within 3 dB of its gain at 90, i.e. at a level L3 found on the
/// curve, at t = tau ln(35 / (90 - L3)). So tau = attackMs / ln(35 / (90 - L3)) per band (and
/// likewise for the release with 4 dB, L4 - 55): the configured ANSI times hold for each
/// band's own curve. A band whose gain changes by less than 3 dB (4 dB) over the step has no
/// ANSI time; it gets tau = attackMs / ln(35 / 3).
public final class CompressorConfig: @unchecked Sendable {
    public let fftLength: Int
    public let channelCount: Int
    /// Bands per channel (0: compression off; the engine runs its FilterStage instead).
    public let bandCount: Int
    /// The band filters' taps per channel and band, for reports and tests.
    public let bandTaps: [[[Double]]]
    public let settings: [CompressorSettings]
    public let calibration: Calibration
    /// The narrowest crossover between bands (Hz), as the band filters were designed with.
    public let transitionHz: Double

    let complexCount: Int
    /// [channel][band][bin]: the band filters' real amplitudes A_b(k), pre-scaled by 1 / fftLength.
    let amplitudes: UnsafeMutablePointer<Float>
    /// [bin] interleaved (cos, sin) of -2 pi k D / N: the common linear phase of every band filter.
    let phase: UnsafeMutablePointer<Float>
    /// [band][bin]: detector weights, calibrated: level = inputDBSPLAtFullScale + 10 log10(sum).
    let detector: UnsafeMutablePointer<Float>
    /// [band] first and one-past-last bin with a nonzero detector weight.
    let detectorRange: UnsafeMutablePointer<Int>
    /// [channel][band][parameter]: gainDB, kneeDBSPL, 1 - 1/ratio, expansionKneeDBSPL,
    /// expansionRatio - 1, limitDBSPL, attack coefficient, release coefficient, the
    /// calibration's digital offset (inputDBSPLAtFullScale - outputDBSPLAtFullScale[channel]),
    /// the output limit's threshold on the combined output (dB of the detector's sum), the
    /// maximum gain, and for `SteadyNoiseDetector`: the slow detector's attack and release
    /// coefficients, the noise floor that matters (as a detector sum; infinity: never) and how
    /// far the fast level may stand above the slow one (dB).
    let curves: UnsafeMutablePointer<Float>
    static let parameterCount = 15
    /// Whether the stage tracks each band's noise floor: for noise reduction, or for a
    /// `SteadyNoiseDetector`.
    let tracksNoise: Bool
    /// Per hop, the one-pole coefficient by which a band passes between its fast and its
    /// noise-following detector (`SteadyNoiseDetector.blendMs`).
    let steadyBlend: Float
    /// Per hop, the one-pole coefficient of each band's long-term power (1 s), and the power
    /// ratio within which it must stand of the floor (`SteadyNoiseDetector.floorWithinDB`).
    let longTermSmoothing: Float
    let floorWithin: Float
    let inputDBSPLAtFullScale: Float
    /// Scales the sum of every bin's Hann power (interior bins twice) so a unit sine reads 1.
    let broadbandScale: Float
    /// Noise reduction (`NoiseReduction`): off unless set; its per-hop constants and, per band,
    /// the minimum statistics' bias compensation.
    public let noiseReduction: NoiseReductionSettings
    let noise: NoiseReductionParameters
    let noiseBias: UnsafeMutablePointer<Float>
    /// [band] the noise reduction's speech gate (`NoiseReduction.speechGate`).
    let speechGate: UnsafeMutablePointer<Float>
    /// Frequency lowering per channel (nil, or a list shorter than the channels: not lowered).
    public let lowering: [LoweringPlan?]
    /// The lowering's tables (`LoweringTables`; a channel with 0 sub-bands reads none of them).
    let lowered: LoweringTables

    /// Compression off: the engine's FilterStage runs alone.
    public static func off(channelCount: Int, fftLength: Int) -> CompressorConfig {
        CompressorConfig(offFor: channelCount, fftLength: fftLength)
    }

    private init(offFor channelCount: Int, fftLength: Int) {
        self.fftLength = fftLength
        self.channelCount = channelCount
        bandCount = 0
        bandTaps = Array(repeating: [], count: channelCount)
        settings = []
        calibration = .uncalibrated
        transitionHz = 0
        broadbandScale = 0
        complexCount = fftLength / 2 + 1
        amplitudes = .allocate(capacity: 1)
        phase = .allocate(capacity: 1)
        detector = .allocate(capacity: 1)
        detectorRange = .allocate(capacity: 1)
        curves = .allocate(capacity: 1)
        inputDBSPLAtFullScale = 100
        noiseReduction = .off
        noise = NoiseReductionParameters()
        noiseBias = .allocate(capacity: 1)
        speechGate = .allocate(capacity: 1)
        tracksNoise = false
        steadyBlend = 0
        longTermSmoothing = 0
        floorWithin = 0
        lowering = []
        lowered = LoweringTables(channelCount: channelCount)
    }

    /// - Parameters:
    ///   - settings: per channel; every channel must have the same band centres (ascending).
    ///   - amplitude: per channel, the linear amplitude the band filters split (see above).
    ///   - taps: the band filters' length (the engine's filter length, odd).
    ///   - transitionHz: the narrowest crossover; default `BandSplit.minimumTransitionHz`.
    ///   - noiseReduction: per-band noise reduction on top of the bands' gains (default off).
    ///   - lowering: per channel, frequency lowering's cut-off (Hz) and ratio, or nil (default: none).
    public convenience init(
        settings: [CompressorSettings], amplitude: [(Double) -> Double], calibration: Calibration, taps: Int, fftLength: Int,
        hopSize: Int, sampleRate: Double, transitionHz: Double? = nil, noiseReduction: NoiseReductionSettings = .off,
        lowering: [(cutoffHz: Double, ratio: Double)?] = []
    ) {
        precondition(!settings.isEmpty && settings.count == amplitude.count)
        let centres = settings[0].bands.map(\.centreHz)
        let transition = transitionHz ?? BandSplit.minimumTransitionHz(taps: taps, sampleRate: sampleRate)
        let plans = amplitude.indices.map { c -> LoweringPlan? in
            guard c < lowering.count, let setting = lowering[c] else { return nil }
            return LoweringPlan.design(
                cutoffHz: setting.cutoffHz, ratio: setting.ratio, sampleRate: sampleRate, fftLength: fftLength, taps: taps,
                centresHz: centres, amplitude: amplitude[c])
        }
        self.init(
            settings: settings,
            bandTaps: amplitude.indices.map { c in
                let split =
                    plans[c].map {
                        LoweringPlan.unmovedAmplitude(
                            cutoffHz: $0.cutoffHz, ratio: $0.ratio, sampleRate: sampleRate, fftLength: fftLength, amplitude: amplitude[c])
                    } ?? amplitude[c]
                return BandSplit.bandFilters(
                    taps: taps, sampleRate: sampleRate, centres: centres, transitionHz: transition, amplitude: split)
            }, calibration: calibration, fftLength: fftLength, hopSize: hopSize, sampleRate: sampleRate, transitionHz: transition,
            noiseReduction: noiseReduction, lowering: plans)
    }

    /// From band filters designed elsewhere (the daemon designs them, the audio process only
    /// builds the tables): `bandTaps[channel][band]`, each symmetric, odd and of one length.
    /// A lowered channel's band filters carry only what stays (`LoweringPlan.unmovedAmplitude`).
    public init(
        settings: [CompressorSettings], bandTaps: [[[Double]]], calibration: Calibration, fftLength: Int, hopSize: Int,
        sampleRate: Double, transitionHz transition: Double, noiseReduction: NoiseReductionSettings = .off,
        lowering: [LoweringPlan?] = []
    ) {
        precondition(!settings.isEmpty && settings.count == bandTaps.count && calibration.outputDBSPLAtFullScale.count >= settings.count)
        let centres = settings[0].bands.map(\.centreHz)
        precondition(!centres.isEmpty && settings.allSatisfy { $0.bands.map(\.centreHz) == centres }, "every ear needs the same bands")
        let taps = bandTaps[0].first?.count ?? 0
        precondition(bandTaps.allSatisfy { $0.count == centres.count && $0.allSatisfy { $0.count == taps } })
        precondition(taps % 2 == 1 && taps <= fftLength)
        self.fftLength = fftLength
        channelCount = settings.count
        bandCount = centres.count
        self.settings = settings
        self.calibration = calibration
        inputDBSPLAtFullScale = Float(calibration.inputDBSPLAtFullScale)
        let bins = fftLength / 2 + 1
        complexCount = bins
        let n = Double(fftLength)

        self.transitionHz = transition
        self.bandTaps = bandTaps
        amplitudes = RealFFT.allocateReal(channelCount * bandCount * bins)
        for c in 0..<channelCount {
            for b in 0..<bandCount {
                for k in 0..<bins {
                    let a = BandSplit.amplitude(of: bandTaps[c][b], cyclesPerSample: Double(k) / n)
                    amplitudes[(c * bandCount + b) * bins + k] = Float(a / n)
                }
            }
        }
        phase = RealFFT.allocateComplex(bins)
        let delay = Double((taps - 1) / 2)
        for k in 0..<bins {
            let angle = -2 * Double.pi * Double(k) * delay / n
            phase[2 * k] = Float(cos(angle))
            phase[2 * k + 1] = Float(sin(angle))
        }

        // Detector weights W_b(f_k), times 2 for the bins that stand for two (k and N - k).
        detector = RealFFT.allocateReal(bandCount * bins)
        detectorRange = .allocate(capacity: 2 * bandCount)
        var raw = [[Double]](repeating: [Double](repeating: 0, count: bins), count: bandCount)
        for b in 0..<bandCount {
            for k in 0..<bins {
                let hz = Double(k) * sampleRate / n
                raw[b][k] =
                    BandSplit.weight(band: b, centres: centres, transitionHz: transition, hz: hz) * (k == 0 || k == bins - 1 ? 1 : 2)
            }
        }
        // Calibrate: a unit sine at the centre (mean over phases) must read sum = 1.
        for b in 0..<bandCount {
            var mean = 0.0
            let phases = 8
            for p in 0..<phases {
                let power = Self.hannPower(
                    frequency: centres[b] / sampleRate, phase: 2 * Double.pi * Double(p) / Double(phases), length: fftLength)
                mean += zip(raw[b], power).reduce(0) { $0 + $1.0 * $1.1 } / Double(phases)
            }
            // The audio thread's power is the unnormalised |X_hann|^2: fold in 1 / (N^2 3/8).
            let scale = mean > 0 ? 1 / (mean * n * n * 3 / 8) : 0
            var (lo, hi) = (bins, 0)
            for k in 0..<bins {
                detector[b * bins + k] = Float(raw[b][k] * scale)
                if raw[b][k] > 0 {
                    lo = min(lo, k)
                    hi = max(hi, k + 1)
                }
            }
            detectorRange[2 * b] = lo
            detectorRange[2 * b + 1] = max(hi, lo)
        }
        // The broadband level the same way: every bin (interior ones twice), a 1 kHz unit sine
        // reads 1.
        var broadbandMean = 0.0
        for p in 0..<8 {
            let power = Self.hannPower(frequency: 1000 / sampleRate, phase: 2 * Double.pi * Double(p) / 8, length: fftLength)
            broadbandMean += power.enumerated().reduce(0) { $0 + $1.element * ($1.offset == 0 || $1.offset == bins - 1 ? 1 : 2) } / 8
        }
        broadbandScale = broadbandMean > 0 ? Float(1 / (broadbandMean * n * n * 3 / 8)) : 0

        self.noiseReduction = noiseReduction
        noise = NoiseReductionParameters(noiseReduction, hopSize: hopSize, sampleRate: sampleRate)
        let bias = UnsafeMutablePointer<Float>.allocate(capacity: bandCount)
        let gate = UnsafeMutablePointer<Float>.allocate(capacity: bandCount)
        for b in 0..<bandCount {
            let weights = raw[b]
            bias[b] = Float(NoiseReduction.biasCompensation(weights: weights, hopSize: hopSize, sampleRate: sampleRate))
            gate[b] = Float(NoiseReduction.speechGate(weights: weights, hopSize: hopSize, sampleRate: sampleRate))
        }
        noiseBias = bias
        speechGate = gate

        let p = Self.parameterCount
        curves = .allocate(capacity: channelCount * bandCount * p)
        let steadyEars = settings.compactMap(\.steadyNoise)
        tracksNoise = noiseReduction.isOn || !steadyEars.isEmpty
        steadyBlend = Float(exp(-Double(hopSize) / sampleRate / ((steadyEars.first?.blendMs ?? 200) / 1000)))
        longTermSmoothing = Float(exp(-Double(hopSize) / sampleRate / 1.0))
        floorWithin = Float(pow(10, (steadyEars.first?.floorWithinDB ?? 0) / 10))
        for (c, ear) in settings.enumerated() {
            let coefficients = Self.detectorCoefficients(ear, taps: taps, hopSize: hopSize, sampleRate: sampleRate)
            var slow = ear
            if let steady = ear.steadyNoise { (slow.attackMs, slow.releaseMs) = (steady.slowMs, steady.slowMs) }
            let slowCoefficients = Self.detectorCoefficients(slow, taps: taps, hopSize: hopSize, sampleRate: sampleRate)
            for (b, band) in ear.bands.enumerated() {
                let offset = calibration.digitalGainDB(insertionGainDB: 0, channel: c, atHz: band.centreHz)
                // The output limit on the combined output, digital: the band limit made absolute
                // by the channel's filter at the centre (the bands may carry the prescription's
                // shape), less the calibration's output level and the 1/N the amplitudes carry.
                // A lowered ear's band filters lack what moves, so its shape is the plan's.
                let shape =
                    lowering.count > c && lowering[c] != nil
                    ? lowering[c]!.centreAmplitudes[b]
                    : bandTaps[c].reduce(0) { $0 + BandSplit.amplitude(of: $1, cyclesPerSample: band.centreHz / sampleRate) }
                let outputThreshold =
                    band.limitDBSPL + 20 * log10(max(abs(shape), 1e-12)) - calibration.outputDBSPL(channel: c, atHz: band.centreHz)
                    - 20 * log10(Double(fftLength))
                let values = [
                    band.gainDB, band.kneeDBSPL, 1 - 1 / band.ratio, band.expansionKneeDBSPL, band.expansionRatio - 1,
                    band.limitDBSPL, Double(coefficients[b].attack), Double(coefficients[b].release), offset, outputThreshold,
                    band.maximumGainDB, Double(slowCoefficients[b].attack), Double(slowCoefficients[b].release),
                    ear.steadyNoise == nil ? .infinity : pow(10, (band.steadyNoiseKneeDBSPL - calibration.inputDBSPLAtFullScale) / 10),
                    ear.steadyNoise?.followAboveDB ?? .infinity,
                ]
                for (i, v) in values.enumerated() { curves[(c * bandCount + b) * p + i] = Float(v) }
            }
        }
        self.lowering = lowering
        let (weights, ranges, bandTotal) = (detector, detectorRange, bandCount)
        let detectorRows = (0..<bandTotal).map { Array(UnsafeBufferPointer(start: weights + $0 * bins, count: bins)) }
        let rowRanges = (0..<bandTotal).map { (ranges[2 * $0], ranges[2 * $0 + 1]) }
        lowered = LoweringTables(
            lowering, channelCount: settings.count, centresHz: centres, transitionHz: transition, detector: detectorRows,
            detectorRange: rowRanges, fftLength: fftLength, hopSize: hopSize, sampleRate: sampleRate)
    }

    deinit {
        if bandCount == 0 {
            for pointer in [amplitudes, phase, detector, curves] { pointer.deallocate() }
        } else {
            for pointer in [amplitudes, phase, detector] { RealFFT.free(pointer) }
            curves.deallocate()
        }
        detectorRange.deallocate()
        noiseBias.deallocate()
        speechGate.deallocate()
        lowered.deallocate()
    }

    /// Each band's detector coefficients per hop (attack, release) for `ear`, as the audio thread
    /// uses them: the time constants follow the band's curve (`detectorTau`). The detector
    /// reads the newest input, the output is the filter's delay older: a rise is heard by the
    /// detector that much before the output carries it, so the gain would settle early by about
    /// the delay; the attack is lengthened by it. Measured through the engine (5 ms asked):
    /// 3.5 ms without this, see CompressorTests.
    public static func detectorCoefficients(
        _ ear: CompressorSettings, taps: Int, hopSize: Int, sampleRate: Double
    ) -> [(attack: Float, release: Float)] {
        let hopSeconds = Double(hopSize) / sampleRate
        let lookaheadMs = Double((taps - 1) / 2) / sampleRate * 1000
        return ear.bands.map { band in
            let tauAttack = detectorTau(band, timeMs: ear.attackMs + lookaheadMs, from: 55, to: 90, withinDB: 3)
            let tauRelease = detectorTau(band, timeMs: ear.releaseMs, from: 90, to: 55, withinDB: 4)
            return (Float(exp(-hopSeconds / tauAttack)), Float(exp(-hopSeconds / tauRelease)))
        }
    }

    /// Makes every detector follow its band's power with no smoothing, so its level is what it
    /// is fed (`DetectorSpeechLevels` reads that once per band layout). Before it is published.
    public func makeDetectorsInstant() {
        for row in 0..<(channelCount * bandCount) {
            curves[row * Self.parameterCount + 6] = 0
            curves[row * Self.parameterCount + 7] = 0
        }
    }

    /// The one-pole time constant (seconds) that makes a step of the band level `from` ->
    /// `to` dB SPL bring the band's gain within `withinDB` of its final value after `timeMs`.
    static func detectorTau(_ band: CompressorBand, timeMs: Double, from: Double, to: Double, withinDB: Double) -> Double {
        let seconds = max(timeMs, 0.01) / 1000
        let final = band.gainDB(inputDBSPL: to)
        // The level nearest `from` whose gain is already within withinDB of the final gain.
        let step = to > from ? -0.01 : 0.01
        var level = to
        while step < 0 ? level > from : level < from, abs(band.gainDB(inputDBSPL: level + step) - final) <= withinDB {
            level += step
        }
        let remaining = abs(to - level)
        let ratio = remaining > 0 && abs(to - from) > remaining + 1e-9 ? abs(to - from) / remaining : abs(to - from) / withinDB
        return seconds / log(max(ratio, 1.0001))
    }

    /// |Hann-windowed DFT|^2 / (N^2 3/8) of a unit sine (the detector's bins; 2P = 1 overall).
    /// A direct DFT on a table of the N twiddles (no FFT plan needed off the audio thread).
    /// Remembered per frequency, phase and length: every program or volume change builds a
    /// config for the same centres, and this is most of its cost (tens of ms otherwise, spent
    /// on the audio process's main thread beside the audio thread).
    static func hannPower(frequency: Double, phase: Double, length n: Int) -> [Double] {
        let key = HannPowerKey(frequency: frequency, phase: phase, length: n)
        if let known = hannPowerCache.withLock({ $0[key] }) { return known }
        let power = computeHannPower(frequency: frequency, phase: phase, length: n)
        hannPowerCache.withLock { cache in
            if cache.count > 4096 { cache.removeAll() }  // bounded: centres and rates are few
            cache[key] = power
        }
        return power
    }

    private struct HannPowerKey: Hashable {
        let frequency: Double
        let phase: Double
        let length: Int
    }
    private static let hannPowerCache = Mutex<[HannPowerKey: [Double]]>([:])

    /// cos and -sin of 2 pi t / n: the same for the 88 calls a compressor makes.
    private static func twiddles(_ n: Int) -> (cosines: [Double], sines: [Double]) {
        if let known = twiddleCache.withLock({ $0[n] }) { return known }
        let twiddle = (0..<n).map { 2 * Double.pi * Double($0) / Double(n) }
        let made = (twiddle.map { cos($0) }, twiddle.map { -sin($0) })
        twiddleCache.withLock { cache in
            if cache.count > 16 { cache.removeAll() }
            cache[n] = made
        }
        return made
    }
    private static let twiddleCache = Mutex<[Int: (cosines: [Double], sines: [Double])]>([:])

    private static func computeHannPower(frequency: Double, phase: Double, length n: Int) -> [Double] {
        let bins = n / 2 + 1
        let norm = Double(n) * Double(n) * 3 / 8
        let (cosines, sines) = twiddles(n)
        let x = (0..<n).map { t in (0.5 - 0.5 * cosines[t]) * cos(2 * Double.pi * frequency * Double(t) + phase) }
        var result = [Double](repeating: 0, count: bins)
        for k in 0..<bins {
            var (re, im) = (0.0, 0.0)
            var index = 0
            for t in 0..<n {
                re += x[t] * cosines[index]
                im += x[t] * sines[index]
                index += k
                if index >= n { index -= n }
            }
            result[k] = (re * re + im * im) / norm
        }
        return result
    }

    /// The gain (dB, digital) the stage applies to band `band` of `channel` at a smoothed band
    /// level: the same Float arithmetic as the audio thread (for tests and reports).
    func digitalGainDB(channel: Int, band: Int, levelDBSPL level: Float, trimDB: Float = 0) -> Float {
        CompressorStage.curve(curves + (channel * bandCount + band) * Self.parameterCount, level: level, trimDB: trimDB)
    }
}

/// The compressor as an engine gain stage (see `CompressorConfig`). Its state, the smoothed
/// band levels, lives in memory allocated here for up to `maxBands` bands per channel; the
/// engine frees it with `deallocate()`.
public struct CompressorStage: SpectralGainStage {
    public typealias Config = CompressorConfig
    public static let maxBands = 32
    public let channelCount: Int
    /// [channel][band] smoothed level in dB SPL; [channel] primed flag (0 until the first hop).
    let levels: UnsafeMutablePointer<Float>
    /// What the detectors heard, summed hop by hop (the engine publishes it; `InputLevelTotals`).
    let totals: UnsafeMutablePointer<InputLevelTotals>
    let primed: UnsafeMutablePointer<Bool>
    /// Scratch for one channel at a time: per-bin detector power, combined gain, band gains.
    let power: UnsafeMutablePointer<Float>
    let combined: UnsafeMutablePointer<Float>
    let gains: UnsafeMutablePointer<Float>
    /// Noise reduction state: [channel][band][NoiseReduction.fieldCount], the minimum search's
    /// ring [channel][band][NoiseReduction.subwindows], [channel] hops into the current
    /// sub-window and the ring slot it closes into, [channel] primed flag.
    let noiseState: UnsafeMutablePointer<Float>
    let noiseRing: UnsafeMutablePointer<Float>
    let noiseCounters: UnsafeMutablePointer<Int>
    let noisePrimed: UnsafeMutablePointer<Bool>
    /// `SteadyNoiseDetector` state, [channel][band][3]: the slow level (dB SPL), the weight
    /// (0: the fast level rules, 1: the noise-following one) and the long-term power.
    let steadyState: UnsafeMutablePointer<Float>
    /// Frequency lowering: [channel] hops advanced (mod fftLength: the frame's first sample
    /// mod N is (hops + 1) hopSize, the engine's first frame starting hopSize - N); scratch
    /// for one channel: the input in the filters' phase and the moved spectrum (complex, as
    /// real parts then imaginary parts), the
    /// sub-bands' gains, each pair's output power per unit gain.
    let frames: UnsafeMutablePointer<Int>
    let phased: UnsafeMutablePointer<Float>
    let movedSpectrum: UnsafeMutablePointer<Float>
    let subbandGains: UnsafeMutablePointer<Float>
    let pairPower: UnsafeMutablePointer<Float>
    /// The wearer's volume as a trim (dB) on every band: [channel] the trim in force, which
    /// glides by at most `trimStepDB` a hop to `trimTarget` (the engine copies it from its
    /// atomic at each hop), so a volume step neither clicks nor needs a crossfade; [channel]
    /// the trim of the hop before, for a crossfade's fading render. A new config (another
    /// prescription, program or bypass's end) starts at the target: it fades in from silence.
    let trimNow: UnsafeMutablePointer<Float>
    let trimFading: UnsafeMutablePointer<Float>
    let trimTarget: UnsafeMutablePointer<Float>
    /// 0.2 dB a hop: a 6 dB step in 30 hops (40 ms at 48 kHz and 64-sample hops).
    public static let trimStepDB: Float = 0.2

    public init(fftLength: Int, channelCount: Int) {
        self.channelCount = channelCount
        levels = .allocate(capacity: channelCount * Self.maxBands)
        levels.initialize(repeating: 0, count: channelCount * Self.maxBands)
        totals = .allocate(capacity: 1)
        totals.initialize(to: InputLevelTotals())
        primed = .allocate(capacity: channelCount)
        primed.initialize(repeating: false, count: channelCount)
        power = RealFFT.allocateReal(fftLength / 2 + 1)
        combined = RealFFT.allocateReal(fftLength / 2 + 1)
        gains = RealFFT.allocateReal(Self.maxBands)
        noiseState = .allocate(capacity: channelCount * Self.maxBands * NoiseReduction.fieldCount)
        noiseState.initialize(repeating: 0, count: channelCount * Self.maxBands * NoiseReduction.fieldCount)
        noiseRing = .allocate(capacity: channelCount * Self.maxBands * NoiseReduction.subwindows)
        noiseRing.initialize(repeating: NoiseReduction.unset, count: channelCount * Self.maxBands * NoiseReduction.subwindows)
        noiseCounters = .allocate(capacity: 2 * channelCount)
        noiseCounters.initialize(repeating: 0, count: 2 * channelCount)
        noisePrimed = .allocate(capacity: channelCount)
        noisePrimed.initialize(repeating: false, count: channelCount)
        steadyState = .allocate(capacity: 3 * channelCount * Self.maxBands)
        steadyState.initialize(repeating: 0, count: 3 * channelCount * Self.maxBands)
        frames = .allocate(capacity: channelCount)
        frames.initialize(repeating: 0, count: channelCount)
        phased = RealFFT.allocateComplex(fftLength / 2 + 1)
        movedSpectrum = RealFFT.allocateComplex(fftLength / 2 + 1)
        subbandGains = RealFFT.allocateReal(LoweringLayout.maxSubbands)
        pairPower = RealFFT.allocateReal(LoweringTables.maxPairs)
        trimNow = .allocate(capacity: channelCount)
        trimNow.initialize(repeating: 0, count: channelCount)
        trimFading = .allocate(capacity: channelCount)
        trimFading.initialize(repeating: 0, count: channelCount)
        trimTarget = .allocate(capacity: 1)
        trimTarget.initialize(to: 0)
    }

    /// At each hop's start (audio thread): the trim asked for, and whether a new config starts.
    @inline(__always)
    func beginHop(trimTarget target: Float, newConfig: Bool) {
        trimTarget.pointee = target
        for c in 0..<channelCount {
            trimFading[c] = trimNow[c]
            if newConfig || !trimNow[c].isFinite { trimNow[c] = target }
        }
    }

    func deallocate() {
        levels.deallocate()
        totals.deallocate()
        primed.deallocate()
        for p in [power, combined, gains] { RealFFT.free(p) }
        noiseState.deallocate()
        noiseRing.deallocate()
        noiseCounters.deallocate()
        noisePrimed.deallocate()
        steadyState.deallocate()
        frames.deallocate()
        for p in [phased, movedSpectrum, subbandGains, pairPower] { RealFFT.free(p) }
        trimNow.deallocate()
        trimFading.deallocate()
        trimTarget.deallocate()
    }

    /// The smoothed level of a band (for tests; not while the audio thread runs).
    func level(channel: Int, band: Int) -> Float { levels[channel * Self.maxBands + band] }

    /// The noise reduction's gain (linear) and noise power estimate (the detector's band power
    /// units) of a band as of the last hop (for tests; not while the audio thread runs).
    func noiseGain(channel: Int, band: Int) -> Float { noiseState[(channel * Self.maxBands + band) * NoiseReduction.fieldCount + 4] }
    func noiseEstimate(channel: Int, band: Int) -> Float {
        noiseState[(channel * Self.maxBands + band) * NoiseReduction.fieldCount + 5]
    }

    /// The level the gain curve reads (`SteadyNoiseDetector`): in steady noise (weight 1) the
    /// slow level (speech's, not the gaps'), or the fast one less `followAboveDB` where it
    /// stands that far above (a transient); in quiet (weight 0) the fast level exactly.
    @inline(__always)
    static func controlLevel(fast: Float, slow: Float, weight: Float, followAboveDB: Float) -> Float {
        fast + weight * (max(slow, fast - followAboveDB) - fast)
    }

    /// The band's digital gain in dB at a band level: the static curve trimmed by the wearer's
    /// volume (insertion gain, maximum and output limit included; `CompressorBand.gainDB`) plus
    /// the calibration offset, from the parameters in `CompressorConfig.curves`.
    @inline(__always)
    static func curve(_ q: UnsafeMutablePointer<Float>, level: Float, trimDB: Float) -> Float {
        var gain = q[0] + trimDB
        if level < q[3] {
            gain = min(gain, q[10]) - (q[3] - level) * q[4]
        } else {
            if level > q[1] { gain -= (level - q[1]) * q[2] }
            gain = min(gain, q[10])
        }
        return min(gain, q[5] - level) + q[8]
    }

    /// combined[k] = sum_b gains[b] amplitudes[b][k].
    @inline(__always)
    static func combine(
        _ gains: UnsafeMutablePointer<Float>, _ amplitudes: UnsafeMutablePointer<Float>, bands: Int, bins: Int,
        into combined: UnsafeMutablePointer<Float>
    ) {
        let g0 = gains[0]
        for k in 0..<bins { combined[k] = g0 * amplitudes[k] }
        for b in 1..<max(bands, 1) {
            let g = gains[b]
            let a = amplitudes + b * bins
            for k in 0..<bins { combined[k] += g * a[k] }
        }
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func apply(_ config: Unmanaged<CompressorConfig>, to spectrum: UnsafeMutablePointer<Float>, channel: Int, advancesState: Bool) {
        // The trim glides on the advancing render; a crossfade's fading render keeps the hop before's.
        var trim = trimFading[channel]
        if advancesState {
            trim = trimNow[channel]
            trim += min(max(trimTarget.pointee - trim, -Self.trimStepDB), Self.trimStepDB)
            trimNow[channel] = trim
        }
        config._withUnsafeGuaranteedRef { cfg in
            let bins = cfg.complexCount
            let bands = min(cfg.bandCount, Self.maxBands)
            guard bands > 0 else { return }
            // Detector: Hann window in the frequency domain, power per bin.
            for k in 0..<bins {
                let (lre, lim) = k == 0 ? (spectrum[2], -spectrum[3]) : (spectrum[2 * k - 2], spectrum[2 * k - 1])
                let (rre, rim) =
                    k == bins - 1 ? (spectrum[2 * k - 2], -spectrum[2 * k - 1]) : (spectrum[2 * k + 2], spectrum[2 * k + 3])
                let re = 0.5 * spectrum[2 * k] - 0.25 * (lre + rre)
                let im = 0.5 * spectrum[2 * k + 1] - 0.25 * (lim + rim)
                power[k] = re * re + im * im
            }
            let state = levels + channel * Self.maxBands
            let isPrimed = primed[channel]
            let p = CompressorConfig.parameterCount
            let scaleDB: Float = 3.01029996  // 10 log10(2): dB per octave of power
            let dbToLog2: Float = 0.166096405  // log2(10) / 20
            // The noise floor and noise reduction: the state moves only on the advancing
            // render; the fade-out render of a crossfade hop applies the gains as they stand.
            let nr = cfg.noise
            let denoising = nr.enabled
            let tracking = cfg.tracksNoise
            let (longTerm, floorWithin, blend) = (cfg.longTermSmoothing, cfg.floorWithin, cfg.steadyBlend)
            let noiseStart = noisePrimed[channel]
            let nrState = noiseState + channel * Self.maxBands * NoiseReduction.fieldCount
            let nrRing = noiseRing + channel * Self.maxBands * NoiseReduction.subwindows
            let hopInWindow = noiseCounters[2 * channel]
            let slot = noiseCounters[2 * channel + 1]
            let closing = hopInWindow + 1 >= nr.hopsPerSubwindow
            // Frequency lowering: the detectors read the lowered input (`LoweringTables`).
            let low = cfg.lowered
            let subbands = low.counts[channel]
            let detector = subbands > 0 ? low.detector + channel * cfg.bandCount * bins : cfg.detector
            let pairBase = channel * (cfg.bandCount + 1)
            for b in 0..<bands {
                let weights = detector + b * bins
                var sum: Float = 1e-30
                for k in cfg.detectorRange[2 * b]..<cfg.detectorRange[2 * b + 1] { sum += weights[k] * power[k] }
                if subbands > 0 {
                    for pair in low.pairStart[pairBase + b]..<low.pairStart[pairBase + b + 1] {
                        let (lo, hi, at) = (low.pairs[4 * pair + 1], low.pairs[4 * pair + 2], low.pairs[4 * pair + 3])
                        for j in lo..<hi { sum += low.pairInput[at + j - lo] * power[j] }
                    }
                }
                let target = cfg.inputDBSPLAtFullScale + scaleDB * FastMath.log2(sum)
                if advancesState, channel < InputLevelTotals.channels {
                    totals.pointee.bandPower[channel * Self.maxBands + b] += Double(sum)
                }
                let q = cfg.curves + (channel * cfg.bandCount + b) * p
                let s = nrState + b * NoiseReduction.fieldCount
                var floor: Float = 0
                if tracking, advancesState {
                    if noiseStart {
                        floor = NoiseReduction.track(
                            s, ring: nrRing + b * NoiseReduction.subwindows, power: sum, bias: cfg.noiseBias[b],
                            smoothing: nr.powerSmoothing, closing: closing, slot: slot)
                    } else {
                        NoiseReduction.prime(s, ring: nrRing + b * NoiseReduction.subwindows, power: sum)
                    }
                }
                var level = isPrimed ? state[b] : target
                let steady = steadyState + (channel * Self.maxBands + b) * 3
                if advancesState {
                    let a = target > level ? q[6] : q[7]
                    level = target + a * (level - target)
                    state[b] = level
                    // `SteadyNoiseDetector`: the weight glides to 1 while the band's noise floor
                    // matters, to 0 while it does not; the slow level runs while it matters and
                    // else stands at the fast one, so steady noise starts from where the sound
                    // is (not from the silence before it, 1 s below).
                    // The noise matters where the floor stands above the knee and within
                    // `floorWithinDB` of the band's long-term power: the band is mostly noise.
                    // (Speech alone, however loud, has a floor far below its mean.)
                    steady[2] = isPrimed ? sum + longTerm * (steady[2] - sum) : sum
                    let matters = noiseStart && floor > q[13] && steady[2] < floorWithin * floor
                    if matters {
                        let slow = isPrimed ? steady[0] : target
                        let c = target > slow ? q[11] : q[12]
                        steady[0] = target + c * (slow - target)
                    } else {
                        steady[0] = level
                    }
                    let goal: Float = matters ? 1 : 0
                    steady[1] = goal + blend * (steady[1] - goal)
                }
                let control = Self.controlLevel(fast: level, slow: steady[0], weight: steady[1], followAboveDB: q[14])
                let gainDB = Self.curve(q, level: control, trimDB: trim)
                gains[b] = FastMath.exp2(dbToLog2 * gainDB)
                var reduction: Float = 1
                if denoising, noiseStart {
                    reduction = advancesState ? NoiseReduction.gain(s, power: sum, noise: floor, speechGate: cfg.speechGate[b], nr) : s[4]
                    gains[b] *= reduction
                }
                if advancesState, channel < InputLevelTotals.channels {
                    // What the stages did (`status`): the gain against the knee's, and so on.
                    let at = channel * Self.maxBands + b
                    totals.pointee.compressionDB[at] += Double(gainDB - Self.curve(q, level: q[1], trimDB: trim))
                    totals.pointee.followingSpeech[at] += Double(steady[1])
                    if reduction < 1 { totals.pointee.noiseReductionDB[at] += Double(6.02059991 * FastMath.log2(reduction)) }
                }
            }
            if advancesState {
                primed[channel] = true
                if channel < InputLevelTotals.channels {
                    var broadband: Float = 0
                    for k in 0..<bins { broadband += (k == 0 || k == bins - 1 ? 1 : 2) * power[k] }
                    totals.pointee.broadbandPower[channel] += Double(broadband * cfg.broadbandScale)
                    totals.pointee.hops[channel] += 1
                }
                if tracking {
                    if noiseStart {
                        noiseCounters[2 * channel] = closing ? 0 : hopInWindow + 1
                        if closing { noiseCounters[2 * channel + 1] = (slot + 1) % NoiseReduction.subwindows }
                    } else {
                        noiseCounters[2 * channel] = 0
                        noiseCounters[2 * channel + 1] = 0
                    }
                }
                // Off (or a config without it): start afresh when it comes back on.
                noisePrimed[channel] = tracking
            }
            // Combined real amplitude sum_b g_b A_b, then the common linear phase.
            let amplitudes = cfg.amplitudes + channel * cfg.bandCount * bins
            Self.combine(gains, amplitudes, bands: bands, bins: bins, into: combined)
            if subbands > 0 {
                // What each pair's moved output would put into its band's detector at unit gain.
                for pair in low.pairStart[pairBase]..<low.pairStart[pairBase + bands] {
                    let (lo, hi, at) = (low.pairs[4 * pair + 1], low.pairs[4 * pair + 2], low.pairs[4 * pair + 3])
                    var sum: Float = 0
                    for j in lo..<hi { sum += low.pairOutput[at + j - lo] * power[j] }
                    pairPower[pair - low.pairStart[pairBase]] = sum
                }
                Self.subbandGains(low, channel: channel, subbands: subbands, gains: gains, bands: bands, into: subbandGains)
            }
            // The output limit on what actually plays: each band's curve limits its own input
            // level, but bands that share a centre add up (a steady tone between two centres
            // was measured 3.8 dB over the limit). Read the combined output through each
            // band's detector weights and lower the bands that exceed their limit. A band lowered
            // alone leaves its neighbours' share, so look again, up to three times (measured:
            // one pass left a 2 kHz tone 1.1 dB over, three within a few tenths).
            for _ in 0..<3 {
                var lowered = false
                for b in 0..<bands {
                    let weights = cfg.detector + b * bins
                    var sum: Float = 1e-30
                    for k in cfg.detectorRange[2 * b]..<cfg.detectorRange[2 * b + 1] {
                        sum += weights[k] * combined[k] * combined[k] * power[k]
                    }
                    if subbands > 0 {
                        for pair in low.pairStart[pairBase + b]..<low.pairStart[pairBase + b + 1] {
                            let g = subbandGains[low.pairs[4 * pair]]
                            sum += g * g * pairPower[pair - low.pairStart[pairBase]]
                        }
                    }
                    let over = scaleDB * FastMath.log2(sum) - cfg.curves[(channel * cfg.bandCount + b) * p + 9]
                    if over > 0.05 {
                        gains[b] *= FastMath.exp2(-dbToLog2 * over)
                        lowered = true
                        if advancesState, channel < InputLevelTotals.channels {
                            totals.pointee.outputLimitDB[channel * Self.maxBands + b] -= Double(over)
                        }
                    }
                }
                if !lowered { break }
                Self.combine(gains, amplitudes, bands: bands, bins: bins, into: combined)
                if subbands > 0 {
                    Self.subbandGains(low, channel: channel, subbands: subbands, gains: gains, bands: bands, into: subbandGains)
                }
            }
            if subbands > 0 {
                // The moved sub-bands, from the input before it is overwritten.
                for k in 0..<bins {
                    let (x, y) = (spectrum[2 * k], spectrum[2 * k + 1])
                    let (c, s) = (cfg.phase[2 * k], cfg.phase[2 * k + 1])
                    phased[k] = x * c - y * s
                    phased[bins + k] = x * s + y * c
                }
                let firstSample = (frames[channel] + 1) * low.hopSize % low.fftLength
                Self.lower(
                    low, channel: channel, subbands: subbands, firstSample: firstSample, gains: subbandGains, input: phased,
                    into: movedSpectrum)
            }
            for k in 0..<bins {
                let (x, y) = (spectrum[2 * k], spectrum[2 * k + 1])
                let (c, s) = (cfg.phase[2 * k] * combined[k], cfg.phase[2 * k + 1] * combined[k])
                spectrum[2 * k] = x * c - y * s
                spectrum[2 * k + 1] = x * s + y * c
            }
            if subbands > 0 {
                for k in 0..<bins {
                    spectrum[2 * k] += movedSpectrum[k]
                    spectrum[2 * k + 1] += movedSpectrum[bins + k]
                }
            }
            if advancesState { frames[channel] = (frames[channel] + 1) % max(low.fftLength, 1) }
        }
    }

    /// G_i = sum_b gainWeights[i][b] g_b: each sub-band's gain where it lands.
    @inline(__always)
    static func subbandGains(
        _ low: LoweringTables, channel: Int, subbands: Int, gains: UnsafeMutablePointer<Float>, bands: Int,
        into result: UnsafeMutablePointer<Float>
    ) {
        for i in 0..<subbands {
            let w = low.gainWeights + (channel * LoweringTables.stride + i) * low.bandCount
            var g: Float = 0
            for b in 0..<bands { g += w[b] * gains[b] }
            result[i] = g
        }
    }

    /// The moved half spectrum (`LoweringTables`): every sub-band of `channel` shifted down by
    /// its bins and turned by e^(-2 pi i m t0 / N), t0 = `firstSample` (the frame's first
    /// sample mod N), times its gain. `input` is X e^(-2 pi i k D / N) and `out` the result,
    /// each as bins real parts, then bins imaginary parts (contiguous, so the loops vectorise).
    @inline(__always)
    static func lower(
        _ low: LoweringTables, channel: Int, subbands: Int, firstSample t0: Int, gains: UnsafeMutablePointer<Float>,
        input x: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>
    ) {
        let bins = low.bins
        let half = bins - 1  // N / 2
        let n = low.fftLength
        let (xr, xi, yr, yi) = (x, x + bins, out, out + bins)
        for i in 0..<(2 * bins) { out[i] = 0 }
        for i in 0..<subbands {
            let m = low.shifts[channel * LoweringTables.stride + i]
            let p = low.moved + (channel * LoweringTables.stride + i) * bins
            let q = low.image + (channel * LoweringTables.stride + i) * bins
            let turn = m * t0 % n
            let g = gains[i]
            let (cr, ci) = (g * low.rotation[2 * turn], g * low.rotation[2 * turn + 1])
            // The mirror splits each term in two: four runs of one multiply-add.
            // c X'[k+m] P[k+m], and past N/2 its mirror c conj(X'[N-k-m] Q[N-k-m]).
            accumulate(yr, yi, from: 0, to: half - m + 1, xr, xi, p, first: m, step: 1, conjugate: false, cr, ci)
            accumulate(yr, yi, from: half - m + 1, to: half + 1, xr, xi, q, first: n - half - 1, step: -1, conjugate: true, cr, ci)
            // conj(c) X'[k-m] Q[k-m] (the image), and below 0 its mirror conj(c) conj(X'[m-k] P[m-k]).
            accumulate(yr, yi, from: m, to: half + 1, xr, xi, q, first: 0, step: 1, conjugate: false, cr, -ci)
            accumulate(yr, yi, from: 0, to: m, xr, xi, p, first: m, step: -1, conjugate: true, cr, -ci)
        }
    }

    /// y[k] += (cr + i ci) (a + i b) for k in `from`..<`to`, (a, b) = (xr[j] w[j], +-xi[j] w[j])
    /// (minus when `conjugate`), j = first + step (k - from), step 1 or -1. Four at a time.
    @inline(__always)
    static func accumulate(
        _ yr: UnsafeMutablePointer<Float>, _ yi: UnsafeMutablePointer<Float>, from start: Int, to end: Int,
        _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>, _ w: UnsafeMutablePointer<Float>, first: Int, step: Int,
        conjugate: Bool, _ cr: Float, _ ci: Float
    ) {
        @inline(__always) func load(_ p: UnsafeMutablePointer<Float>, _ j: Int) -> SIMD4<Float> {
            // Four from j on, or when stepping down, from j down to j - 3 (reversed).
            let v = UnsafeRawPointer(p + (step > 0 ? j : j &- 3)).loadUnaligned(as: SIMD4<Float>.self)
            return step > 0 ? v : SIMD4(v[3], v[2], v[1], v[0])
        }
        let sign: Float = conjugate ? -1 : 1
        var k = start
        var j = first
        while k &+ 4 <= end {
            let weight = load(w, j)
            let a = load(xr, j) * weight
            let b = sign * load(xi, j) * weight
            let real = UnsafeMutableRawPointer(yr + k)
            let imaginary = UnsafeMutableRawPointer(yi + k)
            real.storeBytes(of: real.loadUnaligned(as: SIMD4<Float>.self) + cr * a - ci * b, as: SIMD4<Float>.self)
            imaginary.storeBytes(of: imaginary.loadUnaligned(as: SIMD4<Float>.self) + cr * b + ci * a, as: SIMD4<Float>.self)
            k = k &+ 4
            j = j &+ 4 &* step
        }
        while k < end {
            let (a, b) = (xr[j] * w[j], sign * xi[j] * w[j])
            yr[k] += cr * a - ci * b
            yi[k] += cr * b + ci * a
            k = k &+ 1
            j = j &+ step
        }
    }
}
