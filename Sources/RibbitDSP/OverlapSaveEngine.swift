import RibbitRealtime
import Synchronization

/// Counters the engine keeps while processing; read them off the real-time thread.
public struct EngineCounters: Sendable, Equatable, BitwiseCopyable {
    /// Hops processed.
    public var hops = 0
    /// Input samples that were NaN or infinite (replaced by 0) or beyond full scale (clamped
    /// to +-1): a misbehaving upstream client must not reach the filter with more than 0 dBFS.
    public var sanitizedInputs = 0
    /// Output samples the ceiling changed.
    public var limitedSamples = 0
    /// Output samples that were not ready because a block broke the block-size promise; they
    /// were output as silence and the stream then runs late by this many frames (continuous,
    /// no samples dropped). The host should prepare a new engine for the new block size.
    public var underrunFrames = 0
    /// Filter sets taken from the publish slot (each with a one-hop crossfade).
    public var switches = 0
}

/// The real-time overlap-save engine: per hop, named stages, each channel (ear) alike.
///
/// ```
/// input guard      NaN/Inf -> 0, beyond +-1 clamped (counted); into the frame history
/// analysis         r2c of the newest fftLength inputs
/// gain stages      each changes the spectrum under its own config (today: FilterStage)
/// synthesis        c2r, keep the last hopSize samples (the rest is circular wrap-around)
/// ceiling          CeilingStage: peak limiter + soft saturator, never above the ceiling
/// ```
///
/// Overlap-save with a filter that fits the zero padding is exact linear convolution: each
/// frame's weight is 0 on the wrapped part and 1 on the kept hop, so every output sample has
/// total weight 1. Block <-> hop buffering is `BlockHopAdapter` (latency: filter delay +
/// H - gcd(B, H)).
///
/// Every stage's settings are an immutable config published through its `ConfigSlot`
/// (`publish(_:)` for a `FilterSet` and its ceiling). At the next hop boundary the engine
/// takes what was published; if a gain stage changed, it renders that hop with the old and the
/// new configs and blends them with fade-out 1 - s and fade-in s (s the C-infinity smooth
/// step), so the switch makes no click. Old configs go back through the retire slots;
/// `collectRetired` (control side) drops them, so no deinit ever runs on the audio thread.
///
/// `process` never allocates, locks, logs or does I/O (RibbitRealtime/RealtimeRules.swift).
public final class OverlapSaveEngine: @unchecked Sendable {
    public let geometry: EngineGeometry
    public let sampleRate: Double
    public let channelCount: Int
    /// The block size the host promised (nil: any size per call); see `changeBlockSize`.
    public var blockSize: Int? { adapter.blockSize }
    /// Input-to-output delay in samples: filter delay plus hop buffering for `blockSize`.
    public var latencyFrames: Int { geometry.latencyFrames(blockSize: blockSize) }

    private let fft: RealFFT
    /// `fft` for the audio thread: no reference counting (`fft` keeps it alive).
    private let fftRef: Unmanaged<RealFFT>
    private let adapter: BlockHopAdapter
    // Stages, in hop order after analysis. A new gain stage: a property here, one line in
    // `beginGainStages`, `applyGainStages` and `endGainStages`, and its publish method.
    private let filterStage: GainStageRunner<FilterStage>
    /// The alternative to `filterStage`: while its config has bands, it runs instead (its band
    /// filters sum to the prescription's filter; see `applyGainStages`).
    private let compressorStage: GainStageRunner<CompressorStage>
    private let ceilingStage: CeilingStage
    /// The ceiling of the filter set published last (linear, in (0, 1]): control side only, for
    /// what must hold the same ceiling beside the engine (the audio process's output guard).
    public private(set) var publishedCeiling: Float
    /// The wearer's volume as a trim on the compressor's bands (dB, Float bits); the audio
    /// thread glides to it (`CompressorStage.trimStepDB`).
    private let trimBits = Atomic<UInt32>(0)

    /// Per channel, the newest fftLength input samples (FFTW-aligned).
    private let history: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let spectrum: UnsafeMutablePointer<Float>
    private let spectrumFade: UnsafeMutablePointer<Float>
    private let frame: UnsafeMutablePointer<Float>
    private let frameFade: UnsafeMutablePointer<Float>
    /// Crossfade weights s((n + 0.5) / hop) for the fade-in; the fade-out uses 1 - weight.
    private let fadeIn: UnsafeMutablePointer<Float>
    private let counters_: UnsafeMutablePointer<EngineCounters>
    private let countersSnapshot = SeqlockSnapshot(EngineCounters())
    private let levelTotalsSnapshot = SeqlockSnapshot(InputLevelTotals())

    /// `fft`: a transform of the geometry's length planned already, used instead of planning one
    /// (`fftPlanning`): engines compared bit for bit share one, since FFTW may plan a length
    /// differently once other wisdom was learned in between.
    public init(
        geometry: EngineGeometry, sampleRate: Double, filters: FilterSet,
        blockSize: Int? = nil, fftPlanning: RealFFT.Planning = .measure, fft planned: RealFFT? = nil
    ) throws(EngineError) {
        try geometry.validate()
        guard EngineGeometry.supportedSampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        guard (1...2).contains(filters.channelCount) else { throw .unsupportedChannelCount(filters.channelCount) }
        try Self.check(filters, geometry: geometry)
        self.geometry = geometry
        self.sampleRate = sampleRate
        channelCount = filters.channelCount

        let n = geometry.fftLength
        let hop = geometry.hopSize
        precondition(planned.map { $0.length == n } ?? true, "a shared transform of another length")
        fft = planned ?? RealFFT(length: n, planning: fftPlanning)
        fftRef = .passUnretained(fft)
        adapter = BlockHopAdapter(hopSize: hop, channelCount: channelCount, blockSize: blockSize)
        filterStage = GainStageRunner(FilterStage(fftLength: n), config: filters)
        compressorStage = GainStageRunner(
            CompressorStage(fftLength: n, channelCount: channelCount), config: .off(channelCount: channelCount, fftLength: n))
        ceilingStage = CeilingStage(channelCount: channelCount, sampleRate: sampleRate)
        publishedCeiling = filters.ceiling
        history = .allocate(capacity: channelCount)
        for c in 0..<channelCount { (history + c).initialize(to: RealFFT.allocateReal(n)) }
        spectrum = RealFFT.allocateComplex(fft.complexCount)
        spectrumFade = RealFFT.allocateComplex(fft.complexCount)
        frame = RealFFT.allocateReal(n)
        frameFade = RealFFT.allocateReal(n)
        fadeIn = RealFFT.allocateReal(hop)
        fadeIn.initialize(from: Self.crossfadeWeights(hopSize: hop), count: hop)
        counters_ = .allocate(capacity: 1)
        counters_.initialize(to: EngineCounters())
    }

    deinit {
        for c in 0..<channelCount { RealFFT.free(history[c]) }
        history.deallocate()
        for p in [spectrum, spectrumFade, frame, frameFade, fadeIn] { RealFFT.free(p) }
        counters_.deallocate()
        compressorStage.stage.deallocate()
    }

    /// The fade-in weights of a config switch, s((n + 0.5) / hop); the fade-out is 1 - s.
    public static func crossfadeWeights(hopSize: Int) -> [Float] {
        (0..<hopSize).map { Float(SmoothStep.value((Double($0) + 0.5) / Double(hopSize))) }
    }

    /// The weight each overlap-save frame gives its fftLength samples: 0 on the part that
    /// circular convolution wraps around, 1 on the hopSize samples it keeps.
    public static func frameWeights(_ geometry: EngineGeometry) -> [Float] {
        (0..<geometry.fftLength).map { $0 < geometry.fftLength - geometry.hopSize ? 0 : 1 }
    }

    private static func check(_ filters: FilterSet, geometry: EngineGeometry) throws(EngineError) {
        guard filters.fftLength == geometry.fftLength,
            filters.taps.allSatisfy({ $0.count <= geometry.filterLength })
        else {
            throw .filterMismatch("the filters were designed for fft \(filters.fftLength), the engine runs \(geometry)")
        }
    }

    // MARK: Control side (one thread, not the audio one)

    /// Hands a new filter set and its ceiling to the audio thread, which crossfades to them at
    /// the next hop. A set published earlier and not yet taken is replaced and dropped here.
    public func publish(_ filters: FilterSet) throws(EngineError) {
        try Self.check(filters, geometry: geometry)
        guard filters.channelCount == channelCount else {
            throw .filterMismatch("the filters have \(filters.channelCount) channels, the engine \(channelCount)")
        }
        filterStage.slot.publish(filters)
        publishedCeiling = filters.ceiling
    }

    /// The wearer's volume: every compressor band's gain moves by `dB` (up to the band's
    /// `maximumGainDB`; the output limits stay), gliding there on the audio thread without a
    /// new config. Safe from any thread.
    public func setTrim(dB: Double) {
        guard dB.isFinite else { return }
        trimBits.store(Float(max(min(dB, 60), -60)).bitPattern, ordering: .relaxed)
    }

    /// Sets the trim in force from the first hop, with no glide: for an engine that has not
    /// processed yet (a file, a test box), never while the audio thread runs.
    public func startAtTrim(dB: Double) {
        setTrim(dB: dB)
        let trim = Float(bitPattern: trimBits.load(ordering: .relaxed))
        compressorStage.stage.trimNow.update(repeating: trim, count: channelCount)
        compressorStage.stage.trimFading.update(repeating: trim, count: channelCount)
        compressorStage.stage.trimTarget.pointee = trim
    }

    /// Hands a new compressor config to the audio thread, which crossfades to it at the next
    /// hop. While its config has bands the compressor runs in place of the filter stage (its
    /// band filters carry the prescription); `CompressorConfig.off` returns to the filter set.
    /// The ceiling stays the filter set's.
    public func publish(_ compressor: CompressorConfig) throws(EngineError) {
        guard compressor.fftLength == geometry.fftLength, compressor.channelCount == channelCount,
            compressor.bandCount <= CompressorStage.maxBands,
            compressor.bandTaps.allSatisfy({ $0.allSatisfy { $0.count <= geometry.filterLength } })
        else {
            throw .filterMismatch(
                "the compressor (fft \(compressor.fftLength), \(compressor.channelCount) channels, \(compressor.bandCount) bands) "
                    + "does not fit the engine (\(geometry), \(channelCount) channels, at most \(CompressorStage.maxBands) bands)")
        }
        compressorStage.slot.publish(compressor)
    }

    /// Drops the configs the audio thread has finished with. Returns whether there was one.
    @discardableResult
    public func collectRetired() -> Bool {
        let filters = filterStage.slot.collect()
        let compressor = compressorStage.slot.collect()
        return filters || compressor
    }

    /// Whether a published filter set is still waiting for the audio thread.
    public var hasPendingFilters: Bool { filterStage.slot.hasPending }

    /// Whether anything published (filters, ceiling, compressor) still waits for the audio thread.
    public var hasPendingConfigs: Bool {
        filterStage.slot.hasPending || compressorStage.slot.hasPending
    }

    /// The compressor's smoothed band levels (dB SPL through its calibration) of `channel`
    /// after the latest hop, one per band of the running compressor config (empty while
    /// compression is off). For tests and offline analysis: it reads the detector's state
    /// without synchronisation and allocates, so call it only between process() calls, from
    /// the thread that calls them and publishes, never while an audio
    /// thread runs the engine.
    public func compressorLevels(channel: Int) -> [Float] {
        let bands = min(compressorStage.slot.currentConfig.bandCount, CompressorStage.maxBands)
        return (0..<bands).map { compressorStage.stage.level(channel: channel, band: $0) }
    }

    /// What the compressor's detectors heard, as of the end of the latest process() call
    /// (safe from any thread; totals only grow while the compressor runs).
    public var inputLevelTotals: InputLevelTotals { levelTotalsSnapshot.read() }

    /// The counters as of the end of the latest process() call (safe from any thread).
    public var counters: EngineCounters { countersSnapshot.read() }

    // MARK: Audio thread

    /// Adopts a new promised block size between two process() calls, keeping the stream: the
    /// buffered output is padded with silence or trimmed (less than one hop either way) so the
    /// latency becomes the new block size's. Call it from the thread that calls process() (a
    /// JACK client: at the top of the process callback when nframes changed).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func changeBlockSize(to blockSize: Int?) {
        guard blockSize != adapter.blockSize else { return }
        let fill = adapter.inputToFlush(beforeAdopting: blockSize)
        if fill > 0 {
            // More input is waiting than the new size may hold back: complete that hop with
            // silence now.
            let hop = geometry.hopSize
            for c in 0..<channelCount {
                zeroFloats(history[c] + geometry.fftLength - hop + fill, hop - fill)
            }
            processHop()
            adapter.discardInput()
        }
        adapter.adoptBlockSize(blockSize)
    }

    /// Processes `frameCount` samples (any count) of every channel. `inputs` and `outputs`
    /// hold one pointer per channel; an output may alias its input.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func process(
        inputs: UnsafePointer<UnsafePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int
    ) {
        let inputOffset = geometry.fftLength - geometry.hopSize
        var done = 0
        while done < frameCount {
            let n = adapter.inputFrames(available: frameCount - done)
            let at = adapter.inputOffset()
            for c in 0..<channelCount {
                guardInput(inputs[c] + done, into: history[c] + inputOffset + at, count: n)
            }
            if adapter.addInput(n) { processHop() }
            counters_.pointee.underrunFrames &+= adapter.readOutput(into: outputs, at: done, count: n)
            done += n
        }
        countersSnapshot.write(counters_.pointee)
        levelTotalsSnapshot.write(compressorStage.stage.totals.pointee)
    }

    /// The input guard: copies, and makes NaN and infinities silence and finite samples beyond
    /// full scale +-1. Copy and scan branch-free (vectorised); fix up only when something is off.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func guardInput(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>, count: Int) {
        var outside: UInt32 = 0
        for i in 0..<count {
            let x = source[i]
            target[i] = x
            outside |= abs(x) <= 1 ? 0 : 1
        }
        guard outside != 0 else { return }
        for i in 0..<count where !(abs(target[i]) <= 1) {
            target[i] = target[i].isFinite ? Float(signOf: target[i], magnitudeOf: 1) : 0
            counters_.pointee.sanitizedInputs &+= 1
        }
    }

    /// One hop of every channel through the stages.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    private func processHop() {
        let n = geometry.fftLength
        let hop = geometry.hopSize
        let complexFloats = 2 * (n / 2 + 1)
        let (fft, spectrum, spectrumFade, frame, frameFade) = (fftRef, self.spectrum, self.spectrumFade, self.frame, self.frameFade)

        let fading = beginGainStages()
        if fading { counters_.pointee.switches &+= 1 }
        let limit = filterCeilingCap()

        for c in 0..<channelCount {
            let h = history[c]
            fft._withUnsafeGuaranteedRef { $0.forward(h, spectrum) }  // analysis
            if fading {
                copyFloats(spectrumFade, spectrum, complexFloats)
                applyGainStages(spectrumFade, channel: c, fadeOut: true)
                fft._withUnsafeGuaranteedRef { $0.inverse(spectrumFade, frameFade) }  // synthesis, old configs
            }
            applyGainStages(spectrum, channel: c, fadeOut: false)
            fft._withUnsafeGuaranteedRef { $0.inverse(spectrum, frame) }  // synthesis
            let kept = frame + (n - hop)
            if fading {
                let keptOld = frameFade + (n - hop)
                for i in 0..<hop { kept[i] = keptOld[i] + fadeIn[i] * (kept[i] - keptOld[i]) }
            }
            counters_.pointee.limitedSamples &+= ceilingStage.apply(kept, count: hop, channel: c, limit: limit)
            adapter.queueHop(channel: c, from: kept)
            copyFloats(h, h + hop, n - hop)  // forward copy: the source is ahead
        }
        adapter.commitHop()
        counters_.pointee.hops &+= 1
        endGainStages()
    }

    // MARK: Audio thread: the gain stages, in order

    /// Takes every gain stage's published config; true when any changed (a crossfade hop).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func beginGainStages() -> Bool {
        var changed = false
        changed = filterStage.beginHop(allowed: true) || changed
        let newCompressor = compressorStage.beginHop(allowed: true)
        compressorStage.stage.beginHop(trimTarget: Float(bitPattern: trimBits.load(ordering: .relaxed)), newConfig: newCompressor)
        return changed || newCompressor
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func applyGainStages(_ spectrum: UnsafeMutablePointer<Float>, channel: Int, fadeOut: Bool) {
        // The compressor, when on, replaces the filter: its band filters sum to the
        // prescription's, so running both would filter twice. Off, this is the filter alone,
        // exactly as before the compressor existed.
        var compressor = compressorStage.slot.current()
        if fadeOut, let old = compressorStage.fadingFrom.pointee { compressor = old }
        let compressing = compressor._withUnsafeGuaranteedRef { $0.bandCount > 0 }
        if compressing {
            compressorStage.apply(to: spectrum, channel: channel, fadeOut: fadeOut)
        } else {
            filterStage.apply(to: spectrum, channel: channel, fadeOut: fadeOut)
        }
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func endGainStages() {
        filterStage.endHop()
        compressorStage.endHop()
    }

    /// The lowest ceiling of the filter sets in flight (current, and the one fading out).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func filterCeilingCap() -> (ceiling: Float, knee: Float) {
        var cap = filterStage.slot.current()._withUnsafeGuaranteedRef { ($0.ceiling, $0.knee) }
        if let old = filterStage.fadingFrom.pointee {
            let previous = old._withUnsafeGuaranteedRef { ($0.ceiling, $0.knee) }
            if previous.0 < cap.0 { cap = previous }
        }
        return cap
    }

    // MARK: Convenience (allocates: not for the audio thread)

    /// Processes whole channel arrays in blocks of `blockSize` (default: the promised size or
    /// 1024) and returns the outputs. For files and tests.
    public func process(_ channels: [[Float]], blockSize: Int? = nil) -> [[Float]] {
        precondition(channels.count == channelCount)
        let frames = channels[0].count
        var outputs = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channelCount)
        let block = blockSize ?? self.blockSize ?? 1024
        let inputPointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        let outputPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channelCount)
        defer {
            inputPointers.deallocate()
            outputPointers.deallocate()
        }
        let inputBuffers = channels.map { channel in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(frames, 1))
            p.initialize(from: channel, count: frames)
            return p
        }
        let outputBuffers = (0..<channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: max(frames, 1)) }
        defer { for p in inputBuffers + outputBuffers { p.deallocate() } }
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            for c in 0..<channelCount {
                inputPointers[c] = UnsafePointer(inputBuffers[c] + done)
                outputPointers[c] = outputBuffers[c] + done
            }
            process(inputs: inputPointers, outputs: outputPointers, frameCount: n)
            done += n
        }
        for c in 0..<channelCount {
            outputs[c] = Array(UnsafeBufferPointer(start: outputBuffers[c], count: frames))
        }
        return outputs
    }
}
