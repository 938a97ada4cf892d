import RibbitRealtime

/// A stage of the engine's per-hop path that changes each channel's spectrum: today the
/// prescription's filter (`FilterStage`); next a per-band compressor or noise reduction.
///
/// Per hop and channel the engine runs: analysis (r2c of the newest fftLength inputs) ->
/// every gain stage in order, on the spectrum -> synthesis (c2r, keep the last hop) -> the
/// ceiling (`CeilingStage`). A stage's settings are an immutable `Config` object, built off the
/// audio thread and published through its own `ConfigSlot`; at a hop where any gain stage
/// takes a new config, the engine renders the hop twice (every stage's old config, then the
/// new ones) and crossfades the two in time with the smooth step, so no change clicks.
///
/// `apply` runs on the audio thread (rules: RibbitRealtime/RealtimeRules.swift): mark it with
/// `@_noLocks` under `#if RIBBIT_RT_AUDIT`, read the config through `_withUnsafeGuaranteedRef`,
/// keep any state (an envelope per band) in memory allocated in `init`, and do not advance it
/// when `advancesState` is false (the fade-out render of a crossfade hop), so state moves once
/// per hop. A stage may change the spectrum freely; what it cannot do is put more than
/// fftLength - hopSize samples of impulse response into the frame (the overlap-save keep
/// assumes it): smooth per-bin gains over frequency enough, as `FilterSet` does by design.
public protocol SpectralGainStage: ~Copyable {
    associatedtype Config: AnyObject & Sendable
    /// Changes `spectrum` (complexCount interleaved (re, im) values, unnormalised r2c output)
    /// of one channel in place under `config`.
    func apply(_ config: Unmanaged<Config>, to spectrum: UnsafeMutablePointer<Float>, channel: Int, advancesState: Bool)
}

/// A gain stage with its config slot and what a crossfade hop needs: the engine holds one per
/// stage and calls `beginHop`, `apply` (per channel, once or twice) and `endHop` every hop.
struct GainStageRunner<Stage: SpectralGainStage>: ~Copyable, @unchecked Sendable {
    let stage: Stage
    let slot: ConfigSlot<Stage.Config>
    /// The config being faded out during this hop, if any.
    let fadingFrom: UnsafeMutablePointer<Unmanaged<Stage.Config>?>

    init(_ stage: Stage, config: Stage.Config) {
        self.stage = stage
        slot = ConfigSlot(config)
        fadingFrom = .allocate(capacity: 1)
        fadingFrom.initialize(to: nil)
    }

    deinit { fadingFrom.deallocate() }

    // MARK: Audio thread (not marked `@_noLocks` themselves: a generic body cannot be proven
    // on its own; each is checked specialised, inside the engine's marked callers)

    /// Takes a published config if there is one and `allowed`; true when this hop crossfades.
    func beginHop(allowed: Bool) -> Bool {
        guard allowed, let old = slot.take() else { return false }
        fadingFrom.pointee = old
        return true
    }

    /// Applies the current config, or with `fadeOut` the one being faded out (the current one
    /// when this stage did not change).
    func apply(to spectrum: UnsafeMutablePointer<Float>, channel: Int, fadeOut: Bool) {
        let config = fadeOut ? (fadingFrom.pointee ?? slot.current()) : slot.current()
        stage.apply(config, to: spectrum, channel: channel, advancesState: !fadeOut)
    }

    /// Retires the config faded out in this hop, if any.
    func endHop() {
        guard let old = fadingFrom.pointee else { return }
        slot.retire(old)
        fadingFrom.pointee = nil
    }
}
