import Glibc
import RibbitDSP
import RibbitRealtime
import Synchronization

/// What JACK's process callback runs: the renderers (the hearing aid, or what runs instead of
/// it or beside it), then the output ceiling, the pause ramp, the dump tap and the counters.
///
/// Everything render() touches is allocated in init: raw pointers, atomics stored on the
/// object, and the renderer set reached through a `ConfigSlot`. Control threads talk to it
/// only through the atomics and the slots. It never allocates, locks, logs or does I/O
/// (RibbitRealtime/RealtimeRules.swift).
public final class RealtimeProcessor: @unchecked Sendable {
    /// The hearing aid's engine (publish filter sets here); it runs while `hearingAid` is in
    /// the renderer set, which it is from init on.
    public let engine: OverlapSaveEngine
    public let hearingAid: HearingAidRenderer
    public let sampleRate: Double
    /// How long pause/resume take to fade the output (a click-free ramp).
    public static let fadeSeconds = 0.005

    /// Set by control code: output silent (true) or the renderers' output (false).
    public let paused = Atomic<Bool>(false)
    /// Set once, just before the client closes: every period is silent and runs nothing more.
    public let stopped = Atomic<Bool>(false)
    /// The pause ramp's gain after the last period (bits of a Float, 0 to 1): 0 once a pause
    /// has silenced the output, 1 once a resume has faded it back in.
    public let outputGainBits = Atomic<UInt32>(Float(1).bitPattern)
    /// Process callbacks run.
    public let cycles = Atomic<Int>(0)
    /// Time spent in render, summed and the longest single call, in nanoseconds.
    public let busyNanoseconds = Atomic<Int>(0)
    public let longestNanoseconds = Atomic<Int>(0)
    /// The period JACK announced last (its buffer-size callback); what latency is reported for.
    public let period: Atomic<Int>
    /// While a dump client listens: every period's input and output go into `dumpRing`.
    public let dumpEnabled = Atomic<Bool>(false)
    /// About 0.34 s at 48 kHz: ample for a reader that drains it 20 times a second.
    public let dumpRing = SampleRing(capacity: 16384)
    /// The last guard on every output sample, whatever renders: NaN and infinities become 0,
    /// anything beyond +-ceiling is clamped to it (bits of a Float in (0, 1]). Its ceiling is the
    /// engine's filter set's, set with it (`publish`): one owner. The hearing aid's own limiter
    /// stays below it, so for the hearing aid this changes nothing; for a tone generator it is
    /// the safety net.
    public let outputCeilingBits: Atomic<UInt32>
    /// Output samples the guard changed (a renderer above the ceiling, or NaN).
    public let guardedSamples = Atomic<Int>(0)

    private let renderers: ConfigSlot<RendererSet>
    /// The set published last, for the latency JACK asks about on its notification thread
    /// (a lock there is fine; the audio thread never takes it).
    private let latestRenderers: Mutex<RendererSet>
    /// `dumpRing` for the audio thread: no reference counting (`dumpRing` keeps it alive).
    private let dumpRingRef: Unmanaged<SampleRing>
    private let gain: UnsafeMutablePointer<Float>
    private let gainStep: Float
    private let inputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    public init(engine: OverlapSaveEngine, period: Int) {
        precondition(engine.channelCount == 2)
        self.engine = engine
        outputCeilingBits = Atomic(engine.publishedCeiling.bitPattern)
        hearingAid = HearingAidRenderer(engine: engine, period: period)
        sampleRate = engine.sampleRate
        self.period = Atomic(period)
        let initial = RendererSet([hearingAid])
        renderers = ConfigSlot(initial)
        latestRenderers = Mutex(initial)
        dumpRingRef = .passUnretained(dumpRing)
        gain = .allocate(capacity: 1)
        gain.initialize(to: 1)
        gainStep = Float(1 / (Self.fadeSeconds * engine.sampleRate))
        inputs = .allocate(capacity: 2)
        outputs = .allocate(capacity: 2)
    }

    deinit {
        gain.deallocate()
        inputs.deallocate()
        outputs.deallocate()
    }

    // MARK: Control side

    /// Runs `renderers` from the next period on, in order (the first writes, the others mix),
    /// e.g. `[hearingAid, tap]` beside, `[tone]` instead. The switch is immediate: pause first
    /// (a 5 ms ramp) for a silent change. Also collects the set it replaced earlier.
    public func run(_ renderers: [any PeriodRenderer]) {
        let set = RendererSet(renderers)
        latestRenderers.withLock { $0 = set }
        self.renderers.publish(set)
    }

    /// Drops renderer sets the audio thread has finished with (and the engine's old configs).
    public func collectRetired() {
        renderers.collect()
        engine.collectRetired()
    }

    /// New filters and their ceiling for the engine, and that ceiling for the last guard: what
    /// plays instead of the hearing aid (a tone) is held under the same ceiling.
    public func publish(_ filters: FilterSet) throws(EngineError) {
        try engine.publish(filters)
        outputCeilingBits.store(engine.publishedCeiling.bitPattern, ordering: .relaxed)
    }

    /// The guard's ceiling, in dBFS.
    public var outputCeilingDBFS: Double { Double(20 * log10(Float(bitPattern: outputCeilingBits.load(ordering: .relaxed)))) }

    /// The latency to report to JACK for the announced period, in frames.
    public var latencyFrames: Int {
        let period = period.load(ordering: .relaxed)
        return latestRenderers.withLock { $0.latencyFrames(period: period) }
    }

    // MARK: Audio thread

    /// One period: left/right in, left/right out.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func render(
        inLeft: UnsafePointer<Float>, inRight: UnsafePointer<Float>,
        outLeft: UnsafeMutablePointer<Float>, outRight: UnsafeMutablePointer<Float>, frameCount: Int
    ) {
        guard !stopped.load(ordering: .relaxed) else {
            zeroFloats(outLeft, frameCount)
            zeroFloats(outRight, frameCount)
            return
        }
        let start = Realtime.monotonicNanoseconds()
        inputs[0] = inLeft
        inputs[1] = inRight
        outputs[0] = outLeft
        outputs[1] = outRight
        if let old = renderers.take() { renderers.retire(old) }
        let (ins, outs) = (UnsafePointer(inputs), UnsafePointer(outputs))
        let count = renderers.current()._withUnsafeGuaranteedRef { set in
            for i in 0..<set.count {
                let (entry, context) = (set.entries[i], set.contexts[i])
                _unsafePerformance { entry(context, ins, outs, frameCount, i > 0) }
            }
            return set.count
        }
        if count == 0 {
            zeroFloats(outLeft, frameCount)
            zeroFloats(outRight, frameCount)
        }
        guardOutput(outLeft, outRight, frameCount)
        applyPauseRamp(outLeft, outRight, frameCount)
        if dumpEnabled.load(ordering: .relaxed) {
            dumpRingRef._withUnsafeGuaranteedRef {
                $0.write(inLeft, inRight, UnsafePointer(outLeft), UnsafePointer(outRight), count: frameCount)
            }
        }
        cycles.add(1, ordering: .relaxed)
        let spent = Realtime.monotonicNanoseconds() &- start
        busyNanoseconds.add(spent, ordering: .relaxed)
        if spent > longestNanoseconds.load(ordering: .relaxed) { longestNanoseconds.store(spent, ordering: .relaxed) }
    }

    /// NaN/Inf -> 0 and beyond +-ceiling -> +-ceiling. A branch-free scan first (vectorised):
    /// the usual period has nothing to fix.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func guardOutput(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int) {
        let ceiling = Float(bitPattern: outputCeilingBits.load(ordering: .relaxed))
        var outside: UInt32 = 0
        for i in 0..<count { outside |= (abs(left[i]) <= ceiling ? 0 : 1) | (abs(right[i]) <= ceiling ? 0 : 1) }
        guard outside != 0 else { return }
        var changed = 0
        changed += clampToCeiling(left, count, ceiling)
        changed += clampToCeiling(right, count, ceiling)
        guardedSamples.add(changed, ordering: .relaxed)
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func applyPauseRamp(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ count: Int) {
        let target: Float = paused.load(ordering: .relaxed) ? 0 : 1
        var g = gain.pointee
        if g == 1 && target == 1 { return }
        for i in 0..<count {
            g = target > g ? min(target, g + gainStep) : max(target, g - gainStep)
            left[i] *= g
            right[i] *= g
        }
        gain.pointee = g
        outputGainBits.store(g.bitPattern, ordering: .relaxed)
    }

    /// Whether the output has reached what `paused` asks (silent, or at full gain again).
    public var pauseTookEffect: Bool {
        Float(bitPattern: outputGainBits.load(ordering: .relaxed)) == (paused.load(ordering: .relaxed) ? 0 : 1)
    }

    // MARK: Before the audio thread starts

    /// Runs render once on silence at `frameCount`, so the first real callback finds every
    /// code path's metadata and lazy state ready. Call before jack_activate.
    public func warmUp(frameCount: Int) {
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frameCount) }
        defer { buffers.forEach { $0.deallocate() } }
        for b in buffers { b.initialize(repeating: 0, count: frameCount) }
        let dumping = dumpEnabled.load(ordering: .relaxed)
        dumpEnabled.store(true, ordering: .relaxed)  // warm the dump path too
        render(inLeft: buffers[0], inRight: buffers[1], outLeft: buffers[2], outRight: buffers[3], frameCount: frameCount)
        dumpEnabled.store(dumping, ordering: .relaxed)  // a dump asked for before the start stays on
        dumpRing.discard()
        cycles.store(0, ordering: .relaxed)
        busyNanoseconds.store(0, ordering: .relaxed)
        longestNanoseconds.store(0, ordering: .relaxed)
    }
}

/// NaN/Inf -> 0, beyond +-ceiling -> +-ceiling; returns how many samples it changed.
#if RIBBIT_RT_AUDIT
    @_noLocks
#endif
@inline(__always)
private func clampToCeiling(_ samples: UnsafeMutablePointer<Float>, _ count: Int, _ ceiling: Float) -> Int {
    var changed = 0
    for i in 0..<count where !(abs(samples[i]) <= ceiling) {
        samples[i] = samples[i].isFinite ? Float(signOf: samples[i], magnitudeOf: ceiling) : 0
        changed += 1
    }
    return changed
}
