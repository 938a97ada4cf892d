import ArgumentParser
import Foundation
import Glibc
import RibbitControl
import RibbitQR
import RibbitSettings

/// Runs `ribbit-web`, the web app: a separate program, so ribbitd does not link the HTTP server.
/// It replaces this process (exec), so a service manager or the shell sees the server itself.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve the web app to a browser on this machine, or on a paired phone.",
        discussion: """
            Home shows the active prescription and the daemon's state, with pause, bypass, volume, \
            program and a trial's Keep/Revert; Prescriptions lists the history by environment, to use, \
            remove or export one; Load previews a QR code's photo or a .rx file before loading it; \
            Details shows one with its audiogram. \
            Hearing test runs one and shows its audiogram. Clinic leads to the audiologist's and the \
            therapist's screens, out of the wearer's way: Live charts the sound per ear as `ribbitd dump` \
            does; Fitting turns an audiogram into targets, a trial \
            and a signed QR code; Voice games plays them with a child. It talks to the running daemon \
            like the other commands and never opens JACK. It listens on \
            127.0.0.1:\(WebListenAddress.defaultPort) until stopped (Ctrl-C). Its personal link holds an \
            access token (new at each start, in $XDG_RUNTIME_DIR/ribbit/web-token, mode 0600); it prints the \
            link, on a terminal, into a pipe or a file alike, unless its output is the systemd journal (the \
            user unit ribbit-web.service): then `ribbitd web --url` shows it. Opening the link gives the browser a \
            session; without one every request is refused, \
            and after 5 wrong tokens their sender waits, longer each time, while the right token still works. \
            With --listen on this machine's LAN address (a phone on the same network) it serves HTTPS \
            with a self-signed certificate kept in $XDG_CONFIG_HOME/ribbit/web-tls/, and the link holds \
            a one-time pairing code: the browser that opens it is paired and a new link replaces it \
            (printed, and shown by --url, with a QR code on a terminal). Compare the certificate \
            fingerprint it prints with the one the browser shows before accepting the certificate.
            """)

    @Flag(help: "Print the running web app's personal or pairing link again (with its token) and exit.")
    var url = false

    @Option(
        help: ArgumentHelp(
            "The address and port to listen on: loopback (HTTP, this machine) or this machine's LAN address (HTTPS, pairing).",
            valueName: "address:port"))
    var listen = WebListenAddress.default.description

    func run() throws {
        if url {
            let link = try Self.runningURL(path: RibbitPaths().webTokenPath)
            print(link)
            // A pairing link is for a phone: its camera reads the code off the terminal.
            if link.hasPrefix("https://"), isatty(STDOUT_FILENO) == 1, let code = try? QRCode(Data(link.utf8), correction: .m) {
                print(code.terminalText)
            }
            return
        }
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

    /// The link in the web app's token file, read without following a symbolic link.
    static func runningURL(path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw RibbitError.unavailable("no web app is running (no \(path)); start it with `ribbitd web`")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        let text = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), text.contains("?token=") else {
            throw RibbitError.unavailable("\(path) does not hold the web app's link; restart it with `ribbitd web`")
        }
        return text
    }
}
