import ArgumentParser
import Foundation
import RibbitControl
import RibbitFitting
import RibbitIntake
import RibbitPrescription
import RibbitSettings
import RibbitSignature

struct RxShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Check a prescription and print it with its target gains per ear.",
        discussion: """
            The gains are insertion gains in dB at each audiometric frequency, low-pass included. \
            The signature is checked against your trusted keys (`ribbitd rx trust`): unsigned, signed by NAME \
            (trusted), or signed, unknown key KEYID; a bad signature is refused (exit 65). --json prints the same \
            fields, the verdict as `signature` in the same words.
            """
    )

    @Argument(
        help: ArgumentHelp("The prescription: .rx text, or a PNG/JPEG of its QR code.", valueName: "RX"), completion: .prescriptionFile)
    var path: String
    @Flag(help: "Print JSON for machines.") var json = false

    func run() throws {
        let paths = RibbitPaths()
        // Judged against the trusted keys, but shown whatever the policy says (a bad signature is refused).
        let trusted = Intake.load(paths: paths, config: try loadConfig(paths)).trusted
        let accepted = try readPrescription(path, intake: Intake(trusted: trusted, requireSigned: false)).accepted
        let report = try PrescriptionReport(accepted)
        if json {
            printJSON(report)
        } else {
            print(report.text)
        }
    }
}
