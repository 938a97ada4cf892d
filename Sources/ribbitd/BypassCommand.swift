import ArgumentParser
import RibbitControl

struct BypassCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bypass",
        abstract: "Play the sound unprocessed (on) or with the prescription again (off).",
        discussion: "Bypassed sound keeps the same delay as processed sound, and the switch is a crossfade, so nothing clicks or jumps.")

    enum State: String, ExpressibleByArgument, CaseIterable { case on, off }

    @Argument(help: "on or off.")
    var state: State

    func run() throws {
        _ = try sendToDaemon(.bypass(on: state == .on))
        print(state == .on ? "bypass on: unprocessed sound" : "bypass off: prescription applied")
    }
}
