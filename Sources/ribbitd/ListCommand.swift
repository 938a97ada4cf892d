import ArgumentParser
import Foundation
import RibbitAudiogramReport
import RibbitControl
import RibbitSettings
import RibbitStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the prescription history; * marks the active one.")

    @Flag(help: "Print JSON for machines: an array of entries, oldest first ([] when the history is empty; docs/json-output.md).")
    var json = false

    /// One history entry as `list --json` prints it (in RibbitStore: the web app answers the same).
    typealias Entry = HistoryEntry

    func run() throws {
        let store = try openStore(RibbitPaths())
        let records: [PrescriptionStore.Record]
        let activeID: Int64?
        do {
            records = try store.all()
            activeID = try store.activeID()
        } catch { throw RibbitError.noInput("cannot read the history \(store.path) (\(error))") }
        if json {
            printJSON(records.map { Entry($0, activeID: activeID) })
            return
        }
        guard !records.isEmpty else {
            print("no prescriptions yet; `ribbitd load RX` adds one")
            return
        }
        let rows = records.map { r in
            [
                (r.id == activeID ? "*" : " ") + String(r.id ?? 0), r.name, r.environment, r.audiologist ?? "-",
                Self.date.string(from: r.loadedAt), r.signatureText,
            ]
        }
        let header = ["id", "name", "environment", "audiologist", "loaded", "signature"]
        let widths = (0..<header.count).map { c in ([header] + rows).map { $0[c].count }.max()! }
        for row in [header] + rows {
            // The last column unpadded: no trailing spaces to trip `grep 'x$'` or a diff.
            let cells = zip(row, widths).enumerated().map { c, cell in
                c == header.count - 1 ? cell.0 : cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// Local time, as the wearer's clock shows it (TZ); the JSON keeps UTC.
    static var date: DateFormatter { LocalDate.minutes }
}

/// Pretty JSON with sorted keys: the same bytes for the same data, for diffs and scripts.
func printJSON(_ value: some Encodable) {
    print(String(decoding: HistoryEntry.json(value), as: UTF8.self))
}
