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
    /// [channel][band]: what the audio thread reads of each band (`BandCurve`).
    let curves: UnsafeMutablePointer<BandCurve>
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

        curves = .allocate(capacity: channelCount * bandCount)
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
                (curves + c * bandCount + b).initialize(
                    to: BandCurve(
                        gainDB: Float(band.gainDB), kneeDBSPL: Float(band.kneeDBSPL), compressionSlope: Float(1 - 1 / band.ratio),
                        expansionKneeDBSPL: Float(band.expansionKneeDBSPL), expansionSlope: Float(band.expansionRatio - 1),
                        limitDBSPL: Float(band.limitDBSPL), attack: coefficients[b].attack, release: coefficients[b].release,
                        digitalOffsetDB: Float(offset), outputLimit: Float(outputThreshold), maximumGainDB: Float(band.maximumGainDB),
                        slowAttack: slowCoefficients[b].attack, slowRelease: slowCoefficients[b].release,
                        steadyFloor: ear.steadyNoise == nil
                            ? .infinity : Float(pow(10, (band.steadyNoiseKneeDBSPL - calibration.inputDBSPLAtFullScale) / 10)),
                        followAboveDB: Float(ear.steadyNoise?.followAboveDB ?? .infinity)))
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
            for pointer in [amplitudes, phase, detector] { pointer.deallocate() }
        } else {
            for pointer in [amplitudes, phase, detector] { RealFFT.free(pointer) }
        }
        curves.deallocate()
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
        for row in 0..<(channelCount * bandCount) { (curves[row].attack, curves[row].release) = (0, 0) }
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
        let x = (0..<n).map { t in HannWindow.value(t, length: n) * cos(2 * Double.pi * frequency * Double(t) + phase) }
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
        curves[channel * bandCount + band].gainDB(atLevel: level, trimDB: trimDB)
    }
}

/// One band of one ear as the audio thread reads it: the static curve (`CompressorBand`) in
/// the Float arithmetic of the audio thread, its detector's time constants and the limits.
struct BandCurve {
    var gainDB: Float
    var kneeDBSPL: Float
    /// 1 - 1 / ratio: dB of gain lost per dB above the knee.
    var compressionSlope: Float
    var expansionKneeDBSPL: Float
    /// expansionRatio - 1: dB of gain lost per dB below the expansion knee.
    var expansionSlope: Float
    var limitDBSPL: Float
    /// The level detector's one-pole coefficients per hop (`CompressorConfig.detectorCoefficients`).
    var attack: Float
    var release: Float
    /// The calibration's digital offset (inputDBSPLAtFullScale - the ear's output level at full scale).
    var digitalOffsetDB: Float
    /// The output limit on the combined output, in dB of the detector's sum.
    var outputLimit: Float
    var maximumGainDB: Float
    /// `SteadyNoiseDetector`: the slow detector's coefficients, the noise floor that matters (a
    /// detector sum; infinity: never) and how far the fast level may stand above the slow one.
    var slowAttack: Float
    var slowRelease: Float
    var steadyFloor: Float
    var followAboveDB: Float

    /// The band's digital gain in dB at a band level: the static curve trimmed by the wearer's
    /// volume (insertion gain, maximum and output limit included; `CompressorBand.gainDB`) plus
    /// the calibration offset.
    @inline(__always)
    func gainDB(atLevel level: Float, trimDB: Float) -> Float {
        var gain = gainDB + trimDB
        if level < expansionKneeDBSPL {
            gain = min(gain, maximumGainDB) - (expansionKneeDBSPL - level) * expansionSlope
        } else {
            if level > kneeDBSPL { gain -= (level - kneeDBSPL) * compressionSlope }
            gain = min(gain, maximumGainDB)
        }
        return min(gain, limitDBSPL - level) + digitalOffsetDB
    }
}
