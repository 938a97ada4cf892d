import ArgumentParser
import RibbitControl

struct KeepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "keep", abstract: "Keep the trial prescription for good.")

    func run() throws {
        let status = try sendToDaemon(.keep)
        print("keeping \(status.prescription?.name ?? "the trial prescription")")
    }
}
