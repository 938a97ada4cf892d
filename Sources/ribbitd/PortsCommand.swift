import ArgumentParser
import RibbitJack

struct PortsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ports",
        abstract: "List the audio ports JACK offers, for --input and --output.",
        discussion: "Sources (capture, other programs' outputs) can feed --input; sinks (playback) can take --output.")

    func run() throws {
        let client: JackClient
        do {
            client = try JackClient(name: "ribbit-ports", registerPorts: false)
        } catch {
            throw RibbitError.unavailable("\(error.description); start jackd (or PipeWire's JACK) first")
        }
        defer { client.close() }
        let ports = client.ports()
        for (title, sources) in [("sources (for --input)", true), ("sinks (for --output)", false)] {
            print(title + ":")
            for port in ports where port.isSource == sources {
                print("  \(port.name)\(port.isPhysical ? "  (physical)" : "")")
            }
        }
    }
}
