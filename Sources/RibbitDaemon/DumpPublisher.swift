import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitJack

/// What the engine runs: the filters and the fitting they were designed from (nil: a pure
/// delay, in bypass or without a prescription). The dump reads the gains from it.
struct RunningFilters {
    let filters: FilterSet
    let fitting: Fitting?
}

/// Turns what the RT thread leaves in the sample ring into dump frames, on the control thread,
/// while at least one dump client listens. One per JACK session.
final class DumpPublisher {
    private let accumulator = DumpAccumulator(earCount: 2)
    private var nextFrame = -Double.infinity
    private var lastLimited: Int
    private let droppedBefore: Int
    /// Held strongly: an identifier alone could match a new filter set at a freed one's address.
    private var gains: (filters: FilterSet, ears: [DumpFitting])?

    init(processor: RealtimeProcessor) {
        processor.dumpRing.discard()
        lastLimited = processor.engine.counters.limitedSamples
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
        for ear in 0..<2 { accumulator.append(ear: ear, input: fresh[ear], output: fresh[2 + ear]) }
        let dumps = accumulator.analyze(sampleRate: processor.sampleRate)
        let fittings = fittings(for: running, sampleRate: processor.sampleRate)
        let limited = processor.engine.counters.limitedSamples
        defer { lastLimited = limited }
        return DumpFrame(
            time: time, sampleRate: Int(processor.sampleRate), latencyFrames: processor.latencyFrames, xruns: xruns, output: output,
            prescription: prescription, limitedSamples: limited - lastLimited,
            droppedFrames: processor.dumpRing.dropped.load(ordering: .relaxed) - droppedBefore,
            ears: [
                "left": DumpFrame.Ear(dump: dumps[0], gains: fittings[0].gains, thresholds: fittings[0].thresholds),
                "right": DumpFrame.Ear(dump: dumps[1], gains: fittings[1].gains, thresholds: fittings[1].thresholds),
            ])
    }

    /// The gains of the running filters, computed again only when other filters run.
    private func fittings(for running: RunningFilters, sampleRate: Double) -> [DumpFitting] {
        if let gains, gains.filters === running.filters { return gains.ears }
        let ears = DumpFitting.ears([.left, .right], filters: running.filters, fitting: running.fitting, sampleRate: sampleRate)
        gains = (running.filters, ears)
        return ears
    }
}
