import Foundation
import Glibc
import RibbitTestSupport
import Synchronization
import Testing

/// Private keys protected by a passphrase (issue 12, item 8), with real key files and the
/// built binary: the script path (--passphrase-file), and the prompt on a real pty (script(1)).
@Suite struct KeyPassphraseTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    /// The built ribbitd with standard input from /dev/null: no terminal to ask on, even when
    /// the tests run from one.
    func ribbitd(_ arguments: [String]) throws -> Ribbitd.Result {
        let process = ChildProcess()
        process.executableURL = Ribbitd.binary
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = try out.fileHandleForReading.readAll()  // a few lines: the pipes never fill
        let stderr = try err.fileHandleForReading.readAll()
        process.waitUntilExit()
        return Ribbitd.Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ text: String, _ name: String) throws -> String {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    @Test func aProtectedKeySignsOnlyWithItsPassphrase() throws {
        let good = try write("correct horse battery staple\n", "pass.txt")
        let made = try ribbitd(["rx", "keygen", "Dr Lock", "-d", directory.path, "--passphrase-file", good])
        #expect(made.status == 0 && made.stdout.contains("protected by the passphrase"), "\(made.stdout)\(made.stderr)")
        let key = path("Dr-Lock.key")
        let text = try String(contentsOfFile: key, encoding: .utf8)
        #expect(text.hasPrefix("ribbit-ed25519-private-encrypted Dr Lock scrypt:15:8:1:"), "\(text)")
        var info = stat()
        #expect(stat(key, &info) == 0 && info.st_mode & 0o777 == 0o600)

        // The right passphrase: a signed text the wearer's ribbitd verifies.
        let signed = path("signed.rx")
        let ok = try ribbitd(["rx", "make", rx("flat.rx"), "--sign", key, "--passphrase-file", good, "-o", signed])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try ribbitd(["rx", "trust", path("Dr-Lock.pub")]).status == 0)
        #expect(try ribbitd(["rx", "show", signed]).stdout.contains("signed by Dr Lock (trusted)"))

        // A wrong passphrase, none at all without a terminal, or a changed file: one line, nothing written.
        let wrong = try write("correct horse battery stapler\n", "wrong.txt")
        var tampered = text.replacingOccurrences(of: "Dr Lock", with: "Dr Lick")
        let renamed = try write(tampered, "renamed.key")
        tampered = text.replacingOccurrences(of: "scrypt:15:", with: "scrypt:40:")
        let costly = try write(tampered, "costly.key")
        let cases: [([String], Int32, String)] = [
            (["--sign", key, "--passphrase-file", wrong], 65, "\(key): wrong passphrase"),
            (["--sign", key], 64, "protected by a passphrase and there is no terminal to ask on; give --passphrase-file FILE"),
            (["--sign", renamed, "--passphrase-file", good], 65, "wrong passphrase (or the key file was changed)"),
            (["--sign", costly, "--passphrase-file", good], 65, "scrypt settings are out of range"),
        ]
        for (options, status, words) in cases {
            for output in ["out.rx", "out.png"] {
                let result = try ribbitd(["rx", "make", rx("flat.rx"), "-o", path(output)] + options)
                #expect(result.status == status, "\(options): \(result.stderr)")
                #expect(result.stderr.contains(words) && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: path(output)))
            }
        }
    }

    /// Key files from before passphrases, and keys made without one, keep signing; without a
    /// terminal keygen says the key is unprotected.
    @Test func unprotectedKeysKeepWorking() throws {
        let made = try ribbitd(["rx", "keygen", "Dr Open", "-d", directory.path])  // stdin is no terminal here
        #expect(made.status == 0 && made.stdout.contains("not protected by a passphrase: no terminal"), "\(made.stdout)")
        let text = try String(contentsOfFile: path("Dr-Open.key"), encoding: .utf8)
        #expect(text.hasPrefix("ribbit-ed25519-private Dr Open "))
        let signed = try ribbitd(["rx", "make", rx("flat.rx"), "--sign", path("Dr-Open.key"), "-o", path("open.rx")])
        #expect(signed.status == 0, "\(signed.stderr)")
        let flagged = try ribbitd(["rx", "keygen", "Dr Flag", "-d", directory.path, "--no-passphrase"])
        #expect(flagged.stdout.contains("not protected by a passphrase: --no-passphrase"))
    }

    /// Key rotation as docs/prescription-format.md tells it: trust the new key, untrust the old
    /// one; what the old key signed then shows as an unknown key, what the new one signed as trusted.
    @Test func keysRotate() throws {
        for name in ["Old Key", "New Key"] {
            #expect(try ribbitd(["rx", "keygen", name, "-d", directory.path, "--no-passphrase"]).status == 0)
            #expect(try ribbitd(["rx", "trust", path(name.replacingOccurrences(of: " ", with: "-") + ".pub")]).status == 0)
            let file = path(name.replacingOccurrences(of: " ", with: "-") + ".rx")
            #expect(
                try ribbitd([
                    "rx", "make", rx("flat.rx"), "--sign", path(name.replacingOccurrences(of: " ", with: "-") + ".key"), "-o", file,
                ]).status == 0)
        }
        let listed = try ribbitd(["rx", "untrust"])
        #expect(listed.stdout.contains("Old Key") && listed.stdout.contains("New Key"), "\(listed.stdout)")
        let oldID = try #require(listed.stdout.split(separator: "\n").first { $0.contains("Old Key") }?.split(separator: " ").first)
        let removed = try ribbitd(["rx", "untrust", String(oldID)])
        #expect(removed.status == 0 && removed.stdout.contains("no longer trusting Old Key, key id \(oldID)"), "\(removed.stderr)")
        #expect(try ribbitd(["rx", "show", path("Old-Key.rx")]).stdout.contains("signed, unknown key \(oldID)"))
        #expect(try ribbitd(["rx", "show", path("New-Key.rx")]).stdout.contains("signed by New Key (trusted)"))
        // By its .pub file too; and a key that is not trusted is named in one line.
        #expect(try ribbitd(["rx", "untrust", path("New-Key.pub")]).status == 0)
        let again = try ribbitd(["rx", "untrust", String(oldID)])
        #expect(
            again.status == 65 && again.stderr.contains("no trusted key matches") && again.stderr.contains("trusted: none"),
            "\(again.stderr)")
    }

    /// On a terminal (a real pty from script(1)) keygen asks twice with echo off, and make asks once.
    @Test func theTerminalIsAskedWithEchoOff() throws {
        let script = try #require(Built.tool("script"), "script(1) from bsdutils is needed")
        let binary = Ribbitd.binary.path
        let keygen = try typed(
            script, "\(binary) rx keygen 'Dr Pty' -d \(directory.path)", lines: ["s3cret words", "s3cret words"])
        #expect(keygen.contains("Passphrase for the new key") && keygen.contains("The same passphrase again"), "\(keygen)")
        #expect(!keygen.contains("s3cret"), "the passphrase was echoed: \(keygen)")
        #expect(try String(contentsOfFile: path("Dr-Pty.key"), encoding: .utf8).hasPrefix("ribbit-ed25519-private-encrypted"))

        let make = try typed(
            script, "\(binary) rx make \(rx("flat.rx")) --sign \(path("Dr-Pty.key")) -o \(path("pty.rx"))", lines: ["s3cret words"])
        #expect(make.contains("Passphrase for") && make.contains("wrote \(path("pty.rx"))"), "\(make)")
        #expect(try String(contentsOfFile: path("pty.rx"), encoding: .utf8).contains("sig: ed25519:"))

        let differ = try typed(script, "\(binary) rx keygen 'Dr Typo' -d \(directory.path)", lines: ["one", "two"])
        #expect(differ.contains("the two passphrases differ; nothing written"), "\(differ)")
        #expect(!FileManager.default.fileExists(atPath: path("Dr-Typo.key")))

        // Ctrl-C at the prompt: one line, exit 130, no key, and the terminal echoes again.
        let interrupted = try typed(
            script, "\(binary) rx keygen 'Dr Int' -d \(directory.path); echo status=$?; stty -a", lines: ["\u{03}"])
        #expect(interrupted.contains("interrupted; nothing written") && interrupted.contains("status=130"), "\(interrupted)")
        #expect(interrupted.contains(" echo ") && !interrupted.contains("-echo "), "\(interrupted)")
        #expect(!FileManager.default.fileExists(atPath: path("Dr-Int.key")))
    }

    /// Runs `command` on a pty and types `lines`, each once its prompt (the n-th "passphrase") is
    /// on the terminal (a control character alone, without a line end); returns what the
    /// terminal showed.
    private func typed(_ script: URL, _ command: String, lines: [String]) throws -> String {
        let process = ChildProcess()
        process.executableURL = script
        process.arguments = ["-qec", command, "/dev/null"]
        // script(1) runs $SHELL; dash (Debian's sh, and $SHELL when a CI sets none) dies of the
        // Ctrl-C it shares with ribbitd, so `echo status=$?` never ran. bash waits for the child
        // and goes on when the child handled SIGINT, as a login shell does.
        process.environment = environment.merging(["SHELL": "/bin/bash"]) { _, new in new }
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let shown = Mutex(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }  // the end: no more calls
            shown.withLock { $0.append(data) }
        }
        try process.run()
        // ask() turns echo off and blocks the signals before it writes its prompt.
        func prompts() -> Int {
            shown.withLock { String(decoding: $0, as: UTF8.self).lowercased().components(separatedBy: "passphrase").count - 1 }
        }
        for (index, line) in lines.enumerated() {
            let deadline = Date().addingTimeInterval(30)
            while prompts() <= index && process.isRunning && Date() < deadline { usleep(20_000) }
            input.fileHandleForWriting.write(Data((line.first?.asciiValue ?? 0x20 < 0x20 ? line : line + "\n").utf8))  // ^C: no line end
        }
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { stopProcess(process) }
        try? input.fileHandleForWriting.close()
        output.fileHandleForReading.readabilityHandler = nil
        let rest = try output.fileHandleForReading.readAll()
        return shown.withLock { String(decoding: $0 + rest, as: UTF8.self) }
    }
}
