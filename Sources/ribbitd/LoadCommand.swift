import ArgumentParser
import Foundation
import RibbitControl

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Apply a prescription (a .rx file, or a PNG/JPEG of its QR code) and keep it as the active one.",
        discussion: """
            The prescription is checked here and again by the daemon; it is applied with a one-hop crossfade \
            and kept for the next start. On any error the active prescription is unchanged.
            """)

    @Argument(help: "The prescription: a .rx text file, or a PNG or JPEG image of its QR code.")
    var prescription: String

    func run() throws {
        let source = try readPrescription(prescription)  // a clear error before talking to the daemon
        _ = try sendToDaemon(ControlRequest(command: .load, prescription: source.payload, source: prescription))
        print("loaded \(source.prescription.name) (\(source.prescription.environment)) from \(source.kind)")
    }
}
