import ArgumentParser
import Foundation
import Logging
import RibbitDaemon
import RibbitIntake
import RibbitSettings

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the hearing aid: a JACK client that applies the active prescription until stopped.",
        discussion: """
            Starts with the active prescription from the history ($XDG_DATA_HOME/ribbit/ribbit.sqlite) or, \
            with none, passes sound through under the output ceiling. Listens for the other commands (status, \
            pause, resume, bypass, load, use, keep, revert, dump, stop) on $XDG_RUNTIME_DIR/ribbit/ribbitd.sock \
            (owner only). If the JACK server goes away, it keeps running and reconnects when a server is back. \
            Under PipeWire: `pw-jack ribbitd run`. Settings may also come from $XDG_CONFIG_HOME/ribbit/ribbitd.conf, \
            a TOML file (input, output, connect, client-name, log-level, require-signed; ribbitd.conf(5)); \
            the command line wins. Under systemd the log lines carry journal priorities.
            """)

    @Option(
        name: .long, help: "Load this prescription (.rx, or a PNG/JPEG of its QR code) at start and keep it as the active one.",
        completion: .prescriptionFile)
    var rx: String?

    @Option(help: ArgumentHelp("JACK port(s) for the left and right input; one port feeds both ears.", valueName: "PORT[,PORT]"))
    var input: String?

    @Option(help: ArgumentHelp("JACK port(s) for the left and right output.", valueName: "PORT[,PORT]"))
    var output: String?

    @Flag(help: "Do not connect any ports; leave the wiring to you (qjackctl, jack_connect).")
    var noConnect = false

    @Option(
        help: ArgumentHelp("Config file (default $XDG_CONFIG_HOME/ribbit/ribbitd.conf, if present).", valueName: "FILE"),
        completion: .file())
    var config: String?

    @Option(help: "JACK client name.")
    var clientName: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func run() throws {
        let paths = RibbitPaths()
        // A damaged default ribbitd.conf or calibration.toml does not keep the hearing aid from
        // starting: the daemon says so in `status` and the log (DaemonConfig.forDaemon).
        var settings: DaemonConfig
        do { settings = try DaemonConfig.forDaemon(explicitPath: config, paths: paths) } catch {
            throw error.kind == .unreadable ? RibbitError.noInput(error.description) : .config(error.description)
        }
        if let input { settings.inputs = try ports(input, option: "--input") }
        if let output { settings.outputs = try ports(output, option: "--output") }
        if noConnect { settings.connect = false }
        if let clientName { settings.clientName = clientName }
        if let logLevel { settings.logLevel = logLevel }
        guard let level = Logger.Level(rawValue: settings.logLevel) else {
            throw RibbitError.usage(
                "log level '\(settings.logLevel)' is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var start: PrescriptionInput?
        if let rx {
            // The file's own error, before anything starts.
            do { start = try PrescriptionInput.read(rx) } catch { throw RibbitError(error) }
        }
        // Under systemd the journal takes priorities from a "<N>" prefix and adds its own
        // timestamp; on a terminal or in a file, the readable form with a timestamp.
        let journal = JournalStream.isStandardError(environment: paths.environment)
        LoggingSystem.bootstrap { label in
            if journal { return JournalLogHandler(logLevel: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let daemon = Daemon(config: settings, paths: paths, log: Logger(label: "ribbitd"), prescription: start)
        let end: Daemon.End
        do { end = try daemon.run() } catch { throw RibbitError.unavailable("\(error)") }
        if end == .upgraded {
            // Non-zero, so that systemd's Restart=on-failure starts the new version.
            throw RibbitError.temporaryFailure(
                "ended for the upgraded ribbitd: under systemd it starts again by itself; otherwise run `ribbitd run` again")
        }
    }

    private func ports(_ value: String, option: String) throws(RibbitError) -> [String] {
        do {
            return try DaemonConfig.portList(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }, what: option)
        } catch { throw .usage(error.description) }
    }
}
