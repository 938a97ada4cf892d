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

let daemon = DaemonBridge(socketPath: RibbitPaths().socketPath)
let app = WebApp.make(listen: listen, daemon: daemon, token: CSRFToken.make()) { [listen] in
    // Written at once (no buffering), once listening: a service manager's log and a test read it.
    FileHandle.standardOutput.write(Data("ribbit web app: \(listen.url) (Ctrl-C stops it)\n".utf8))
}
do {
    try await app.runService()
} catch {
    fail("cannot serve on \(listen): \(error)", code: 69)
}
