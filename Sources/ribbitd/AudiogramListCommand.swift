import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitAudiometry
import RibbitSettings

struct AudiogramListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the stored hearing tests, newest first.")

    @Flag(help: "Print JSON for machines: an array of tests, newest first ([] when none).")
    var json = false

    /// One test as `audiogram list --json` prints it (`show --json` gives the whole record).
    struct Entry: Encodable {
        var id: Int64
        /// UTC, ISO 8601.
        var date: String
        var transducer: String
        var ears: [String]
        var flags: [String]
        var unreliable: Bool
    }

    func run() throws {
        let store = try openHearingTests(RibbitPaths())
        let records: [HearingTestRecord]
        do { records = try store.all() } catch { throw RibbitError.noInput("cannot read the hearing tests in \(store.path) (\(error))") }
        if json {
            printJSON(
                records.map {
                    Entry(
                        id: $0.id ?? 0, date: $0.date, transducer: $0.transducer.rawValue,
                        ears: $0.earsText == "none" ? [] : $0.earsText.components(separatedBy: ", "),
                        flags: $0.result.flags.map(\.rawValue),
                        unreliable: $0.result.isUnreliable)
                })
            return
        }
        guard !records.isEmpty else {
            print("no hearing tests yet; `ribbitd hearing-test` takes one")
            return
        }
        let header = ["id", "date", "transducer", "ears", "flags"]
        let rows = records.map { [String($0.id ?? 0), $0.localDate, $0.transducer.rawValue, $0.earsText, $0.flagsText] }
        let widths = (0..<header.count).map { c in ([header] + rows).map { $0[c].count }.max()! }
        for row in [header] + rows {
            // The last column unpadded, as `ribbitd list`: no trailing spaces.
            let cells = zip(row, widths).enumerated().map { c, cell in
                c == header.count - 1 ? cell.0 : cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }
}
