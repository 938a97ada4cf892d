import Glibc
import RibbitDSP
import Synchronization

/// What runs on JACK's process thread: the engine, the pause ramp and the counters.
///
/// Everything render() touches is allocated in init: raw pointers, atomics stored on the
/// object, and the engine (itself RT-safe). Control threads talk to it only through the
/// atomics and the engine's publish slot. It never allocates, locks, logs or does I/O.
public final class RealtimeProcessor: @unchecked Sendable {
    public let engine: OverlapSaveEngine
    public let sampleRate: Double
    /// How long pause/resume take to fade the output (a click-free ramp).
    public static let fadeSeconds = 0.005

    /// Set by control code: output silent (true) or the engine's output (false).
    public let paused = Atomic<Bool>(false)
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

    private let gain: UnsafeMutablePointer<Float>
    private let gainStep: Float
    private let inputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let currentBlock: UnsafeMutablePointer<Int>

    public init(engine: OverlapSaveEngine, period: Int) {
        precondition(engine.channelCount == 2)
        self.engine = engine
        sampleRate = engine.sampleRate
        self.period = Atomic(period)
        gain = .allocate(capacity: 1)
        gain.initialize(to: 1)
        gainStep = Float(1 / (Self.fadeSeconds * engine.sampleRate))
        inputs = .allocate(capacity: 2)
        outputs = .allocate(capacity: 2)
        currentBlock = .allocate(capacity: 1)
        currentBlock.initialize(to: engine.blockSize ?? period)
    }

    deinit {
        gain.deallocate()
        inputs.deallocate()
        outputs.deallocate()
        currentBlock.deallocate()
    }

    /// The latency to report to JACK for the announced period, in frames.
    public var latencyFrames: Int { engine.geometry.latencyFrames(blockSize: period.load(ordering: .relaxed)) }

    /// One period: left/right in, left/right out. RT-safe.
    @inline(__always)
    public func render(
        inLeft: UnsafePointer<Float>, inRight: UnsafePointer<Float>,
        outLeft: UnsafeMutablePointer<Float>, outRight: UnsafeMutablePointer<Float>, frameCount: Int
    ) {
        let start = Self.nanoseconds()
        if frameCount != currentBlock.pointee {
            engine.changeBlockSize(to: frameCount)
            currentBlock.pointee = frameCount
        }
        inputs[0] = inLeft
        inputs[1] = inRight
        outputs[0] = outLeft
        outputs[1] = outRight
        engine.process(inputs: inputs, outputs: outputs, frameCount: frameCount)
        applyPauseRamp(outLeft, outRight, frameCount)
        if dumpEnabled.load(ordering: .relaxed) {
            dumpRing.write(inLeft, inRight, UnsafePointer(outLeft), UnsafePointer(outRight), count: frameCount)
        }
        cycles.add(1, ordering: .relaxed)
        let spent = Self.nanoseconds() &- start
        busyNanoseconds.add(spent, ordering: .relaxed)
        if spent > longestNanoseconds.load(ordering: .relaxed) { longestNanoseconds.store(spent, ordering: .relaxed) }
    }

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
    }

    /// Runs render once on silence at `frameCount`, so the first real callback finds every
    /// code path's metadata and lazy state ready. Call before jack_activate.
    public func warmUp(frameCount: Int) {
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frameCount) }
        defer { buffers.forEach { $0.deallocate() } }
        for b in buffers { b.initialize(repeating: 0, count: frameCount) }
        dumpEnabled.store(true, ordering: .relaxed)  // warm the dump path too
        render(inLeft: buffers[0], inRight: buffers[1], outLeft: buffers[2], outRight: buffers[3], frameCount: frameCount)
        dumpEnabled.store(false, ordering: .relaxed)
        dumpRing.discard()
        cycles.store(0, ordering: .relaxed)
        busyNanoseconds.store(0, ordering: .relaxed)
        longestNanoseconds.store(0, ordering: .relaxed)
    }

    /// CLOCK_MONOTONIC through the vDSO: no system call, no lock.
    @inline(__always)
    static func nanoseconds() -> Int {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t.tv_sec &* 1_000_000_000 &+ t.tv_nsec
    }
}
