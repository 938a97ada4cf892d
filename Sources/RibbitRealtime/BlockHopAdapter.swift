import Synchronization

/// Turns the host's blocks (any size per call) into hops of `hopSize` samples and the hops'
/// output back into blocks, with the least delay that never runs dry.
///
/// A hop can run only once `hopSize` input samples are in, so the output of a block lags its
/// input. When the host always calls with B frames, the lag needed is the largest value
/// (t + B) mod H takes, which is H - gcd(B, H): zero when B is a multiple of H (JACK periods of
/// 64, 128, ... with a hop of 64). With any size per call it is H - 1. The adapter starts with
/// that much silence queued and keeps `queued output + buffered input == delay` between calls.
///
/// The caller owns the hop's input buffers (it writes each block's samples where
/// `inputOffset()` says) and runs the hop itself; the adapter counts and queues the output.
/// Audio thread only, except `blockSize` and `latencyFrames`.
public struct BlockHopAdapter: ~Copyable, @unchecked Sendable {
    public let hopSize: Int
    public let channelCount: Int
    /// Output queue length per channel: room for the largest delay (hop - 1) whatever block
    /// size comes later, plus lateness after a broken promise.
    public let capacity: Int
    @usableFromInline let queue: UnsafeMutablePointer<Float>
    @usableFromInline let state: UnsafeMutablePointer<State>
    /// The promised block size, 0 for any. Written by init and `adoptBlockSize`.
    @usableFromInline let promisedBlock: Atomic<Int>

    @usableFromInline struct State {
        /// Input samples of the hop being gathered.
        @usableFromInline var fill = 0
        @usableFromInline var read = 0
        @usableFromInline var write = 0
        /// Output samples queued.
        @usableFromInline var level = 0
        @usableFromInline init(fill: Int = 0, read: Int = 0, write: Int = 0, level: Int = 0) {
            (self.fill, self.read, self.write, self.level) = (fill, read, write, level)
        }
    }

    /// The extra delay hop buffering adds for a host that always calls with `blockSize` frames
    /// (nil: any size per call): hopSize - gcd(blockSize, hopSize), or hopSize - 1.
    @inlinable
    public static func bufferingDelayFrames(hopSize: Int, blockSize: Int?) -> Int {
        guard let blockSize else { return hopSize - 1 }
        return hopSize - gcd(blockSize, hopSize)
    }

    public init(hopSize: Int, channelCount: Int, blockSize: Int?) {
        precondition(hopSize >= 1 && channelCount >= 1)
        self.hopSize = hopSize
        self.channelCount = channelCount
        capacity = 3 * hopSize
        queue = .allocate(capacity: capacity * channelCount)
        queue.initialize(repeating: 0, count: capacity * channelCount)
        let delay = Self.bufferingDelayFrames(hopSize: hopSize, blockSize: blockSize)
        state = .allocate(capacity: 1)
        state.initialize(to: State(write: delay, level: delay))
        promisedBlock = Atomic(blockSize ?? 0)
    }

    deinit {
        queue.deallocate()
        state.deallocate()
    }

    /// The block size the host promised (nil: any size per call). Any thread.
    public var blockSize: Int? {
        let b = promisedBlock.load(ordering: .relaxed)
        return b == 0 ? nil : b
    }

    /// The delay the adapter adds now, in frames. Any thread.
    public var bufferingDelayFrames: Int { Self.bufferingDelayFrames(hopSize: hopSize, blockSize: blockSize) }

    // MARK: Audio thread

    /// Where in the hop the next input sample goes (samples gathered so far).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func inputOffset() -> Int { state.pointee.fill }

    /// How many of `available` input frames fit before the hop is complete.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func inputFrames(available: Int) -> Int { min(hopSize - state.pointee.fill, available) }

    /// Counts `count` input frames the caller stored; true when the hop is complete, and the
    /// caller must run it now (`queueHop` for each channel, then `commitHop`).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func addInput(_ count: Int) -> Bool {
        state.pointee.fill += count
        guard state.pointee.fill == hopSize else { return false }
        state.pointee.fill = 0
        return true
    }

    /// Queues one channel's `hopSize` output samples of the hop that just ran.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func queueHop(channel: Int, from source: UnsafePointer<Float>) {
        let base = queue + channel * capacity
        let at = state.pointee.write
        let first = min(hopSize, capacity - at)
        copyFloats(base + at, source, first)
        copyFloats(base, source + first, hopSize - first)
    }

    /// Ends a hop: its output (queued for every channel) becomes readable.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func commitHop() {
        let s = state
        s.pointee.write = (s.pointee.write + hopSize) % capacity
        s.pointee.level += hopSize
        if s.pointee.level > capacity {
            // Only when repeated underruns piled up more lateness than the queue holds: drop
            // the oldest samples, which bounds the extra delay to about one hop.
            let excess = s.pointee.level - capacity
            s.pointee.read = (s.pointee.read + excess) % capacity
            s.pointee.level = capacity
        }
    }

    /// Writes `count` queued output frames to `outputs[c] + offset`; what is not ready (the host
    /// broke its block-size promise) is silence. Returns how many frames were silence: the
    /// stream then runs that much later (continuous, nothing dropped).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func readOutput(into outputs: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, count: Int) -> Int {
        let s = state
        let available = min(count, s.pointee.level)
        let at = s.pointee.read
        let first = min(available, capacity - at)
        for c in 0..<channelCount {
            let base = queue + c * capacity
            let out = outputs[c] + offset
            copyFloats(out, base + at, first)
            copyFloats(out + first, base, available - first)
            zeroFloats(out + available, count - available)
        }
        s.pointee.read = (at + available) % capacity
        s.pointee.level -= available
        return count - available
    }

    /// Before adopting `blockSize`: the number of input frames gathered that the new size may
    /// not hold back. When it is not 0, the caller fills the rest of the hop with silence, runs
    /// the hop as usual (`queueHop`, `commitHop`) and calls `discardInput()`.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func inputToFlush(beforeAdopting blockSize: Int?) -> Int {
        let fill = state.pointee.fill
        return fill > Self.bufferingDelayFrames(hopSize: hopSize, blockSize: blockSize) ? fill : 0
    }

    /// Forgets the hop being gathered (after the caller completed it with silence).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func discardInput() { state.pointee.fill = 0 }

    /// Adopts a new promised block size between two calls, keeping the stream: the queued
    /// output is padded with silence or trimmed (less than one hop either way) so the delay
    /// becomes the new size's. Call `inputToFlush` first.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func adoptBlockSize(_ blockSize: Int?) {
        let s = state
        // Between calls, queued output + gathered input == the buffering delay.
        let target = Self.bufferingDelayFrames(hopSize: hopSize, blockSize: blockSize) - s.pointee.fill
        let level = s.pointee.level
        if target > level {
            let pad = target - level
            let at = (s.pointee.read - pad + capacity) % capacity
            for c in 0..<channelCount {
                let base = queue + c * capacity
                let first = min(pad, capacity - at)
                zeroFloats(base + at, first)
                zeroFloats(base, pad - first)
            }
            s.pointee.read = at
        } else {
            s.pointee.read = (s.pointee.read + level - target) % capacity
        }
        s.pointee.level = target
        promisedBlock.store(blockSize ?? 0, ordering: .relaxed)
    }
}

/// Greatest common divisor (non-negative).
@inlinable
public func gcd(_ a: Int, _ b: Int) -> Int {
    var (x, y) = (abs(a), abs(b))
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

/// Copies `count` samples. A plain loop (the compiler makes it a vector copy): the standard
/// library's generic `update(from:count:)` is not proven free of deallocation by `@_noLocks`.
#if RIBBIT_RT_AUDIT
    @_noLocks
#endif
@inlinable
public func copyFloats(_ target: UnsafeMutablePointer<Float>, _ source: UnsafePointer<Float>, _ count: Int) {
    for i in 0..<count { target[i] = source[i] }
}

/// Sets `count` samples to 0.
#if RIBBIT_RT_AUDIT
    @_noLocks
#endif
@inlinable
public func zeroFloats(_ target: UnsafeMutablePointer<Float>, _ count: Int) {
    for i in 0..<count { target[i] = 0 }
}
