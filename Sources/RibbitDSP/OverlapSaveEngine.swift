import Synchronization

/// Counters the engine keeps while processing; read them off the real-time thread.
public struct EngineCounters: Sendable, Equatable {
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

/// The real-time overlap-save convolution engine: one linear-phase filter per channel, the
/// safety ceiling, and glitch-free filter switches.
///
/// Per hop and channel: r2c of the newest fftLength inputs, one complex multiply by the filter
/// spectrum, c2r, keep the last hopSize samples (the rest is circular wrap-around and is
/// discarded: the frame weight window is 0 there and 1 on the kept part, so every output
/// sample has total weight 1). The result equals direct convolution with the filter.
///
/// A new FilterSet is built off the RT thread and handed over with `publish` (an atomic
/// exchange). At the next hop boundary process() takes it and renders that hop with both the
/// old and the new filter, blending with fade-out 1 - s and fade-in s (s the C-infinity smooth
/// step): weights that sum to one at every sample, so the switch makes no click. The old set
/// goes to a retire slot; `collectRetired` (control side) drops it, so no deinit ever runs on
/// the RT thread. A new set waits while the retire slot is full.
///
/// process() never allocates, locks, logs or does I/O: it touches only buffers allocated in
/// init, scalar state behind a pointer, and atomics.
public final class OverlapSaveEngine: @unchecked Sendable {
    public let geometry: EngineGeometry
    public let sampleRate: Double
    public let channelCount: Int
    /// The block size the host promised (nil: any size per call); see `changeBlockSize`.
    public var blockSize: Int? { let b = promisedBlock.load(ordering: .relaxed); return b == 0 ? nil : b }
    /// Input-to-output delay in samples: filter delay plus hop buffering for `blockSize`.
    public var latencyFrames: Int { geometry.latencyFrames(blockSize: blockSize) }

    private let fft: RealFFT
    private let history: [UnsafeMutablePointer<Float>]
    private let ring: [UnsafeMutablePointer<Float>]
    private let ringCapacity: Int
    private let spectrum: UnsafeMutablePointer<Float>
    private let spectrumFade: UnsafeMutablePointer<Float>
    private let frame: UnsafeMutablePointer<Float>
    private let frameFade: UnsafeMutablePointer<Float>
    /// Crossfade weights s((n + 0.5) / hop) for the fade-in; the fade-out uses 1 - weight.
    private let fadeIn: UnsafeMutablePointer<Float>
    // Raw pointers to the channel buffers, so process() reads no Swift arrays.
    private let historyPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let ringPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let limiters: UnsafeMutablePointer<PeakLimiter>
    private let state: UnsafeMutablePointer<State>

    private let incoming = Atomic<UnsafeMutableRawPointer?>(nil)
    private let retired = Atomic<UnsafeMutableRawPointer?>(nil)
    private let countersSnapshot: UnsafeMutablePointer<EngineCounters>
    private let countersSequence = Atomic<Int>(0)
    /// The promised block size, 0 for any. Written by init and changeBlockSize.
    private let promisedBlock: Atomic<Int>

    private struct State {
        var fill = 0
        var ringRead = 0
        var ringWrite = 0
        var ringLevel = 0
        var active: Unmanaged<FilterSet>
        var counters = EngineCounters()
    }

    public init(
        geometry: EngineGeometry, sampleRate: Double, filters: FilterSet,
        blockSize: Int? = nil
    ) throws(EngineError) {
        try geometry.validate()
        guard EngineGeometry.supportedSampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        guard (1...2).contains(filters.channelCount) else { throw .unsupportedChannelCount(filters.channelCount) }
        try Self.check(filters, geometry: geometry)
        self.geometry = geometry
        self.sampleRate = sampleRate
        self.channelCount = filters.channelCount
        promisedBlock = Atomic(blockSize ?? 0)
        let buffering = geometry.bufferingDelayFrames(blockSize: blockSize)

        let n = geometry.fftLength
        let hop = geometry.hopSize
        fft = RealFFT(length: n)
        history = (0..<filters.channelCount).map { _ in RealFFT.allocateReal(n) }
        // Room for the largest buffering delay (hop - 1) whatever block size comes later.
        let capacity = 3 * hop
        ringCapacity = capacity
        ring = (0..<filters.channelCount).map { _ in RealFFT.allocateReal(capacity) }
        spectrum = RealFFT.allocateComplex(fft.complexCount)
        spectrumFade = RealFFT.allocateComplex(fft.complexCount)
        frame = RealFFT.allocateReal(n)
        frameFade = RealFFT.allocateReal(n)
        fadeIn = RealFFT.allocateReal(hop)
        fadeIn.initialize(from: Self.crossfadeWeights(hopSize: hop), count: hop)
        historyPointers = .allocate(capacity: channelCount)
        historyPointers.initialize(from: history, count: channelCount)
        ringPointers = .allocate(capacity: channelCount)
        ringPointers.initialize(from: ring, count: channelCount)
        limiters = .allocate(capacity: channelCount)
        limiters.initialize(repeating: PeakLimiter(sampleRate: sampleRate), count: channelCount)
        state = .allocate(capacity: 1)
        state.initialize(to: State(ringWrite: buffering, ringLevel: buffering, active: .passRetained(filters)))
        countersSnapshot = .allocate(capacity: 1)
        countersSnapshot.initialize(to: EngineCounters())
    }

    deinit {
        state.pointee.active.release()
        if let p = incoming.exchange(nil, ordering: .acquiring) { Unmanaged<FilterSet>.fromOpaque(p).release() }
        if let p = retired.exchange(nil, ordering: .acquiring) { Unmanaged<FilterSet>.fromOpaque(p).release() }
        for p in history + ring { RealFFT.free(p) }
        for p in [spectrum, spectrumFade, frame, frameFade, fadeIn] { RealFFT.free(p) }
        historyPointers.deallocate()
        ringPointers.deallocate()
        limiters.deallocate()
        state.deallocate()
        countersSnapshot.deallocate()
    }

    /// The fade-in weights of a filter switch, s((n + 0.5) / hop); the fade-out is 1 - s.
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

    // MARK: Control side (any thread but the RT one)

    /// Hands a new filter set to the RT thread, which crossfades to it at the next hop. If an
    /// earlier set was published and not yet taken, it is replaced and dropped here.
    public func publish(_ filters: FilterSet) throws(EngineError) {
        try Self.check(filters, geometry: geometry)
        guard filters.channelCount == channelCount else {
            throw .filterMismatch("the filters have \(filters.channelCount) channels, the engine \(channelCount)")
        }
        let p = Unmanaged.passRetained(filters).toOpaque()
        if let replaced = incoming.exchange(p, ordering: .acquiringAndReleasing) {
            Unmanaged<FilterSet>.fromOpaque(replaced).release()
        }
        collectRetired()
    }

    /// Drops the filter set the RT thread has finished with. Returns whether there was one.
    @discardableResult
    public func collectRetired() -> Bool {
        guard let p = retired.exchange(nil, ordering: .acquiring) else { return false }
        Unmanaged<FilterSet>.fromOpaque(p).release()
        return true
    }

    /// Whether a published filter set is still waiting for the RT thread.
    public var hasPendingFilters: Bool { incoming.load(ordering: .acquiring) != nil }

    /// The counters as of the end of the latest process() call (safe from any thread).
    public var counters: EngineCounters {
        // Seqlock: retry while the RT thread is writing (odd sequence) or wrote meanwhile.
        while true {
            let before = countersSequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let copy = countersSnapshot.pointee
            atomicMemoryFence(ordering: .acquiring)
            if countersSequence.load(ordering: .relaxed) == before { return copy }
        }
    }

    // MARK: Real-time side

    /// Adopts a new promised block size between two process() calls, keeping the stream: the
    /// buffered output is padded with silence or trimmed (less than one hop either way) so the
    /// latency becomes the new block size's. RT-safe; call it from the thread that calls
    /// process() (a JACK client: at the top of the process callback when nframes changed).
    public func changeBlockSize(to blockSize: Int?) {
        guard blockSize != self.blockSize else { return }
        let s = state
        let buffering = geometry.bufferingDelayFrames(blockSize: blockSize)
        if s.pointee.fill > buffering {
            // More input is waiting than the new size may hold back: complete that hop with
            // silence now (hop - fill zeros), so fill becomes 0.
            let hop = geometry.hopSize
            for c in 0..<channelCount {
                (historyPointers[c] + geometry.fftLength - hop + s.pointee.fill).update(repeating: 0, count: hop - s.pointee.fill)
            }
            processHop()
            s.pointee.fill = 0
        }
        // Between calls, ring level + fill == buffering delay (it holds from init on).
        let target = buffering - s.pointee.fill
        let level = s.pointee.ringLevel
        if target > level {
            let pad = target - level
            let at = (s.pointee.ringRead - pad + ringCapacity) % ringCapacity
            for c in 0..<channelCount {
                let r = ringPointers[c]
                let first = min(pad, ringCapacity - at)
                (r + at).update(repeating: 0, count: first)
                r.update(repeating: 0, count: pad - first)
            }
            s.pointee.ringRead = at
        } else {
            s.pointee.ringRead = (s.pointee.ringRead + level - target) % ringCapacity
        }
        s.pointee.ringLevel = target
        promisedBlock.store(blockSize ?? 0, ordering: .relaxed)
    }

    /// Processes `frameCount` samples (any count) of every channel. `inputs` and `outputs`
    /// hold one pointer per channel; an output may alias its input. RT-safe.
    public func process(
        inputs: UnsafePointer<UnsafePointer<Float>>, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int
    ) {
        let s = state
        let hop = geometry.hopSize
        let inputOffset = geometry.fftLength - hop
        var done = 0
        while done < frameCount {
            let n = min(hop - s.pointee.fill, frameCount - done)
            for c in 0..<channelCount {
                let source = inputs[c] + done
                let target = historyPointers[c] + inputOffset + s.pointee.fill
                // Copy and scan branch-free (vectorised); fix up only when something is off:
                // NaN and infinities become silence, finite samples beyond full scale +-1.
                var outside: UInt32 = 0
                for i in 0..<n {
                    let x = source[i]
                    target[i] = x
                    outside |= abs(x) <= 1 ? 0 : 1
                }
                if outside != 0 {
                    for i in 0..<n where !(abs(target[i]) <= 1) {
                        target[i] = target[i].isFinite ? Float(signOf: target[i], magnitudeOf: 1) : 0
                        s.pointee.counters.sanitizedInputs &+= 1
                    }
                }
            }
            s.pointee.fill += n
            if s.pointee.fill == hop {
                processHop()
                s.pointee.fill = 0
            }
            readRing(into: outputs, at: done, count: n)
            done += n
        }
        publishCounters()
    }

    private func processHop() {
        let s = state
        let n = geometry.fftLength
        let hop = geometry.hopSize
        let bins = fft.complexCount
        var fadingFrom: Unmanaged<FilterSet>? = nil
        // Loads first: the exchange (a locked instruction) only when there is something to take.
        if incoming.load(ordering: .relaxed) != nil, retired.load(ordering: .acquiring) == nil,
            let p = incoming.exchange(nil, ordering: .acquiring)
        {
            fadingFrom = s.pointee.active
            s.pointee.active = Unmanaged<FilterSet>.fromOpaque(p)
            s.pointee.counters.switches &+= 1
        }
        let newSpectra = s.pointee.active._withUnsafeGuaranteedRef { $0.spectra }
        var ceiling = s.pointee.active._withUnsafeGuaranteedRef { $0.ceiling }
        let oldSpectra = fadingFrom?._withUnsafeGuaranteedRef { $0.spectra }
        if let fadingFrom { ceiling = min(ceiling, fadingFrom._withUnsafeGuaranteedRef { $0.ceiling }) }
        let knee = PeakLimiter.knee(ceiling: ceiling)
        let stride = 2 * bins

        for c in 0..<channelCount {
            let h = historyPointers[c]
            fft.forward(h, spectrum)
            if let oldSpectra {
                spectrumFade.update(from: spectrum, count: stride)
                Self.multiply(spectrumFade, by: oldSpectra + c * stride, bins: bins)
                fft.inverse(spectrumFade, frameFade)
            }
            Self.multiply(spectrum, by: newSpectra + c * stride, bins: bins)
            fft.inverse(spectrum, frame)
            let kept = frame + (n - hop)
            if oldSpectra != nil {
                let keptOld = frameFade + (n - hop)
                for i in 0..<hop { kept[i] = keptOld[i] + fadeIn[i] * (kept[i] - keptOld[i]) }
            }
            s.pointee.counters.limitedSamples &+= limiters[c].process(kept, count: hop, ceiling: ceiling, knee: knee)
            writeRing(channel: c, from: kept, count: hop)
            h.update(from: h + hop, count: n - hop)
        }
        s.pointee.ringWrite = (s.pointee.ringWrite + hop) % ringCapacity
        s.pointee.ringLevel += hop
        if s.pointee.ringLevel > ringCapacity {
            // Only when repeated underruns piled up more lateness than the ring holds: drop the
            // oldest samples, which bounds the extra delay to about one hop.
            let excess = s.pointee.ringLevel - ringCapacity
            s.pointee.ringRead = (s.pointee.ringRead + excess) % ringCapacity
            s.pointee.ringLevel = ringCapacity
        }
        s.pointee.counters.hops &+= 1
        if let fadingFrom {
            retired.store(fadingFrom.toOpaque(), ordering: .releasing)
        }
    }

    @inline(__always)
    private static func multiply(_ x: UnsafeMutablePointer<Float>, by y: UnsafeMutablePointer<Float>, bins: Int) {
        for k in 0..<bins {
            let (a, b) = (x[2 * k], x[2 * k + 1])
            let (c, d) = (y[2 * k], y[2 * k + 1])
            x[2 * k] = a * c - b * d
            x[2 * k + 1] = a * d + b * c
        }
    }

    @inline(__always)
    private func writeRing(channel: Int, from source: UnsafeMutablePointer<Float>, count: Int) {
        let r = ringPointers[channel]
        let at = state.pointee.ringWrite
        let first = min(count, ringCapacity - at)
        (r + at).update(from: source, count: first)
        r.update(from: source + first, count: count - first)
    }

    @inline(__always)
    private func readRing(into outputs: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, count: Int) {
        let s = state
        let available = min(count, s.pointee.ringLevel)
        let at = s.pointee.ringRead
        let first = min(available, ringCapacity - at)
        for c in 0..<channelCount {
            let r = ringPointers[c]
            let out = outputs[c] + offset
            out.update(from: r + at, count: first)
            (out + first).update(from: r, count: available - first)
            (out + available).update(repeating: 0, count: count - available)
        }
        s.pointee.ringRead = (at + available) % ringCapacity
        s.pointee.ringLevel -= available
        s.pointee.counters.underrunFrames &+= count - available
    }

    @inline(__always)
    private func publishCounters() {
        let sequence = countersSequence.load(ordering: .relaxed)
        countersSequence.store(sequence &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        countersSnapshot.pointee = state.pointee.counters
        countersSequence.store(sequence &+ 2, ordering: .releasing)
    }

    // MARK: Convenience (allocates: not for the RT thread)

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
