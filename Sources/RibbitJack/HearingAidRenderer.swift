import RibbitDSP
import RibbitRealtime

/// The hearing aid as a renderer: the stereo overlap-save engine, following JACK's period.
public final class HearingAidRenderer: PeriodRenderer, @unchecked Sendable {
    public let engine: OverlapSaveEngine
    /// The same engine for the audio thread: no reference counting (`engine` keeps it alive).
    private let engineRef: Unmanaged<OverlapSaveEngine>
    /// The block size the engine was last told (audio thread only).
    private let currentBlock: UnsafeMutablePointer<Int>
    /// Where the engine renders when it must mix (beside another renderer).
    private let scratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let scratchFrames: Int

    public static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
        Unmanaged<HearingAidRenderer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
    }

    /// - Parameter maxFrames: the longest period it may mix at (JACK's limit is 8192).
    public init(engine: OverlapSaveEngine, period: Int, maxFrames: Int = 8192) {
        precondition(engine.channelCount == 2)
        self.engine = engine
        engineRef = .passUnretained(engine)
        currentBlock = .allocate(capacity: 1)
        currentBlock.initialize(to: engine.blockSize ?? period)
        scratchFrames = maxFrames
        scratch = .allocate(capacity: 2)
        for c in 0..<2 {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: maxFrames)
            buffer.initialize(repeating: 0, count: maxFrames)
            (scratch + c).initialize(to: buffer)
        }
    }

    deinit {
        currentBlock.deallocate()
        for c in 0..<2 { scratch[c].deallocate() }
        scratch.deallocate()
    }

    public func latencyFrames(period: Int) -> Int { engine.geometry.latencyFrames(blockSize: period) }

    // MARK: Audio thread

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int,
        mix: Bool
    ) {
        let block = currentBlock
        let scratch = scratch
        let room = scratchFrames
        let mixes = mix && frameCount <= room
        engineRef._withUnsafeGuaranteedRef { engine in
            if frameCount != block.pointee {
                engine.changeBlockSize(to: frameCount)
                block.pointee = frameCount
            }
            engine.process(inputs: inputs, outputs: mixes ? UnsafePointer(scratch) : outputs, frameCount: frameCount)
        }
        guard mixes else { return }
        for c in 0..<2 {
            let (out, mine) = (outputs[c], scratch[c])
            for i in 0..<frameCount { out[i] += mine[i] }
        }
    }
}
