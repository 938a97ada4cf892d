import Synchronization

/// Hands immutable configurations from a control thread to the audio thread and back, so the
/// audio thread never allocates, waits or runs a `deinit` (rules: RealtimeRules.swift).
///
/// The control side builds a config (where errors can be thrown) and `publish`es it: one
/// atomic exchange. The audio side, at a boundary of its choosing (a hop), `take`s it: the
/// slot then holds it as `current()` and returns the one it replaced, which the audio side
/// keeps using for as long as it fades out and then `retire`s. The control side `collect`s
/// retired configs and drops them there. A new config waits while the retire slot is full, so
/// at most three configs live at once (current, published, retired).
///
/// One publishing thread; one audio thread. `current()` and the `Unmanaged` values returned
/// are valid until retired: read them with `_withUnsafeGuaranteedRef` (no reference counting).
public struct ConfigSlot<Config: AnyObject & Sendable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let incoming = Atomic<UnsafeMutableRawPointer?>(nil)
    @usableFromInline let retired = Atomic<UnsafeMutableRawPointer?>(nil)
    /// The audio side's config; written by `take` only (and read by the control side only for
    /// reporting, racing benignly with a take: it is a whole pointer).
    @usableFromInline let active: UnsafeMutablePointer<Unmanaged<Config>>

    public init(_ initial: Config) {
        active = .allocate(capacity: 1)
        active.initialize(to: .passRetained(initial))
    }

    deinit {
        active.pointee.release()
        active.deallocate()
        if let p = incoming.exchange(nil, ordering: .acquiring) { Unmanaged<Config>.fromOpaque(p).release() }
        if let p = retired.exchange(nil, ordering: .acquiring) { Unmanaged<Config>.fromOpaque(p).release() }
    }

    // MARK: Control side

    /// Hands `config` to the audio side, which takes it at its next boundary. A config
    /// published earlier and not yet taken is replaced and dropped here. Also collects.
    public func publish(_ config: Config) {
        let p = Unmanaged.passRetained(config).toOpaque()
        if let replaced = incoming.exchange(p, ordering: .acquiringAndReleasing) {
            Unmanaged<Config>.fromOpaque(replaced).release()
        }
        collect()
    }

    /// Drops the config the audio side has finished with. Returns whether there was one.
    @discardableResult
    public func collect() -> Bool {
        guard let p = retired.exchange(nil, ordering: .acquiring) else { return false }
        Unmanaged<Config>.fromOpaque(p).release()
        return true
    }

    /// Whether a published config is still waiting for the audio side.
    public var hasPending: Bool { incoming.load(ordering: .acquiring) != nil }

    /// The config the audio side runs (for reports; it may change right after). Only on the
    /// thread that collects: a config it reads cannot be dropped under it.
    public var currentConfig: Config { active.pointee.takeUnretainedValue() }

    // MARK: Audio thread

    /// Whether a config waits and the retire slot has room for the one it would replace:
    /// `take()` would succeed. Two relaxed loads.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func canTake() -> Bool {
        incoming.load(ordering: .relaxed) != nil && retired.load(ordering: .relaxed) == nil
    }

    /// Makes the published config current and returns the one it replaces (retire it when
    /// done), or nil when nothing waits or the retire slot is still full. Loads first: the
    /// exchange (a locked instruction) only when there is something to take.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func take() -> Unmanaged<Config>? {
        guard incoming.load(ordering: .relaxed) != nil, retired.load(ordering: .acquiring) == nil,
            let p = incoming.exchange(nil, ordering: .acquiring)
        else { return nil }
        let replaced = active.pointee
        active.pointee = Unmanaged<Config>.fromOpaque(p)
        return replaced
    }

    /// The config the audio side runs now.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func current() -> Unmanaged<Config> { active.pointee }

    /// Gives back a config `take` returned, for the control side to drop.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inlinable
    public func retire(_ config: Unmanaged<Config>) {
        retired.store(config.toOpaque(), ordering: .releasing)
    }
}
