import Glibc

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
    /// Noise reduction state: [channel][band], the minimum search's ring
    /// [channel][band][NoiseReduction.subwindows], [channel] where the search stands and
    /// whether it has started.
    let noiseState: UnsafeMutablePointer<NoiseReduction.Band>
    let noiseRing: UnsafeMutablePointer<Float>
    let noiseClock: UnsafeMutablePointer<NoiseReduction.Clock>
    let noisePrimed: UnsafeMutablePointer<Bool>
    /// `SteadyNoiseDetector` state, [channel][band].
    let steadyState: UnsafeMutablePointer<SteadyNoiseState>
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
        noiseState = .allocate(capacity: channelCount * Self.maxBands)
        noiseState.initialize(repeating: NoiseReduction.Band(), count: channelCount * Self.maxBands)
        noiseRing = .allocate(capacity: channelCount * Self.maxBands * NoiseReduction.subwindows)
        noiseRing.initialize(repeating: NoiseReduction.unset, count: channelCount * Self.maxBands * NoiseReduction.subwindows)
        noiseClock = .allocate(capacity: channelCount)
        noiseClock.initialize(repeating: NoiseReduction.Clock(), count: channelCount)
        noisePrimed = .allocate(capacity: channelCount)
        noisePrimed.initialize(repeating: false, count: channelCount)
        steadyState = .allocate(capacity: channelCount * Self.maxBands)
        steadyState.initialize(repeating: SteadyNoiseState(), count: channelCount * Self.maxBands)
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
        noiseClock.deallocate()
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
    func noiseGain(channel: Int, band: Int) -> Float { noiseState[channel * Self.maxBands + band].gain }
    func noiseEstimate(channel: Int, band: Int) -> Float { noiseState[channel * Self.maxBands + band].noise }

    /// The level the gain curve reads (`SteadyNoiseDetector`): in steady noise (weight 1) the
    /// slow level (speech's, not the gaps'), or the fast one less `followAboveDB` where it
    /// stands that far above (a transient); in quiet (weight 0) the fast level exactly.
    @inline(__always)
    static func controlLevel(fast: Float, slow: Float, weight: Float, followAboveDB: Float) -> Float {
        fast + weight * (max(slow, fast - followAboveDB) - fast)
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

    /// One hop of one channel, stage by stage: the detector's power per bin; per band its
    /// level, noise floor, control level, curve and noise reduction (`bandGain`); the hop's
    /// bookkeeping; the combined filter; the output limit on what it would play; the filter,
    /// and the moved sub-bands, applied to the spectrum.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func apply(_ config: Unmanaged<CompressorConfig>, to spectrum: UnsafeMutablePointer<Float>, channel: Int, advancesState: Bool) {
        let trim = glideTrim(channel: channel, advancesState: advancesState)
        config._withUnsafeGuaranteedRef { cfg in
            guard cfg.bandCount > 0 else { return }
            let hop = Hop(
                cfg, channel: channel, advancesState: advancesState, trim: trim, clock: noiseClock[channel],
                noiseStarted: noisePrimed[channel], levelsPrimed: primed[channel])
            detectorPower(spectrum, bins: hop.bins)
            for b in 0..<hop.bands { gains[b] = bandGain(cfg, hop, band: b) }
            if advancesState { endHop(cfg, hop) }
            let amplitudes = cfg.amplitudes + channel * cfg.bandCount * hop.bins
            Self.combine(gains, amplitudes, bands: hop.bands, bins: hop.bins, into: combined)
            if hop.subbands > 0 { unitPairPowers(cfg.lowered, hop) }
            limitOutput(cfg, hop, amplitudes: amplitudes)
            filter(spectrum, cfg, hop)
        }
    }

    /// What one hop of one channel reads throughout.
    struct Hop {
        let channel: Int
        let bins: Int
        let bands: Int
        let advancesState: Bool
        /// The wearer's volume (dB) this hop.
        let trim: Float
        /// Whether this channel's detectors and noise floors have seen a hop before.
        let levelsPrimed: Bool
        let noiseStarted: Bool
        /// The minimum search: this hop closes a sub-window into `slot`.
        let clock: NoiseReduction.Clock
        let closing: Bool
        /// Frequency lowering: the sub-bands (0: not lowered), the detector weights the lowered
        /// input needs, and the channel's first entry in `LoweringTables.pairStart`.
        let subbands: Int
        let detector: UnsafeMutablePointer<Float>
        let pairBase: Int
        /// Whether the stage meters this channel (`InputLevelTotals`) on this render.
        let meters: Bool

        @inline(__always)
        init(
            _ cfg: borrowing CompressorConfig, channel: Int, advancesState: Bool, trim: Float, clock: NoiseReduction.Clock,
            noiseStarted: Bool,
            levelsPrimed: Bool
        ) {
            self.channel = channel
            bins = cfg.complexCount
            bands = min(cfg.bandCount, CompressorStage.maxBands)
            self.advancesState = advancesState
            self.trim = trim
            self.levelsPrimed = levelsPrimed
            self.noiseStarted = noiseStarted
            self.clock = clock
            closing = clock.hopInWindow + 1 >= cfg.noise.hopsPerSubwindow
            subbands = cfg.lowered.counts[channel]
            detector = subbands > 0 ? cfg.lowered.detector + channel * cfg.bandCount * bins : cfg.detector
            pairBase = channel * (cfg.bandCount + 1)
            meters = advancesState && channel < InputLevelTotals.channels
        }
    }

    static let dBPerLog2Power: Float = 3.01029996  // 10 log10(2)
    static let log2PerDB: Float = 0.166096405  // log2(10) / 20

    /// The trim glides on the advancing render; a crossfade's fading render keeps the hop before's.
    @inline(__always)
    func glideTrim(channel: Int, advancesState: Bool) -> Float {
        guard advancesState else { return trimFading[channel] }
        var trim = trimNow[channel]
        trim += min(max(trimTarget.pointee - trim, -Self.trimStepDB), Self.trimStepDB)
        trimNow[channel] = trim
        return trim
    }

    /// The detector's power per bin: the input through a Hann window applied in the frequency
    /// domain, 0.5 X[k] - 0.25 (X[k-1] + X[k+1]).
    @inline(__always)
    func detectorPower(_ spectrum: UnsafeMutablePointer<Float>, bins: Int) {
        for k in 0..<bins {
            let (lre, lim) = k == 0 ? (spectrum[2], -spectrum[3]) : (spectrum[2 * k - 2], spectrum[2 * k - 1])
            let (rre, rim) = k == bins - 1 ? (spectrum[2 * k - 2], -spectrum[2 * k - 1]) : (spectrum[2 * k + 2], spectrum[2 * k + 3])
            let re = 0.5 * spectrum[2 * k] - 0.25 * (lre + rre)
            let im = 0.5 * spectrum[2 * k + 1] - 0.25 * (lim + rim)
            power[k] = re * re + im * im
        }
    }

    /// One band's linear gain this hop: its detector's power, the noise floor under it, the
    /// level its curve reads, the curve, and noise reduction on top; metered.
    @inline(__always)
    func bandGain(_ cfg: CompressorConfig, _ hop: Hop, band b: Int) -> Float {
        let sum = bandPower(cfg, hop, band: b)
        let at = hop.channel * Self.maxBands + b
        if hop.meters { totals.pointee.bandPower[at] += Double(sum) }
        let curve = cfg.curves + (hop.channel * cfg.bandCount + b)
        let noise = noiseState + at
        // The noise floor moves only on the advancing render; the fade-out render of a
        // crossfade hop applies the gains as they stand.
        var floor: Float = 0
        if cfg.tracksNoise, hop.advancesState {
            let ring = noiseRing + at * NoiseReduction.subwindows
            if hop.noiseStarted {
                floor = NoiseReduction.track(
                    noise, ring: ring, power: sum, bias: cfg.noiseBias[b], cfg.noise, closing: hop.closing,
                    slot: hop.clock.slot)
            } else {
                NoiseReduction.prime(noise, ring: ring, power: sum)
            }
        }
        let target = cfg.inputDBSPLAtFullScale + Self.dBPerLog2Power * FastMath.log2(sum)
        let control = controlLevel(cfg, hop, band: b, curve: curve, target: target, power: sum, floor: floor)
        let gainDB = curve.pointee.gainDB(atLevel: control, trimDB: hop.trim)
        var gain = FastMath.exp2(Self.log2PerDB * gainDB)
        var reduction: Float = 1
        if cfg.noise.enabled, hop.noiseStarted {
            reduction =
                hop.advancesState
                ? NoiseReduction.gain(noise, power: sum, noise: floor, speechGate: cfg.speechGate[b], cfg.noise) : noise.pointee.gain
            gain *= reduction
        }
        if hop.meters {
            // What the stages did (`status`): the gain against the knee's, and so on.
            totals.pointee.compressionDB[at] += Double(gainDB - curve.pointee.gainDB(atLevel: curve.pointee.kneeDBSPL, trimDB: hop.trim))
            totals.pointee.followingSpeech[at] += Double(steadyState[at].weight)
            if reduction < 1 { totals.pointee.noiseReductionDB[at] += Double(6.02059991 * FastMath.log2(reduction)) }
        }
        return gain
    }

    /// The band's detector: sum_k W_b(f_k) |X_hann[k]|^2, plus what moved sub-bands bring.
    @inline(__always)
    func bandPower(_ cfg: CompressorConfig, _ hop: Hop, band b: Int) -> Float {
        let weights = hop.detector + b * hop.bins
        var sum: Float = 1e-30
        for k in cfg.detectorRange[2 * b]..<cfg.detectorRange[2 * b + 1] { sum += weights[k] * power[k] }
        if hop.subbands > 0 {
            let low = cfg.lowered
            for pair in low.pairStart[hop.pairBase + b]..<low.pairStart[hop.pairBase + b + 1] {
                let meeting = low.pairs[pair]
                for j in meeting.firstBin..<meeting.endBin { sum += low.pairInput[meeting.weightsAt + j - meeting.firstBin] * power[j] }
            }
        }
        return sum
    }

    /// The level the band's curve reads: the fast detector smoothed to the band's attack and
    /// release, and, where steady noise matters, the slow one (`SteadyNoiseDetector`).
    @inline(__always)
    func controlLevel(
        _ cfg: CompressorConfig, _ hop: Hop, band b: Int, curve: UnsafeMutablePointer<BandCurve>, target: Float, power: Float, floor: Float
    )
        -> Float
    {
        let at = hop.channel * Self.maxBands + b
        var level = hop.levelsPrimed ? levels[at] : target
        let steady = steadyState + at
        if hop.advancesState {
            let a = target > level ? curve.pointee.attack : curve.pointee.release
            level = target + a * (level - target)
            levels[at] = level
            // The weight glides to 1 while the band's noise floor matters, to 0 while it does
            // not; the slow level runs while it matters and else stands at the fast one, so
            // steady noise starts from where the sound is (not from the silence before it, 1 s
            // below). The noise matters where the floor stands above the knee and within
            // `floorWithinDB` of the band's long-term power: the band is mostly noise. (Speech
            // alone, however loud, has a floor far below its mean.)
            let longTerm = hop.levelsPrimed ? power + cfg.longTermSmoothing * (steady.pointee.longTermPower - power) : power
            steady.pointee.longTermPower = longTerm
            let within = cfg.floorWithin  // read here: an operand of && would capture (retain) cfg
            let matters = hop.noiseStarted && floor > curve.pointee.steadyFloor && longTerm < within * floor
            if matters {
                let slow = hop.levelsPrimed ? steady.pointee.slowLevel : target
                let c = target > slow ? curve.pointee.slowAttack : curve.pointee.slowRelease
                steady.pointee.slowLevel = target + c * (slow - target)
            } else {
                steady.pointee.slowLevel = level
            }
            let goal: Float = matters ? 1 : 0
            steady.pointee.weight = goal + cfg.steadyBlend * (steady.pointee.weight - goal)
        }
        return Self.controlLevel(
            fast: level, slow: steady.pointee.slowLevel, weight: steady.pointee.weight, followAboveDB: curve.pointee.followAboveDB)
    }

    /// After the bands: the hop's broadband meter, and the detectors and the minimum search
    /// moved on (advancing render only).
    @inline(__always)
    func endHop(_ cfg: CompressorConfig, _ hop: Hop) {
        let channel = hop.channel
        primed[channel] = true
        if hop.meters {
            var broadband: Float = 0
            for k in 0..<hop.bins { broadband += (k == 0 || k == hop.bins - 1 ? 1 : 2) * power[k] }
            totals.pointee.broadbandPower[channel] += Double(broadband * cfg.broadbandScale)
            totals.pointee.hops[channel] += 1
        }
        if cfg.tracksNoise {
            if hop.noiseStarted {
                noiseClock[channel].hopInWindow = hop.closing ? 0 : hop.clock.hopInWindow + 1
                if hop.closing { noiseClock[channel].slot = (hop.clock.slot + 1) % NoiseReduction.subwindows }
            } else {
                noiseClock[channel] = NoiseReduction.Clock()
            }
        }
        // Off (or a config without it): start afresh when it comes back on.
        noisePrimed[channel] = cfg.tracksNoise
    }

    /// Frequency lowering: what each pair's moved output would put into its band's detector at
    /// unit gain, and the sub-bands' gains.
    @inline(__always)
    func unitPairPowers(_ low: LoweringTables, _ hop: Hop) {
        let first = low.pairStart[hop.pairBase]
        for pair in first..<low.pairStart[hop.pairBase + hop.bands] {
            let meeting = low.pairs[pair]
            var sum: Float = 0
            for j in meeting.firstBin..<meeting.endBin { sum += low.pairOutput[meeting.weightsAt + j - meeting.firstBin] * power[j] }
            pairPower[pair - first] = sum
        }
        Self.subbandGains(low, channel: hop.channel, subbands: hop.subbands, gains: gains, bands: hop.bands, into: subbandGains)
    }

    /// The output limit on what actually plays: each band's curve limits its own input level,
    /// but bands that share a centre add up (a steady tone between two centres was measured
    /// 3.8 dB over the limit). Read the combined output through each band's detector weights
    /// and lower the bands that exceed their limit. A band lowered alone leaves its neighbours'
    /// share, so look again, up to three times (measured: one pass left a 2 kHz tone 1.1 dB
    /// over, three within a few tenths).
    @inline(__always)
    func limitOutput(_ cfg: CompressorConfig, _ hop: Hop, amplitudes: UnsafeMutablePointer<Float>) {
        let low = cfg.lowered
        let (channel, bands, bins, subbands, pairBase) = (hop.channel, hop.bands, hop.bins, hop.subbands, hop.pairBase)
        let limits = cfg.curves + channel * cfg.bandCount
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
                        let g = subbandGains[low.pairs[pair].subband]
                        sum += g * g * pairPower[pair - low.pairStart[pairBase]]
                    }
                }
                let over = Self.dBPerLog2Power * FastMath.log2(sum) - limits[b].outputLimit
                if over > 0.05 {
                    gains[b] *= FastMath.exp2(-Self.log2PerDB * over)
                    lowered = true
                    if hop.meters { totals.pointee.outputLimitDB[channel * Self.maxBands + b] -= Double(over) }
                }
            }
            if !lowered { break }
            Self.combine(gains, amplitudes, bands: bands, bins: bins, into: combined)
            if subbands > 0 {
                Self.subbandGains(low, channel: channel, subbands: subbands, gains: gains, bands: bands, into: subbandGains)
            }
        }
    }

    /// The spectrum through the combined filter (sum_b g_b A_b times the common linear phase),
    /// plus the moved sub-bands (read from the input before it is overwritten).
    @inline(__always)
    func filter(_ spectrum: UnsafeMutablePointer<Float>, _ cfg: CompressorConfig, _ hop: Hop) {
        let (bins, channel, subbands) = (hop.bins, hop.channel, hop.subbands)
        let low = cfg.lowered
        if subbands > 0 {
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
        if hop.advancesState { frames[channel] = (frames[channel] + 1) % max(low.fftLength, 1) }
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

/// A band's `SteadyNoiseDetector` state.
struct SteadyNoiseState {
    /// The slow detector's level (dB SPL).
    var slowLevel: Float = 0
    /// 0: the fast level rules, 1: the noise-following one.
    var weight: Float = 0
    /// The band's long-term power (1 s; the detector's sum).
    var longTermPower: Float = 0
}
