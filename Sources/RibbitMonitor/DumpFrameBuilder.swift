import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitPrescription

/// Puts dump frames together, the one place that does: the daemon's `DumpService` feeds it
/// what the RT thread left in the sample ring, `ribbitd process --dump` what the engine made of
/// a file. Each frame holds the levels of the samples appended since the previous frame, the
/// bands and spectra of the newest ones, the gains of the filters running and the audiogram.
/// Control thread (or offline) only: it allocates and plans FFTs.
public final class DumpFrameBuilder {
    /// The ears, in the order their samples are appended.
    public let ears: [Ear]
    public let sampleRate: Double
    private let accumulator: DumpAccumulator
    private var limitedBefore: Int
    /// Held strongly: an identifier alone could match a new filter set at a freed one's address.
    private var fittings: (filters: FilterSet, ears: [DumpFitting])?

    /// - Parameter limitedSamples: the engine's count of limited samples now, so the first
    ///   frame reports only what the ceiling changed after it.
    public init(ears: [Ear], sampleRate: Double, limitedSamples: Int = 0) {
        self.ears = ears
        self.sampleRate = sampleRate
        accumulator = DumpAccumulator(earCount: ears.count)
        limitedBefore = limitedSamples
    }

    /// Sample frames appended since the previous frame.
    public var pendingFrames: Int { accumulator.pendingFrames }

    /// Appends the same number of samples of one ear's input and output (`ear`: index in `ears`).
    public func append<I: Collection<Float>, O: Collection<Float>>(ear: Int, input: I, output: O) {
        accumulator.append(ear: ear, input: input, output: output)
    }

    /// The frame of what was appended since the previous one.
    /// - Parameters:
    ///   - time: seconds at the end of the samples analysed.
    ///   - filters: what the engine runs, one channel per ear in `ears` order; `fitting`: what
    ///     they were designed from (nil: a pure delay). Their gains are computed again only when
    ///     other filters run.
    ///   - limitedSamples: the engine's count of limited samples now (the frame gets the change).
    ///   - droppedFrames: frames the RT thread could not hand over since the listener joined.
    public func frame(
        time: Double, latencyFrames: Int, xruns: Int, output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?,
        filters: FilterSet, fitting: Fitting?, limitedSamples: Int, droppedFrames: Int, calibration: DaemonStatus.Calibration? = nil
    ) -> DumpFrame {
        let dumps = accumulator.analyze(sampleRate: sampleRate)
        let fittings = fittings(for: filters, fitting: fitting)
        var earFrames = [String: DumpFrame.Ear]()
        for (index, ear) in ears.enumerated() {
            earFrames[ear.rawValue] = DumpFrame.Ear(
                dump: dumps[index], gains: fittings[index].gains, thresholds: fittings[index].thresholds,
                noResponse: fittings[index].noResponse)
        }
        defer { limitedBefore = limitedSamples }
        return DumpFrame(
            time: time, sampleRate: Int(sampleRate), latencyFrames: latencyFrames, xruns: xruns, output: output, prescription: prescription,
            limitedSamples: limitedSamples - limitedBefore, droppedFrames: droppedFrames, ears: earFrames, calibration: calibration)
    }

    private func fittings(for filters: FilterSet, fitting: Fitting?) -> [DumpFitting] {
        if let fittings, fittings.filters === filters { return fittings.ears }
        let ears = DumpFitting.ears(ears, filters: filters, fitting: fitting, sampleRate: sampleRate)
        fittings = (filters, ears)
        return ears
    }
}
