import Synchronization

/// A value the audio thread writes whole and any thread reads whole, without locks: a seqlock.
/// The writer makes the sequence odd, copies, makes it even; a reader retries while it is odd
/// or changed under it. Readers may spin for the length of one copy; the writer never waits.
public struct SeqlockSnapshot<Value: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let sequence = Atomic<Int>(0)
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    public init(_ initial: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: initial)
    }

    deinit { storage.deallocate() }

    /// Any thread but the writer: the latest value written, whole.
    public func read() -> Value {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let copy = storage.pointee
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return copy }
        }
    }

    // MARK: Audio thread

    /// The single writer: replaces the value. (Not marked `@_noLocks` itself: a generic body
    /// cannot be proven on its own; it is checked inlined, in each marked caller.)
    @inlinable
    public func write(_ value: Value) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        storage.pointee = value
        sequence.store(s &+ 2, ordering: .releasing)
    }
}
