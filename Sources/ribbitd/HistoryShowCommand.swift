import ArgumentParser
import Foundation
import RibbitControl
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings
import RibbitStore

struct HistoryShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a prescription from the history: details and target gains.")

    @Argument(
        help: ArgumentHelp("A history id or name (`ribbitd list`).", valueName: "ID|NAME"), completion: .custom(HistoryCompletion.names))
    var selector: String

    @Flag(help: "Print JSON for machines: the entry and the prescription as `rx show --json` gives it (docs/json-output.md).")
    var json = false

    /// `show --json`: the history entry (as one element of `list --json`) and its prescription.
    struct Output: Encodable {
        var entry: ListCommand.Entry
        var prescription: PrescriptionReport
    }

    func run() throws {
        let store = try openStore(RibbitPaths())
        guard let record = try? store.find(selector) else {
            throw RibbitError.data("no prescription '\(selector)' in the history; `ribbitd list` shows them")
        }
        let report: PrescriptionReport
        do { report = try PrescriptionReport(record: record) } catch let error as IntakeError { throw RibbitError.data(error.description) }
        if json {
            let activeID = try? store.activeID()
            printJSON(Output(entry: ListCommand.Entry(record, activeID: activeID), prescription: report))
            return
        }
        print("history entry \(record.id ?? 0), loaded \(ListCommand.date.string(from: record.loadedAt)) from \(record.source)")
        print("")
        print(report.text)
    }
}
