import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitJack
import RibbitMonitor

/// What the engine runs: the filters and the fitting they were designed from (nil: a pure
/// delay, in bypass or without a prescription). The dump reads the gains from it.
struct RunningFilters {
    let filters: FilterSet
    let fitting: Fitting?
}

/// Hands what the RT thread leaves in the sample ring to a `DumpFrameBuilder`, on the control
/// thread, while at least one dump client listens. One per JACK session.
final class DumpPublisher {
    private let builder: DumpFrameBuilder
    private var nextFrame = -Double.infinity
    private let droppedBefore: Int

    init(processor: RealtimeProcessor) {
        processor.dumpRing.discard()
        builder = DumpFrameBuilder(
            ears: [.left, .right], sampleRate: processor.sampleRate, limitedSamples: processor.engine.counters.limitedSamples)
        droppedBefore = processor.dumpRing.dropped.load(ordering: .relaxed)
    }

    /// True at most once per frame interval, on a fixed grid (20 a second even when the poll
    /// loop wakes a little late).
    func isDue(now: Double) -> Bool {
        guard now >= nextFrame else { return false }
        nextFrame += DumpFrame.intervalSeconds
        if nextFrame <= now { nextFrame = now + DumpFrame.intervalSeconds }  // first frame, or a long stall
        return true
    }

    func frame(
        from processor: RealtimeProcessor, running: RunningFilters, time: Double, xruns: Int,
        output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?
    ) -> DumpFrame {
        var fresh = [[Float]](repeating: [], count: SampleRing.channels)
        processor.dumpRing.drain(into: &fresh)
        for ear in 0..<2 { builder.append(ear: ear, input: fresh[ear], output: fresh[2 + ear]) }
        return builder.frame(
            time: time, latencyFrames: processor.latencyFrames, xruns: xruns, output: output, prescription: prescription,
            filters: running.filters, fitting: running.fitting, limitedSamples: processor.engine.counters.limitedSamples,
            droppedFrames: processor.dumpRing.dropped.load(ordering: .relaxed) - droppedBefore)
    }
}
