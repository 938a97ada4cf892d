import ArgumentParser
import RibbitControl

struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Undo `pause`: the output fades back in.")

    func run() throws {
        _ = try sendToDaemon(.resume)
        print("resumed")
    }
}
