import ArgumentParser
import Foundation
import Logging
import RibbitControl
import RibbitDaemon
import RibbitJack

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the hearing aid: a JACK client that applies the active prescription until stopped.",
        discussion: """
            Starts with the last active prescription (kept in $XDG_STATE_HOME/ribbit/active.rx) or, with none, \
            passes sound through unchanged. Listens for `ribbitd status|pause|resume|bypass|load|stop` on \
            $XDG_RUNTIME_DIR/ribbit/ribbitd.sock (owner only). If the JACK server goes away, it keeps running and \
            reconnects when a server is back. Under PipeWire: `pw-jack ribbitd run`. Settings may also come from \
            $XDG_CONFIG_HOME/ribbit/ribbitd.conf (input, output, connect, client-name, log-level); the command \
            line wins.
            """)

    @Option(name: .long, help: "Load this prescription (.rx, or a PNG/JPEG of its QR code) at start and keep it as the active one.")
    var rx: String?

    @Option(help: ArgumentHelp("JACK port(s) for the left and right input; one port feeds both ears.", valueName: "PORT[,PORT]"))
    var input: String?

    @Option(help: ArgumentHelp("JACK port(s) for the left and right output.", valueName: "PORT[,PORT]"))
    var output: String?

    @Flag(help: "Do not connect any ports; leave the wiring to you (qjackctl, jack_connect).")
    var noConnect = false

    @Option(help: ArgumentHelp("Config file (default $XDG_CONFIG_HOME/ribbit/ribbitd.conf, if present).", valueName: "FILE"))
    var config: String?

    @Option(help: "JACK client name.")
    var clientName: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func run() throws {
        let paths = RibbitPaths()
        var settings = try readConfig(paths: paths)
        if let input { settings.inputs = try ports(input, option: "--input") }
        if let output { settings.outputs = try ports(output, option: "--output") }
        if noConnect { settings.connect = false }
        if let clientName { settings.clientName = clientName }
        if let logLevel { settings.logLevel = logLevel }
        guard let level = Logger.Level(rawValue: settings.logLevel) else {
            throw RibbitError.usage("log level '\(settings.logLevel)' is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var start: (text: String, source: String)?
        if let rx {
            start = (try readPrescription(rx).payload, rx)  // the file's own error, before anything starts
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        JackClient.showLibraryMessages(level <= .debug)
        let daemon = Daemon(config: settings, paths: paths, log: Logger(label: "ribbitd"), prescription: start)
        do {
            try daemon.run()
        } catch {
            throw RibbitError.unavailable("\(error)")
        }
    }

    private func readConfig(paths: RibbitPaths) throws(RibbitError) -> DaemonConfig {
        let path = config ?? paths.configDirectory + "/ribbitd.conf"
        guard config != nil || FileManager.default.fileExists(atPath: path) else { return DaemonConfig() }
        let bytes: Data
        do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
            throw .noInput("\(error); give the path of a ribbitd.conf text file")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .usage("\(path): the config file is not UTF-8 text") }
        do { return try DaemonConfig.parse(text, path: path) } catch { throw .usage(error.description) }
    }

    private func ports(_ value: String, option: String) throws(RibbitError) -> [String] {
        do {
            return try DaemonConfig.portList(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }, what: option)
        } catch { throw .usage(error.description) }
    }
}
