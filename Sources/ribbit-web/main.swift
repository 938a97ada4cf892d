import Foundation
import Hummingbird
import RibbitControl
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

let paths = RibbitPaths()
let daemon = DaemonBridge(socketPath: paths.socketPath)
let access = WebAccess()
let personalURL = "\(listen.url)?token=\(access.token)"
let tokenFile = paths.webTokenPath
let history = HistoryBridge(storePath: paths.storePath)
let keys = SigningKeys(directory: paths.signingKeysDirectory)
let app = WebApp.make(listen: listen, daemon: daemon, history: history, keys: keys, token: CSRFToken.make(), access: access) {
    // Once listening (a port in use leaves another web app's file alone): the file, then the
    // link, written at once (no buffering): a service manager's log and a test read it.
    do throws(WebTokenFile.Failure) { try WebTokenFile.write(personalURL + "\n", to: tokenFile) } catch {
        fail(error.description, code: 73)
    }
    FileHandle.standardOutput.write(
        Data(
            ("ribbit web app: \(personalURL) (Ctrl-C stops it)\n"
                + "This link is personal: whoever opens it controls your hearing aid; `ribbitd web --url` shows it again.\n")
                .utf8))
}
do {
    try await app.runService()
    WebTokenFile.remove(tokenFile, ifHolding: personalURL + "\n")
} catch {
    WebTokenFile.remove(tokenFile, ifHolding: personalURL + "\n")
    fail("cannot serve on \(listen): \(error)", code: 69)
}
