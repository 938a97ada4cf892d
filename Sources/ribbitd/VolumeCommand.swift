import ArgumentParser
import RibbitControl
import RibbitFitting
import RibbitPrescription

struct VolumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Turn the hearing aid up or down (+3, -3), set a level (0, 5) or show it.",
        discussion: """
            A signed number (+3, -2.5) moves the volume by that many dB; an unsigned one (0, 4) sets it. \
            It stays within the prescription's volume-range (default -10 to +10 dB), changes with a crossfade (no click), is remembered \
            across restarts and starts again at 0 with a new prescription. It moves the gain, \
            never the output limits: loud sound stays under them.
            """)

    /// All that is not an option: a step down (-3) must not read as one.
    @Argument(
        parsing: .allUnrecognized, help: ArgumentHelp("A step (+3, -3) or a level (0) in dB; none shows the volume.", valueName: "DB"))
    var changes: [String] = []

    var change: String? { changes.first }

    func validate() throws {
        guard changes.count <= 1 else { throw ValidationError("give one step or level, not \(changes.joined(separator: " "))") }
    }

    func run() throws {
        var request = ControlRequest.status
        if let change {
            guard let value = Double(change), value.isFinite else {
                throw RibbitError.usage("\"\(change)\" is not a volume: give a step such as +3 or -3, or a level such as 0 (dB)")
            }
            request = .volume(change.hasPrefix("+") || change.hasPrefix("-") ? .step(dB: value) : .set(dB: value))
        }
        let status = try sendToDaemon(request)
        guard let listening = status.listening else {
            print("no prescription loaded: there is no volume to turn (`ribbitd load RX`)")
            return
        }
        print("volume \(Self.describe(listening))")
    }

    /// "+3 dB (-10 to +10)", and a note at either end of the range.
    static func describe(_ listening: DaemonStatus.Listening) -> String {
        let level = listening.volumeDB
        var line = "\(signed(level)) dB (\(signed(listening.volumeMinDB)) to \(signed(listening.volumeMaxDB)))"
        if level >= listening.volumeMaxDB { line += "; at the top: ask your audiologist if it is often too soft" }
        if level <= listening.volumeMinDB { line += "; at the bottom: ask your audiologist if it is often too loud" }
        return line
    }

    static func signed(_ db: Double) -> String { (db > 0 ? "+" : "") + Prescription.number(db) }
}
