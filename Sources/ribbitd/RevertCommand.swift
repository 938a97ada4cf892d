import ArgumentParser
import RibbitControl

struct RevertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert", abstract: "End the trial now and go back to the prescription before it.")

    func run() throws {
        let status = try sendToDaemon(.revert)
        print("back to \(status.prescription.map { "\($0.name) (\($0.environment))" } ?? "no prescription (unchanged sound)")")
    }
}
