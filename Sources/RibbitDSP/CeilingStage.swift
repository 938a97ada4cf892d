import RibbitRealtime

/// The output ceiling as an immutable config: linear full scale, never above 1 (0 dBFS).
public final class CeilingConfig: Sendable {
    public let ceiling: Float
    public let knee: Float

    /// `ceiling` is clamped to (0, 1]: no setting may play louder than full scale.
    public init(ceiling: Float) {
        let c = ceiling > 0 && ceiling <= 1 ? ceiling : ceiling > 1 ? 1 : Float.leastNormalMagnitude
        self.ceiling = c
        knee = PeakLimiter.knee(ceiling: c)
    }
}

/// The last stage of every hop: one `PeakLimiter` per channel under the ceiling in force.
///
/// The ceiling in force is the lowest of every ceiling in flight: this stage's config (current,
/// and during the hop it changes, the old one too) and the `cap` the engine passes, which is the
/// lowest ceiling of the filter sets in flight. So whatever order the configs are published and
/// taken in, new gains never play under a looser ceiling than they were made for, and a
/// ceiling change needs no crossfade of its own: the limiter's gain is continuous.
public struct CeilingStage: ~Copyable, @unchecked Sendable {
    public let slot: ConfigSlot<CeilingConfig>
    let limiters: UnsafeMutablePointer<PeakLimiter>
    let fadingFrom: UnsafeMutablePointer<Unmanaged<CeilingConfig>?>
    public let channelCount: Int

    public init(ceiling: CeilingConfig, channelCount: Int, sampleRate: Double) {
        slot = ConfigSlot(ceiling)
        self.channelCount = channelCount
        limiters = .allocate(capacity: channelCount)
        limiters.initialize(repeating: PeakLimiter(sampleRate: sampleRate), count: channelCount)
        fadingFrom = .allocate(capacity: 1)
        fadingFrom.initialize(to: nil)
    }

    deinit {
        limiters.deallocate()
        fadingFrom.deallocate()
    }

    // MARK: Audio thread

    /// Takes a published ceiling if there is one; true when it changed.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func beginHop() -> Bool {
        guard let old = slot.take() else { return false }
        fadingFrom.pointee = old
        return true
    }

    /// The ceiling and knee in force this hop, given the lowest ceiling of the other configs
    /// in flight (`cap`, with its knee).
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func inForce(cap: (ceiling: Float, knee: Float)) -> (ceiling: Float, knee: Float) {
        var lowest = cap
        let current = slot.current()._withUnsafeGuaranteedRef { ($0.ceiling, $0.knee) }
        if current.0 < lowest.ceiling { lowest = current }
        if let old = fadingFrom.pointee {
            let previous = old._withUnsafeGuaranteedRef { ($0.ceiling, $0.knee) }
            if previous.0 < lowest.ceiling { lowest = previous }
        }
        return lowest
    }

    /// Limits one channel's `count` samples in place under `limit` (from `inForce`); returns
    /// how many it changed. Non-finite samples become 0.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func apply(_ samples: UnsafeMutablePointer<Float>, count: Int, channel: Int, limit: (ceiling: Float, knee: Float)) -> Int {
        limiters[channel].process(samples, count: count, ceiling: limit.ceiling, knee: limit.knee)
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func endHop() {
        guard let old = fadingFrom.pointee else { return }
        slot.retire(old)
        fadingFrom.pointee = nil
    }
}
