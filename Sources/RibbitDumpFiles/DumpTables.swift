import Foundation
import RibbitControl
import RibbitMonitor

/// The CSV columns: one row per frame and ear (docs/dump-format.md).
public enum CSVRow {
    public static var header: [String] {
        let bands = DumpAnalyzer.bandCentersHz.map { String(Int($0)) }
        return [
            "time_s", "ear", "output", "input_rms_dbfs", "input_peak_dbfs", "output_rms_dbfs", "output_peak_dbfs", "limited_samples",
            "dropped_frames",
        ]
            + bands.map { "input_\($0)hz_dbfs" } + bands.map { "output_\($0)hz_dbfs" } + bands.map { "target_gain_\($0)hz_db" }
    }

    public static func fields(_ frame: DumpFrame, ear: String, _ e: DumpFrame.Ear) -> [String] {
        let levels = [e.inputRMSDB, e.inputPeakDB, e.outputRMSDB, e.outputPeakDB].map(number)
        return [String(format: "%.3f", frame.time), ear, frame.output.rawValue] + levels
            + ["\(frame.limitedSamples)", "\(frame.droppedFrames)"]
            + e.inputBandsDB.map(number) + e.outputBandsDB.map(number) + e.targetGainDB.map { $0.map(number) ?? "" }
    }

    public static func number(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// The power average of frames, for the SVG: band and spectrum levels and RMS averaged as
/// power (loud moments count as they sound), peaks as the maximum; the gains, audiogram and
/// prescription of the newest frame.
public struct DumpAverage {
    private var total: DumpFrame?  // levels as power sums (peaks as maximum power)
    public private(set) var count = 0
    private var firstTime = 0.0
    private var limited = 0

    /// The time the frames cover.
    public var seconds: Double { (total?.time ?? 0) - firstTime }

    public init() {}

    public mutating func add(_ frame: DumpFrame) {
        count += 1
        limited += frame.limitedSamples
        let powers = frame.mapLevels(level: Self.power, peak: Self.power)
        guard var sum = total else {
            firstTime = frame.time - DumpFrame.intervalSeconds
            total = powers
            return
        }
        for (name, ear) in powers.ears {
            guard let s = sum.ears[name] else { continue }
            var newest = ear
            newest.measured = EarDump.combine(s.measured, ear.measured, level: +, peak: max)
            sum.ears[name] = newest
        }
        (sum.time, sum.prescription, sum.output, sum.xruns, sum.droppedFrames, sum.latencyFrames) =
            (frame.time, frame.prescription, frame.output, frame.xruns, frame.droppedFrames, frame.latencyFrames)
        total = sum
    }

    /// The average as a frame, in dB again; nil before the first frame.
    public var frame: DumpFrame? {
        guard let total else { return nil }
        let n = Double(count)
        var average = total.mapLevels(level: { Self.decibels($0 / n) }, peak: Self.decibels)  // a peak is a maximum, not a sum
        average.limitedSamples = limited
        return average
    }

    public static func power(_ db: Double) -> Double { pow(10, db / 10) }
    public static func decibels(_ power: Double) -> Double { max(DumpAnalyzer.floorDB, 10 * log10(max(power, 1e-30))) }
}

extension DumpFrame {
    /// The frame with every ear's levels converted: `level` for RMS, bands and spectra, `peak` for the peaks.
    public func mapLevels(level: (Double) -> Double, peak: (Double) -> Double) -> DumpFrame {
        var copy = self
        for name in ears.keys { copy.ears[name]!.measured = ears[name]!.measured.mapLevels(level: level, peak: peak) }
        return copy
    }
}
