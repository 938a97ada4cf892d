import Foundation
import RibbitControl
import RibbitMonitor

/// Writes dump frames where they were asked for: JSON lines as they come, a CSV row per frame
/// and ear, and at the end an SVG of their average. Used by `dump` and `process --dump`.
struct DumpRecorder {
    let ears: [String]
    private let jsonLines: FileHandle?
    private let csv: FileHandle?
    private let csvPath: String?
    private let svgPath: String?
    private var average = DumpAverage()
    private(set) var frameCount = 0
    private var firstTime: Double?
    private var lastTime = 0.0

    /// The sound time the frames cover (a frame stands for the 50 ms before its time).
    var seconds: Double { firstTime.map { lastTime - $0 + DumpFrame.intervalSeconds } ?? 0 }

    init(ears: [String], jsonLines: FileHandle?, csvPath: String?, svgPath: String?) throws(RibbitError) {
        self.ears = ears
        self.jsonLines = jsonLines
        self.svgPath = svgPath
        self.csvPath = csvPath
        csv = try csvPath.map { path throws(RibbitError) in
            let handle = try Self.create(path)
            handle.write(Data((CSVRow.header.joined(separator: ",") + "\n").utf8))
            return handle
        }
    }

    /// - Parameter line: the frame's JSON as received (written as it is when no ear is left out).
    mutating func add(_ frame: DumpFrame, line: Data? = nil) throws(RibbitError) {
        var frame = frame
        frame.ears = frame.ears.filter { ears.contains($0.key) }
        frameCount += 1
        if firstTime == nil { firstTime = frame.time }
        lastTime = frame.time
        if let jsonLines {
            if let line, frame.ears.count == ears.count {
                jsonLines.write(line + Data([0x0A]))
            } else {
                jsonLines.write(frame.jsonLine())
            }
        }
        if let csv {
            for ear in ears {
                guard let values = frame.ears[ear] else { continue }
                csv.write(Data((CSVRow.fields(frame, ear: ear, values).joined(separator: ",") + "\n").utf8))
            }
        }
        if svgPath != nil { average.add(frame) }
    }

    /// Closes the files and writes the SVG, or throws `noFrames` when there is nothing to plot.
    func finish(noFrames: RibbitError) throws(RibbitError) {
        try? csv?.close()
        guard let svgPath else { return }
        guard let summary = average.frame else { throw noFrames }
        let svg = DumpSVG.render(summary, ears: ears, frames: average.count, seconds: average.seconds)
        do { try Data(svg.utf8).write(to: URL(fileURLWithPath: svgPath), options: .atomic) } catch {
            throw .cannotCreate("\(svgPath): cannot write (\(describe(error)))")
        }
    }

    /// The average of every frame so far (nil: none).
    var averageFrame: DumpFrame? { average.frame }

    /// What was written, a line per file, for the user: "wrote f.csv: 200 rows (100 frames, 5.0 s, 2 ears)".
    var summary: [String] {
        let span = "\(frameCount) frames, \(String(format: "%.1f", seconds)) s"
        var lines = [String]()
        if jsonLines != nil { lines.append("printed \(frameCount) JSON lines (\(span))") }
        if let csvPath { lines.append("wrote \(csvPath): \(frameCount * ears.count) rows (\(span), \(ears.joined(separator: " and ")))") }
        if let svgPath, frameCount > 0 { lines.append("wrote \(svgPath): the average of \(span)") }
        return lines
    }

    static func create(_ path: String) throws(RibbitError) -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw .cannotCreate("\(path): cannot write (check that the directory exists and is writable)")
        }
        return handle
    }
}

/// The CSV columns: one row per frame and ear (docs/dump-format.md).
enum CSVRow {
    static var header: [String] {
        let bands = DumpAnalyzer.bandCentersHz.map { String(Int($0)) }
        return [
            "time_s", "ear", "output", "input_rms_dbfs", "input_peak_dbfs", "output_rms_dbfs", "output_peak_dbfs", "limited_samples",
            "dropped_frames",
        ]
            + bands.map { "input_\($0)hz_dbfs" } + bands.map { "output_\($0)hz_dbfs" } + bands.map { "target_gain_\($0)hz_db" }
    }

    static func fields(_ frame: DumpFrame, ear: String, _ e: DumpFrame.Ear) -> [String] {
        let levels = [e.inputRMSDB, e.inputPeakDB, e.outputRMSDB, e.outputPeakDB].map(number)
        return [String(format: "%.3f", frame.time), ear, frame.output.rawValue] + levels
            + ["\(frame.limitedSamples)", "\(frame.droppedFrames)"]
            + e.inputBandsDB.map(number) + e.outputBandsDB.map(number) + e.targetGainDB.map { $0.map(number) ?? "" }
    }

    static func number(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// The power average of frames, for the SVG: band and spectrum levels and RMS averaged as
/// power (loud moments count as they sound), peaks as the maximum; the gains, audiogram and
/// prescription of the newest frame.
struct DumpAverage {
    private var total: DumpFrame?  // levels as power sums (peaks as maximum power)
    private(set) var count = 0
    private var firstTime = 0.0
    private var limited = 0

    /// The time the frames cover.
    var seconds: Double { (total?.time ?? 0) - firstTime }

    mutating func add(_ frame: DumpFrame) {
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
    var frame: DumpFrame? {
        guard let total else { return nil }
        let n = Double(count)
        var average = total.mapLevels(level: { Self.decibels($0 / n) }, peak: Self.decibels)  // a peak is a maximum, not a sum
        average.limitedSamples = limited
        return average
    }

    static func power(_ db: Double) -> Double { pow(10, db / 10) }
    static func decibels(_ power: Double) -> Double { max(DumpAnalyzer.floorDB, 10 * log10(max(power, 1e-30))) }
}

extension DumpFrame {
    /// The frame with every ear's levels converted: `level` for RMS, bands and spectra, `peak` for the peaks.
    func mapLevels(level: (Double) -> Double, peak: (Double) -> Double) -> DumpFrame {
        var copy = self
        for name in ears.keys { copy.ears[name]!.measured = ears[name]!.measured.mapLevels(level: level, peak: peak) }
        return copy
    }
}
