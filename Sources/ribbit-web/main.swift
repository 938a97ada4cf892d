import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import RibbitControl
import RibbitQR
import RibbitSettings

// `ribbit-web [--listen ADDRESS:PORT]`, normally started by `ribbitd web`.
let usage = "usage: ribbit-web [--listen 127.0.0.1:\(WebListenAddress.defaultPort)]"

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("ribbit-web: error: \(message)\n".utf8))
    exit(code)
}

var listen = WebListenAddress.default
var arguments = Array(CommandLine.arguments.dropFirst())
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--listen":
        guard let value = arguments.first else { fail("--listen needs ADDRESS:PORT; \(usage)", code: 64) }
        arguments.removeFirst()
        do throws(WebListenAddressError) { listen = try WebListenAddress.parse(value) } catch { fail(error.description, code: 64) }
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unexpected argument \"\(argument)\"; \(usage)", code: 64)
    }
}

let address = listen
let paths = RibbitPaths()
let daemon = DaemonBridge(socketPath: paths.socketPath)
let tokenFile = paths.webTokenPath
let tls: WebTLS?
if listen.isLoopback {
    tls = nil
} else {
    do throws(WebTLS.Failure) { tls = try WebTLS.loadOrMake(directory: paths.configDirectory + "/web-tls", host: listen.host) } catch {
        fail(error.description, code: 73)
    }
}
let onTerminal = isatty(STDOUT_FILENO) == 1
/// Standard output is the systemd journal (the user unit): whoever may read the journal must
/// not find the token there; the link is in the token file, `ribbitd web --url` shows it.
let toJournal = JournalStream.isJournal(STDOUT_FILENO, environment: ProcessInfo.processInfo.environment)

/// The link with its token; on a LAN the certificate's fingerprint rides in the fragment
/// (never sent to the server), for the wearer to compare with what the browser shows.
@Sendable func link(_ token: String) -> String {
    "\(address.url)?token=\(token)" + (tls.map { "#sha256=" + $0.fingerprint.replacingOccurrences(of: ":", with: "") } ?? "")
}

/// Writes the link to the token file and prints it (with a QR code for a phone's camera on a
/// terminal), at once, without buffering: a service manager's log and a test read it.
let announcing = NSLock()  // two pairings at once write the file and print one after the other
@Sendable func announce(_ token: String, first: Bool) {
    announcing.lock()
    defer { announcing.unlock() }
    do throws(PrivateFile.Failure) { try PrivateFile.write(link(token) + "\n", to: tokenFile) } catch {
        // At start the web app cannot work without it; after a pairing the printed link still does.
        if first { fail(error.description, code: 73) }
        let instead = toJournal ? "restart ribbit-web for a new link" : "the link below is not in the file"
        FileHandle.standardError.write(Data("ribbit-web: warning: \(error.description); \(instead)\n".utf8))
    }
    var text: String
    if toJournal {
        text =
            (first ? "ribbit web app on \(address)\n" : "A browser paired; the next one needs the new link.\n")
            + "The personal link (it controls the hearing aid) is not written here: `ribbitd web --url` shows it.\n"
            + (tls.map { "Certificate fingerprint (SHA-256): \($0.fingerprint)\n" } ?? "")
    } else if let tls {
        text =
            (first ? "ribbit web app on \(address) (Ctrl-C stops it)\n" : "A browser paired; the next one needs the new link.\n")
            + "Pairing link, for one browser: \(link(token))\n"
            + "Certificate fingerprint (SHA-256), to compare with what the browser shows before accepting it:\n  \(tls.fingerprint)\n"
        if onTerminal, let code = try? QRCode(Data(link(token).utf8), correction: .m) { text += code.terminalText + "\n" }
    } else {
        text =
            "ribbit web app: \(link(token)) (Ctrl-C stops it)\n"
            + "This link is personal: whoever opens it controls your hearing aid; `ribbitd web --url` shows it again.\n"
    }
    FileHandle.standardOutput.write(Data(text.utf8))
}

let access = WebAccess(oneTime: tls != nil) { token in announce(token, first: false) }
let history = HistoryBridge(storePath: paths.storePath)
let keys = SigningKeys(directory: paths.signingKeysDirectory)
var tlsConfiguration: TLSConfiguration?
if let tls {
    do throws(WebTLS.Failure) { tlsConfiguration = try tls.configuration() } catch { fail(error.description, code: 73) }
}
do {
    let app = try WebApp.make(
        listen: listen, tls: tlsConfiguration, daemon: daemon, history: history, keys: keys, access: access
    ) {
        // Once listening (a port in use leaves another web app's file alone).
        announce(access.token, first: true)
    }
    try await app.runService()
    PrivateFile.remove(tokenFile, ifHolding: link(access.token) + "\n")
} catch {
    PrivateFile.remove(tokenFile, ifHolding: link(access.token) + "\n")
    fail("cannot serve on \(listen): \(error)", code: 69)
}
