import RibbitRealtime

/// The C-callable entry of a renderer: (the renderer as an unretained opaque pointer, inputs,
/// outputs, frame count, mix). See `PeriodRenderer.renderEntry`.
public typealias RenderEntry =
    @convention(c) (
        UnsafeMutableRawPointer, UnsafePointer<UnsafePointer<Float>>, UnsafePointer<UnsafeMutablePointer<Float>>, Int, Bool
    ) -> Void

/// What JACK's process callback runs, one period at a time: the hearing aid
/// (`HearingAidRenderer`), and later a tone generator for a hearing test or a microphone tap
/// for voice exercises, instead of it or beside it (`RealtimeProcessor.run(_:)`).
///
/// `render` runs on the audio thread (rules: RibbitRealtime/RealtimeRules.swift; mark it with
/// `@_noLocks` under `#if RIBBIT_RT_AUDIT`). It gets two input and two output channels (left,
/// right). The first renderer of a set writes the outputs (`mix` false); the ones after it add
/// to what is there (`mix` true), or leave it alone (a tap that only listens). Whatever they
/// write, the processor then applies the output ceiling, the pause ramp and the dump tap, so
/// no renderer can play above the ceiling in force.
///
/// Swift cannot call a protocol method on the audio thread without reference counting (an
/// existential is retained), so each conformer names its own C entry, always the same line:
///
///     public static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
///         Unmanaged<Self>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
///     }
public protocol PeriodRenderer: AnyObject, Sendable {
    static var renderEntry: RenderEntry { get }
    /// One period; see the protocol's notes.
    func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int,
        mix: Bool)
    /// The delay from input to output this renderer adds at a JACK period, in frames (0 for
    /// one that does not pass the input through). Any thread.
    func latencyFrames(period: Int) -> Int
}

/// An immutable list of renderers, in the order they run; published to the processor through
/// a `ConfigSlot`, so it keeps the renderers alive until the control side collects it.
public final class RendererSet: @unchecked Sendable {
    public let renderers: [any PeriodRenderer]
    let entries: UnsafeMutablePointer<RenderEntry>
    let contexts: UnsafeMutablePointer<UnsafeMutableRawPointer>
    let count: Int

    public init(_ renderers: [any PeriodRenderer]) {
        self.renderers = renderers
        count = renderers.count
        entries = .allocate(capacity: max(count, 1))
        contexts = .allocate(capacity: max(count, 1))
        for (i, renderer) in renderers.enumerated() {
            (entries + i).initialize(to: type(of: renderer).renderEntry)
            // Unretained: `renderers` holds them.
            (contexts + i).initialize(to: Unmanaged.passUnretained(renderer as AnyObject).toOpaque())
        }
    }

    deinit {
        entries.deallocate()
        contexts.deallocate()
    }

    /// The largest delay of the set at a period, in frames.
    public func latencyFrames(period: Int) -> Int { renderers.map { $0.latencyFrames(period: period) }.max() ?? 0 }
}
