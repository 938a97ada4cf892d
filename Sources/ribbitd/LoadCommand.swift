import ArgumentParser
import Foundation
import RibbitControl

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Apply a prescription (.rx text file) to the running daemon and keep it as the active one.",
        discussion: """
            The prescription is checked here and again by the daemon; it is applied with a one-hop crossfade \
            and kept for the next start. On any error the active prescription is unchanged.
            """)

    @Argument(help: "The prescription file (.rx).")
    var prescription: String

    func run() throws {
        let rx = try loadPrescription(prescription)  // a clear error before talking to the daemon
        guard let text = String(data: try Data(contentsOf: URL(fileURLWithPath: prescription)), encoding: .utf8) else {
            throw RibbitError.data("\(prescription): not UTF-8 text; the prescription was not used")
        }
        _ = try sendToDaemon(ControlRequest(command: .load, prescription: text, source: prescription))
        print("loaded \(rx.name) (\(rx.environment))")
    }
}
