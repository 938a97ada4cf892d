import ArgumentParser
import RibbitControl
import RibbitFitting

struct ProgramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "program",
        abstract: "Choose the listening program: quiet, noisy, outdoor, music, auto or default; or show it.",
        discussion: """
            A program plays the prescription for a kind of surroundings: quiet (as prescribed; in \
            steady noise the compressor follows the speech, not the gaps between words, as in noisy \
            and outdoor), \
            noisy (noise reduction), outdoor (half the noise reduction, and expansion below soft speech), \
            music (slow compression, no expansion, no noise reduction). auto lets ribbit pick quiet, \
            noisy or music from what the microphone hears, and status says why; default goes back \
            to the program the prescription's environment selects. The switch is a crossfade and is \
            remembered across restarts.
            """)

    enum Choice: String, ExpressibleByArgument, CaseIterable {
        case quiet, noisy, outdoor, music, auto, `default`
    }

    @Argument(help: "The program; none shows the one playing.") var choice: Choice?

    func run() throws {
        var request = ControlRequest.status
        if let choice {
            do { request = .program(try ProgramChoice(choice.rawValue)) } catch { throw RibbitError(error) }
        }
        let status = try sendToDaemon(request)
        guard let listening = status.listening else {
            print("no prescription loaded: programs play a prescription (`ribbitd load RX`)")
            return
        }
        print("program \(Self.describe(listening))")
    }

    /// "noisy (picked automatically: ...)", "music (your choice)", "quiet (the prescription's)".
    static func describe(_ listening: DaemonStatus.Listening) -> String {
        let how =
            switch listening.chosenBy {
            case .auto: "picked automatically" + (listening.reason.map { ": \($0)" } ?? ", listening")
            case .wearer: "your choice"
            case .prescription: "the prescription's environment"
            }
        return "\(listening.program.rawValue) (\(how))"
    }
}
