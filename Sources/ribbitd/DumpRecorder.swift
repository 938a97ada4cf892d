import Foundation
import RibbitControl
import RibbitDumpFiles
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
