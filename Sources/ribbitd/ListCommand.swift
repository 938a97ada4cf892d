import ArgumentParser
import Foundation
import RibbitControl
import RibbitSettings
import RibbitStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the prescription history; * marks the active one.")

    @Flag(help: "Print JSON for machines: an array of entries, oldest first ([] when the history is empty; docs/json-output.md).")
    var json = false

    /// One history entry as `list --json` prints it.
    struct Entry: Encodable {
        var id: Int64
        var name: String
        var environment: String
        var audiologist: String?
        /// ISO 8601, UTC.
        var loadedAt: String
        var source: String
        var signature: String
        var active: Bool
    }

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
    static let date: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.timeZone = TimeZone.current
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()
}

extension ListCommand.Entry {
    init(_ r: PrescriptionStore.Record, activeID: Int64?) {
        self.init(
            id: r.id ?? 0, name: r.name, environment: r.environment, audiologist: r.audiologist,
            loadedAt: ISO8601DateFormatter().string(from: r.loadedAt), source: r.source, signature: r.signatureText,
            active: r.id == activeID)
    }
}

/// Pretty JSON with sorted keys: the same bytes for the same data, for diffs and scripts.
func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // Encoding plain structs of strings and numbers cannot fail.
    print(String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self))
}
