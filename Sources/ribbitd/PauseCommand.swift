import ArgumentParser
import RibbitControl

struct PauseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Silence the output (fades out in 5 ms); `ribbitd resume` brings it back.")

    func run() throws {
        _ = try sendToDaemon(.pause(lease: nil))
        print("paused: output silent")
    }
}
