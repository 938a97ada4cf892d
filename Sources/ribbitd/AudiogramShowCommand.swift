import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitPlot
import RibbitPrescription

struct AudiogramShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a stored hearing test: thresholds per ear, noise, reliability, calibration.")

    @Argument(help: ArgumentHelp("The test's id (`ribbitd audiogram list`).", valueName: "ID")) var id: Int64
    @Flag(help: "Print the whole record as JSON, every presentation included.") var json = false

    func run() throws {
        let record = try findHearingTest(id)
        if json {
            printJSON(record)
            return
        }
        print(Self.text(record), terminator: "")
    }

    static func text(_ record: HearingTestRecord) -> String {
        let result = record.result
        var out = "hearing test \(record.id ?? 0), \(record.localDate)\n"
        out += "\(HearingTestRecord.disclaimer)\n\n"
        out += "headphones:  \(record.transducerText)\n"
        out += "calibration: \(record.calibrationText)\n"
        out += "ceiling:     \(HearingTestRecord.number(record.ceilingDBHL)) dB HL\n"
        for ear in Ear.plotOrder {
            let rows = result.frequencies.filter { $0.ear == ear }.sorted {
                ($0.frequencyHz, $0.isRetest ? 1 : $0.isMasked ? 2 : 0) < ($1.frequencyHz, $1.isRetest ? 1 : $1.isMasked ? 2 : 0)
            }
            guard !rows.isEmpty else { continue }
            out += "\n\(ear.plotTitle.lowercased())\n"
            let header = ["Hz", "threshold", "noise dB SPL", "presentations"]
            // Where a frequency was measured more than once (the 1 kHz retest, masking), the one
            // the audiogram keeps is marked.
            let cells = rows.map { row in
                let measuredTwice = rows.filter { $0.frequencyHz == row.frequencyHz }.count > 1
                let kept = measuredTwice && result.threshold(ear: ear, frequencyHz: row.frequencyHz) == row
                return [
                    "\(row.frequencyHz)\(row.isRetest ? " retest" : "")\(row.maskingDBEM.map { " masked, \($0) dB EM" } ?? "")",
                    row.levelText + (kept ? " (kept)" : ""),
                    row.ambientNoiseDBSPL.map { String(format: "%.1f", $0) } ?? "not checked", String(row.presentations),
                ]
            }
            let widths = (0..<header.count).map { c in ([header] + cells).map { $0[c].count }.max()! }
            for row in [header] + cells {
                out +=
                    "  "
                    + zip(row, widths).enumerated().map { c, cell in
                        c == header.count - 1 ? cell.0 : cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                    }.joined(separator: "  ") + "\n"
            }
        }
        out += "\nreliability\n"
        for line in result.reliabilityLines { out += "  \(line)\n" }
        for line in record.findings.lines { out += "  ! \(line)\n" }
        return out
    }
}
