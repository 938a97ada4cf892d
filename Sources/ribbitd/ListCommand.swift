import ArgumentParser
import Foundation
import RibbitControl
import RibbitDaemon
import RibbitStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the prescription history; * marks the active one.")

    func run() throws {
        let store = try openStore(RibbitPaths())
        let records: [PrescriptionStore.Record]
        let activeID: Int64?
        do {
            records = try store.all()
            activeID = try store.activeID()
        } catch { throw RibbitError.noInput("cannot read the history \(store.path) (\(error))") }
        guard !records.isEmpty else {
            print("no prescriptions yet; `ribbitd load RX` adds one")
            return
        }
        let rows = records.map { r in
            [
                (r.id == activeID ? "*" : " ") + String(r.id ?? 0), r.name, r.environment, r.audiologist ?? "-",
                Self.date.string(from: r.loadedAt), Daemon.signatureText(r),
            ]
        }
        let header = ["id", "name", "environment", "audiologist", "loaded (UTC)", "signature"]
        let widths = (0..<header.count).map { c in ([header] + rows).map { $0[c].count }.max()! }
        for row in [header] + rows {
            print(zip(row, widths).map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
    }

    static let date: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()
}
