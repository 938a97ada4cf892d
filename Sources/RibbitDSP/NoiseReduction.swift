import Glibc

/// Noise reduction as a per-band gain on top of the compressor's band gains: per hop and band,
/// a noise floor estimate, an a-priori SNR and a Wiener gain, multiplied into g_b before the
/// bands are combined. So the engine still applies one symmetric FIR sum_b g_b H_b of the same
/// length: no added latency, no time aliasing, no per-bin (musical) noise; a few operations per
/// band per hop.
///
/// `strength` 0...1 scales the most the reduction may attenuate a band (the Wiener gain's
/// floor): maxAttenuationDB = 15 dB x strength. Ephraim-Malah type speech enhancement usually
/// floors its gains (or its a-priori SNR) somewhere around -15 to -25 dB, the floor keeping the
/// residual noise from turning musical (Cappe 1994 discusses it); hearing-aid noise reduction
/// is usually described as taking steady noise down by up to about 10-12 dB (e.g. the review
/// by Bentler & Chiou 2006), because a band that carries speech and noise at once cannot be
/// cleaned by a band gain. (Both from memory, not re-checked.) 15 dB sits between the two: 3 dB
/// past the products' top, at the shallow end of the enhancement floors. Measured with the
/// default time constants (espeak-ng speech, stationary speech-shaped noise at 0 dB SNR,
/// Hagerman; NoiseReductionTests): a 12 dB floor improved the SNR by 4.4 dB (speech component
/// -5.5 dB), 15 dB by 5.4 dB (-6.5 dB), 18 dB by 6.3 dB (-7.2 dB). Strength 0.8 is the
/// products' 12 dB. The default is strength 1; 0 is off and leaves the compressor's output bit
/// for bit as without noise reduction.
public struct NoiseReductionSettings: Sendable, Equatable {
    /// 0 (off) ... 1 (the most: 15 dB attenuation of a band of noise alone).
    public var strength: Double

    public init(strength: Double) {
        self.strength = min(max(strength.isFinite ? strength : 0, 0), 1)
    }

    /// The deepest a band is attenuated (the Wiener gain's floor), in dB.
    public var maxAttenuationDB: Double { strength * Self.attenuationAtFullStrengthDB }
    public var isOn: Bool { strength > 0 }

    public static let attenuationAtFullStrengthDB = 15.0
    public static let off = NoiseReductionSettings(strength: 0)
    public static let `default` = NoiseReductionSettings(strength: 1)

    // The algorithm's constants (documented in `NoiseReduction`).
    /// Band power smoothing before the minimum search (seconds).
    public static let powerSmoothingSeconds = 0.05
    /// The end of a sound: the band's power held this far under its smoothed power for this
    /// long. Then the smoothed power drops at once to the loudest hop of that stretch, so the
    /// floor is what the band fell to, not the smoother's decay from the sound. Without it, in
    /// a pause after speech the decay, about 25 dB under the speech, stood as the floor for the
    /// next 1.5 s and took weak parts of clean speech out with it (a flat fitting in program
    /// noisy: PESQ of clean speech 4.14; bench/speech-in-noise.py, whose synthetic speech
    /// pauses in digital silence; a room's own noise under the pause gives the same fall). Noise
    /// alone does not stand 30 dB under its mean for 30 ms: the band's power over a hop is a
    /// sum of many squared bins, and even one complex bin (exponential) is that far down in one
    /// hop in a thousand, independently about every 4 hops. 20 or 25 dB cost babble 0.2-0.5 dB
    /// of SNR improvement (in a Python model). 30 ms, not 10: a dropout of the input (zeros
    /// from a device or a link) shorter than that leaves the floor alone; a longer one takes it
    /// down like silence, and noise reduction then waits for the minimum search (up to 1.7 s).
    public static let soundEndDropDB = 30.0
    public static let soundEndSeconds = 0.03
    /// The minimum search window (seconds) and the number of sub-windows it is tracked in.
    public static let minimumWindowSeconds = 1.5
    /// Decision-directed a-priori SNR weight (Ephraim & Malah 1984), per hop: 0.98 on noise,
    /// 0.8 once the band's smoothed power stands clearly above its noise floor (speech): at
    /// 0.98 a band whose SNR is under about 5.5 dB stays at the floor (the recursion's fixed
    /// point), which took weak speech out with the noise and cost STOI (bench/speech-in-noise:
    /// 0.735 / 0.816 / 0.890 in speech-shaped noise at 0 / 5 / 10 dB SNR, input 0.755 / 0.859 /
    /// 0.926; with the switch 0.768 / 0.867 / 0.927).
    public static let priorWeight = 0.98
    public static let speechPriorWeight = 0.8
    /// "Clearly above": the smoothed power over the noise estimate beyond 1 + margin + spreads
    /// x the smoothed power's relative standard deviation on noise alone (per band,
    /// `NoiseReduction.relativeSpread`). Noise alone then never passes it: on white and on
    /// speech-shaped noise the gains hold still as without it (NoiseReductionTests); at 4
    /// spreads the 125 Hz band's noise passed it and stepped the gain by 9 dB, at margin 0 the
    /// bands whose floor is estimated 0.5 dB low did.
    public static let speechGateSpreads = 5.0
    public static let speechGateMargin = 0.25
    /// Gain smoothing: rising (10 ms, so onsets pass; 5 ms let steady noise move a band's gain
    /// by 1.2 dB in one hop) and falling (20 ms; 40 ms cost 0.3 dB of SNR improvement).
    public static let gainRiseSeconds = 0.01
    public static let gainFallSeconds = 0.02
}

/// What the audio thread needs, prepared with the compressor's config (plain values).
struct NoiseReductionParameters: BitwiseCopyable {
    var enabled = false
    /// One-pole coefficient of the band power smoothing, per hop.
    var powerSmoothing: Float = 0
    /// Hops per sub-window of the minimum search.
    var hopsPerSubwindow = 1
    var priorWeight: Float = 0
    var speechPriorWeight: Float = 0
    /// 10^(-maxAttenuationDB / 20).
    var floorGain: Float = 1
    var rise: Float = 0
    var fall: Float = 0
    /// 10^(-soundEndDropDB / 10), and the hops the drop must hold.
    var soundEndRatio: Float = 0
    var soundEndHops: Int32 = 1

    init() {}

    init(_ settings: NoiseReductionSettings, hopSize: Int, sampleRate: Double) {
        let hop = Double(hopSize) / sampleRate
        enabled = settings.isOn
        powerSmoothing = Float(exp(-hop / NoiseReductionSettings.powerSmoothingSeconds))
        hopsPerSubwindow = max(1, Int((NoiseReductionSettings.minimumWindowSeconds / hop / Double(NoiseReduction.subwindows)).rounded()))
        priorWeight = Float(NoiseReductionSettings.priorWeight)
        speechPriorWeight = Float(NoiseReductionSettings.speechPriorWeight)
        floorGain = Float(pow(10, -settings.maxAttenuationDB / 20))
        rise = Float(exp(-hop / NoiseReductionSettings.gainRiseSeconds))
        fall = Float(exp(-hop / NoiseReductionSettings.gainFallSeconds))
        soundEndRatio = Float(pow(10, -NoiseReductionSettings.soundEndDropDB / 10))
        soundEndHops = Int32(max(1, (NoiseReductionSettings.soundEndSeconds / hop).rounded()))
    }
}

/// The per-band algorithm, on raw state (no allocation; called from `CompressorStage.apply`).
///
/// Input: the compressor detector's band power P (calibrated sum of Hann-windowed bin powers)
/// of the current hop. Per band:
/// 1. Smoothed power S = P + a (S - P), a = exp(-hop / 50 ms); where P has stayed 30 dB under
///    S for 30 ms (the end of a sound, `soundEndDropDB`), S drops to the loudest P of them.
/// 2. Noise floor by minimum statistics (the idea of Martin 2001, "Noise power spectral density
///    estimation based on optimal smoothing and minimum statistics", simplified: fixed
///    smoothing, no optimal alpha): the minimum of S over the last ~1.5 s, tracked as the
///    minima of U = 8 sub-windows of V hops (V = 141 at 48 kHz, hop 64) plus the running
///    minimum of the current sub-window, so the search window slides in steps of V hops and a
///    falling noise floor is followed at once. The minimum of a fluctuating power lies below
///    its mean; `bias` (per band, from `biasCompensation`) scales it back up: N = bias min S.
/// 3. A-priori SNR by the decision-directed rule (Ephraim & Malah 1984):
///    xi = alpha A2 / N + (1 - alpha) max(P / N - 1, 0), A2 = w^2 P of the previous hop (the
///    clean power the previous hop's Wiener gain w estimated), alpha = 0.98 on noise and 0.8
///    while S / N stands above the band's speech gate (`speechGateSpreads`).
/// 4. Wiener gain w = xi / (1 + xi), floored at 10^(-maxAttenuationDB / 20).
/// 5. The applied gain follows it with a one-pole smoother: 10 ms rising (at once above the
///    speech gate, so onsets pass whole), 20 ms falling.
enum NoiseReduction {
    /// Sub-windows of the minimum search (Martin's U).
    static let subwindows = 8
    static let unset = Float.greatestFiniteMagnitude

    /// One band's state.
    struct Band: Equatable {
        /// S, the smoothed power.
        var smoothed: Float = 0
        /// The minimum of S in the current sub-window, and of the finished ones.
        var runningMinimum: Float = 0
        var pastMinimum: Float = 0
        /// A2: the clean power the previous hop's Wiener gain estimated.
        var cleanPower: Float = 0
        /// The gain applied, and the noise estimate (kept for tests and reports).
        var gain: Float = 0
        var noise: Float = 0
        /// Hops in a row the power has stood `soundEndDropDB` under S, and the loudest of them.
        var fallenHops: Int32 = 0
        var fallenPeak: Float = 0
    }

    /// Where the minimum search stands, per channel: hops into the current sub-window and the
    /// ring slot it closes into.
    struct Clock: Equatable {
        var hopInWindow = 0
        var slot = 0
    }

    /// Starts a band from its first power: no noise known yet beyond "at most this", gain 1.
    @inline(__always)
    static func prime(_ state: UnsafeMutablePointer<Band>, ring: UnsafeMutablePointer<Float>, power: Float) {
        state.pointee = Band(smoothed: power, runningMinimum: power, pastMinimum: unset, cleanPower: power, gain: 1, noise: power)
        for u in 0..<subwindows { ring[u] = unset }
    }

    /// One hop of one band's noise floor (the smoothed power and the minimum search): advances
    /// that state and returns the noise estimate. `closing`: this hop ends a sub-window; `slot`:
    /// the ring entry it goes to. The compressor tracks the floor with or without noise
    /// reduction: its detectors follow speech, not noise, where the floor matters
    /// (`SteadyNoiseDetector`).
    @inline(__always)
    static func track(
        _ state: UnsafeMutablePointer<Band>, ring: UnsafeMutablePointer<Float>, power: Float, bias: Float,
        _ p: NoiseReductionParameters, closing: Bool, slot: Int
    ) -> Float {
        var previous = state.pointee.smoothed
        if power < p.soundEndRatio * previous {
            state.pointee.fallenPeak = state.pointee.fallenHops == 0 ? power : max(state.pointee.fallenPeak, power)
            state.pointee.fallenHops += 1
            if state.pointee.fallenHops >= p.soundEndHops { previous = min(previous, state.pointee.fallenPeak) }
        } else {
            state.pointee.fallenHops = 0
        }
        let smoothed = power + p.powerSmoothing * (previous - power)
        state.pointee.smoothed = smoothed
        var running = min(state.pointee.runningMinimum, smoothed)
        if closing {
            ring[slot] = running
            var past = ring[0]
            for u in 1..<subwindows { past = min(past, ring[u]) }
            state.pointee.pastMinimum = past
            running = smoothed
        }
        state.pointee.runningMinimum = running
        let noise = max(bias * min(running, state.pointee.pastMinimum), 1e-30)
        state.pointee.noise = noise
        return noise
    }

    /// One hop of one band's Wiener gain on the noise `track` just returned: advances the
    /// gain's state and returns the gain to apply.
    @inline(__always)
    static func gain(
        _ state: UnsafeMutablePointer<Band>, power: Float, noise: Float, speechGate: Float, _ p: NoiseReductionParameters
    ) -> Float {
        let posterior = min(power / noise, 1e6)
        let speech = state.pointee.smoothed > speechGate * noise
        let alpha = speech ? p.speechPriorWeight : p.priorWeight
        let prior = alpha * min(state.pointee.cleanPower / noise, 1e6) + (1 - alpha) * max(posterior - 1, 0)
        let wiener = max(prior / (1 + prior), p.floorGain)
        let previous = state.pointee.gain
        let c = wiener > previous ? (speech ? 0 : p.rise) : p.fall
        let gain = wiener + c * (previous - wiener)
        state.pointee.gain = gain
        state.pointee.cleanPower = wiener * wiener * power
        return gain
    }

    /// The factor that turns the expected minimum of a band's smoothed power into its mean.
    ///
    /// The band power is sum_k w_k |X_k|^2 over Hann-windowed bins; on noise each |X_k|^2 is
    /// exponential (relative variance 1), so the sum's relative variance is
    /// c_f sum w^2 / (sum w)^2, c_f = 1 + 2 (4/9) + 2 (1/36) = 1.94 for the correlation of
    /// neighbouring Hann bins (|rho| = 2/3 and 1/6, squared). Frames overlap by 75 %
    /// (correlation of their powers 0.43 at one hop, 0.03 at two: c_t = 1.92), and the one-pole
    /// smoother keeps (1 - a) / (1 + a) of that variance. The minimum over the window of M
    /// roughly independent looks (one per 2 tau of the smoother, so M = 15 for 1.5 s and 50 ms)
    /// lies about z = 1.8 standard deviations below the mean (expected minimum of 15 normal
    /// values, by the Gumbel approximation). So bias = 1 / (1 - z sigma), sigma the relative
    /// standard deviation of S; held to at most 2 (3 dB) where the normal picture fails.
    static func biasCompensation(weights: [Double], hopSize: Int, sampleRate: Double) -> Double {
        guard weights.reduce(0, +) > 0 else { return 1 }
        let sigma = relativeSpread(weights: weights, hopSize: hopSize, sampleRate: sampleRate)
        let looks = NoiseReductionSettings.minimumWindowSeconds / (2 * NoiseReductionSettings.powerSmoothingSeconds)
        let l = 2 * log(looks)
        let z = l.squareRoot() - (log(log(looks)) + log(4 * Double.pi)) / (2 * l.squareRoot()) + 0.5772 / l.squareRoot()
        return min(1 / max(1 - z * sigma, 0.5), 2)
    }

    /// The relative standard deviation of a band's smoothed power S on stationary noise (see
    /// `biasCompensation`).
    static func relativeSpread(weights: [Double], hopSize: Int, sampleRate: Double) -> Double {
        let sum = weights.reduce(0, +)
        guard sum > 0 else { return 0 }
        let squares = weights.reduce(0) { $0 + $1 * $1 }
        let a = exp(-Double(hopSize) / sampleRate / NoiseReductionSettings.powerSmoothingSeconds)
        return (1.94 * squares / (sum * sum) * 1.92 * (1 - a) / (1 + a)).squareRoot()
    }

    /// The band's speech gate: S / N beyond it is speech (`speechGateSpreads`).
    static func speechGate(weights: [Double], hopSize: Int, sampleRate: Double) -> Double {
        1 + NoiseReductionSettings.speechGateMargin
            + NoiseReductionSettings.speechGateSpreads * relativeSpread(weights: weights, hopSize: hopSize, sampleRate: sampleRate)
    }
}
