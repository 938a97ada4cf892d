import ArgumentParser
import Foundation
import Glibc
import RibbitControl
import RibbitSettings

/// Runs `ribbit-web`, the web app: a separate program, so ribbitd does not link the HTTP server.
/// It replaces this process (exec), so a service manager or the shell sees the server itself.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve the web app (the Home screen) to a browser on this machine.",
        discussion: """
            The Home screen shows the active prescription and the daemon's state, with pause, bypass, \
            volume and program. It talks to the running daemon like the other commands and never opens \
            JACK. It listens on 127.0.0.1:\(WebListenAddress.defaultPort) until stopped (Ctrl-C); only \
            a loopback address is accepted until pairing for other devices is built.
            """)

    @Option(help: ArgumentHelp("The loopback address and port to listen on.", valueName: "address:port"))
    var listen = WebListenAddress.default.description

    func run() throws {
        let address: WebListenAddress
        do throws(WebListenAddressError) { address = try WebListenAddress.parse(listen) } catch {
            throw RibbitError.usage(error.description)
        }
        let environment = ProcessInfo.processInfo.environment
        guard let program = RibbitPaths.companionExecutable("ribbit-web", override: environment["RIBBIT_WEB"]) else {
            throw RibbitError.unavailable(
                "ribbit-web is not installed beside ribbitd (nor in ../libexec/ribbit/); build it with `swift build --product ribbit-web`")
        }
        let arguments = [program, "--listen", address.description]
        var cArguments = arguments.map { strdup($0) } + [nil]
        execv(program, &cArguments)
        throw RibbitError.unavailable("cannot start \(program): \(String(cString: strerror(errno)))")
    }
}
