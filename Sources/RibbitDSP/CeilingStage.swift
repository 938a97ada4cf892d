/// The last stage of every hop: one `PeakLimiter` per channel under the ceiling in force.
///
/// The ceiling has one owner, the filter set (`FilterSet.ceiling`, from the daemon's fitting):
/// the engine passes the lowest ceiling of the filter sets in flight (current, and the one
/// fading out), so new gains never play under a looser ceiling than they were made for, and a
/// ceiling change needs no crossfade of its own: the limiter's gain is continuous.
public struct CeilingStage: ~Copyable, @unchecked Sendable {
    let limiters: UnsafeMutablePointer<PeakLimiter>
    public let channelCount: Int

    public init(channelCount: Int, sampleRate: Double) {
        self.channelCount = channelCount
        limiters = .allocate(capacity: channelCount)
        limiters.initialize(repeating: PeakLimiter(sampleRate: sampleRate), count: channelCount)
    }

    deinit { limiters.deallocate() }

    /// Limits one channel's `count` samples in place under `limit` (the filter sets' lowest);
    /// returns how many it changed. Non-finite samples become 0.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func apply(_ samples: UnsafeMutablePointer<Float>, count: Int, channel: Int, limit: (ceiling: Float, knee: Float)) -> Int {
        limiters[channel].process(samples, count: count, ceiling: limit.ceiling, knee: limit.knee)
    }
}
