import ArgumentParser
import RibbitControl

struct StopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop the running daemon.")

    func run() throws {
        _ = try sendToDaemon(.stop)
        print("ribbitd is stopping")
    }
}
