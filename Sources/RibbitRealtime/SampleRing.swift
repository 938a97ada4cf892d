import Synchronization

/// A single-producer/single-consumer ring of sample frames: the RT thread writes the input and
/// output of both ears, the control thread reads them to compute the dump's spectra and levels.
///
/// The writer never waits: when the reader is slow or gone and the ring is full, the new frames
/// are dropped and counted. Preallocated; write() touches only the buffer and two atomics.
public final class SampleRing: @unchecked Sendable {
    /// Channels per frame: input left, input right, output left, output right.
    public static let channels = 4
    public let capacity: Int
    @usableFromInline let buffer: UnsafeMutablePointer<Float>
    /// Frames written and read since the start (monotonic; the difference is the fill).
    @usableFromInline let written = Atomic<Int>(0)
    @usableFromInline let read = Atomic<Int>(0)
    /// Frames dropped because the ring was full.
    public let dropped = Atomic<Int>(0)

    public init(capacity: Int) {
        self.capacity = capacity
        buffer = .allocate(capacity: capacity * Self.channels)
        buffer.initialize(repeating: 0, count: capacity * Self.channels)
    }

    deinit { buffer.deallocate() }

    // MARK: Audio thread

    /// Appends `count` frames of the four channels, or drops them all when they do not fit.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func write(
        _ c0: UnsafePointer<Float>, _ c1: UnsafePointer<Float>, _ c2: UnsafePointer<Float>, _ c3: UnsafePointer<Float>, count: Int
    ) {
        let w = written.load(ordering: .relaxed)
        let r = read.load(ordering: .acquiring)
        guard capacity - (w - r) >= count else {
            dropped.add(count, ordering: .relaxed)
            return
        }
        let at = w % capacity
        // Four plain calls: an array of the pointers would allocate on the RT thread.
        copy(c0, channel: 0, at: at, count: count)
        copy(c1, channel: 1, at: at, count: count)
        copy(c2, channel: 2, at: at, count: count)
        copy(c3, channel: 3, at: at, count: count)
        written.store(w + count, ordering: .releasing)
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    func copy(_ source: UnsafePointer<Float>, channel: Int, at: Int, count: Int) {
        let base = buffer + channel * capacity
        let first = min(count, capacity - at)
        copyFloats(base + at, source, first)
        copyFloats(base, source + first, count - first)
    }

    // MARK: Reader side

    /// Appends every frame waiting to `channels` (4 arrays) and frees the space.
    public func drain(into channels: inout [[Float]]) {
        let w = written.load(ordering: .acquiring)
        let r = read.load(ordering: .relaxed)
        let count = w - r
        guard count > 0 else { return }
        let at = r % capacity
        let first = min(count, capacity - at)
        for channel in 0..<Self.channels {
            let base = buffer + channel * capacity
            channels[channel].append(contentsOf: UnsafeBufferPointer(start: base + at, count: first))
            channels[channel].append(contentsOf: UnsafeBufferPointer(start: base, count: count - first))
        }
        read.store(w, ordering: .releasing)
    }

    /// Forgets what is waiting (when a listener arrives after a pause).
    public func discard() { read.store(written.load(ordering: .acquiring), ordering: .releasing) }
}
