import Foundation
import RibbitImage
import RibbitQR
import RibbitStore
import RibbitTestSupport
import Testing

/// Issue 26, finding 8, with the built binary: prescriptions are UTF-8 only on every path;
/// ribbitd.conf and calibration.toml with a NUL or a non-UTF-8 byte are refused naming the line;
/// what came from a file or a peer reaches the terminal without its escape sequences.
@Suite struct StrictInputTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    var storePath: String { path("data/ribbit/ribbit.sqlite") }

    /// flat.rx with its name written in Latin-1 ("Café": 0xE9, not UTF-8).
    func latin1Prescription() throws -> Data {
        let text = try String(contentsOf: TestPaths.prescription("flat.rx"), encoding: .utf8)
        var bytes = [UInt8](text.replacingOccurrences(of: "name: Flat", with: "name: Caf@").utf8)
        bytes[try #require(bytes.firstIndex(of: UInt8(ascii: "@")))] = 0xE9
        return Data(bytes)
    }

    func expectOneLine(_ result: RunResult, status: Int32, containing words: [String]) {
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        for word in words { #expect(result.stderr.contains(word), "\(result.stderr)") }
    }

    @Test func aPrescriptionThatIsNotUTF8IsRefusedOnEveryPath() throws {
        let file = path("latin1.rx")
        try latin1Prescription().write(to: URL(fileURLWithPath: file))
        let picture = path("latin1.png")
        try ImageFile.writePNG(try QRCode(try latin1Prescription()).image(scale: 4), to: picture)
        for input in [file, picture] {
            expectOneLine(try ribbitd(["rx", "show", input]), status: 65, containing: ["is not UTF-8 text", "line 2"])
            expectOneLine(try ribbitd(["load", input]), status: 65, containing: ["is not UTF-8 text", "was not used"])
        }
        let stored = FileManager.default.fileExists(atPath: storePath) ? try PrescriptionStore(path: storePath).all() : []
        #expect(stored.isEmpty)

        // What the earlier path stored (bytes replaced by U+FFFD, with a matching checksum) is
        // refused when read back: not shown, not used.
        let store = try PrescriptionStore(path: storePath)
        let repaired = String(decoding: try latin1Prescription(), as: UTF8.self)
        #expect(repaired.contains("\u{FFFD}"))
        try store.add(
            .init(
                name: "Caf\u{FFFD}", environment: "quiet", audiologist: nil, source: "old", payload: repaired, signature: "unsigned",
                signer: nil))
        try store.add(
            .init(
                name: "Flat", environment: "quiet", audiologist: nil, source: "ok",
                payload: try String(contentsOf: TestPaths.prescription("flat.rx"), encoding: .utf8), signature: "unsigned", signer: nil))
        expectOneLine(try ribbitd(["show", "1"]), status: 65, containing: ["U+FFFD"])
        expectOneLine(try ribbitd(["use", "1"]), status: 65, containing: ["U+FFFD"])
        #expect(try store.activeID() == 2)
    }

    @Test func aNULOrAByteThatIsNotUTF8InTheSettingsIsRefusedWithItsLine() throws {
        let config = directory.appendingPathComponent("config/ribbit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let conf = config.appendingPathComponent("ribbitd.conf")
        // Before: the NUL ended the file, and require-signed after it was silently dropped.
        try Data("connect = true\n\0require-signed = true\n".utf8).write(to: conf)
        expectOneLine(try ribbitd(["rx", "show", rx("flat.rx")]), status: 78, containing: ["\(conf.path):2: holds a NUL byte"])
        try Data([UInt8]("connect = true\n# caf".utf8) + [0xE9] + [UInt8]("\nrequire-signed = true\n".utf8)).write(to: conf)
        expectOneLine(try ribbitd(["rx", "show", rx("flat.rx")]), status: 78, containing: ["\(conf.path):2: byte 21 (0xE9) is not UTF-8"])
        try FileManager.default.removeItem(at: conf)

        let calibration = config.appendingPathComponent("calibration.toml")
        try Data("calibration = \"hd\"\n[profile.hd]\n\0output-left = 104.5\n".utf8).write(to: calibration)
        expectOneLine(try ribbitd(["rx", "show", rx("flat.rx")]), status: 78, containing: ["\(calibration.path):3: holds a NUL byte"])
    }

    /// No byte 0x1B (ESC), nor any other C0 or C1 control but line breaks, in what was printed.
    func expectNoEscapes(_ output: String, _ what: String) {
        let bad = output.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
        #expect(bad.isEmpty, "\(what): \(bad.map { String($0.value, radix: 16) }) in \(output.debugDescription)")
    }

    @Test func escapeSequencesFromFilesAndPeersDoNotReachTheTerminal() throws {
        let escape = "\u{1B}]0;owned\u{07}\u{1B}[2J"
        // A key whose name carries escape sequences: refused by `rx trust`, in one clean line.
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        #expect(try ribbitd(["rx", "keygen", "Dr B", "-d", keys.path, "--no-passphrase"]).status == 0)
        let good = try String(contentsOf: keys.appendingPathComponent("Dr-B.pub"), encoding: .utf8)
        let evil = path("evil.pub")
        try good.replacingOccurrences(of: " Dr B ", with: " Dr\(escape)B ").write(toFile: evil, atomically: true, encoding: .utf8)
        let trust = try ribbitd(["rx", "trust", evil])
        #expect(trust.status == 65, "\(trust)")
        expectNoEscapes(trust.stdout + trust.stderr, "rx trust")
        #expect(trust.stderr.contains("control character"), "\(trust.stderr)")

        // The same key put in trusted/ by hand is not trusted, and `rx show` prints no escape.
        let trusted = directory.appendingPathComponent("config/ribbit/trusted")
        try FileManager.default.createDirectory(at: trusted, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: evil, toPath: trusted.appendingPathComponent("evil.pub").path)
        let signed = path("signed.rx")
        #expect(
            try ribbitd(["rx", "make", rx("flat.rx"), "--sign", keys.appendingPathComponent("Dr-B.key").path, "-o", signed]).status == 0)
        let show = try ribbitd(["rx", "show", signed])
        #expect(show.status == 0, "\(show.stderr)")
        expectNoEscapes(show.stdout + show.stderr, "rx show")
        #expect(show.stdout.contains("signed, unknown key"), "\(show.stdout)")

        // A history entry whose fields were written into the file by another program.
        let store = try PrescriptionStore(path: storePath)
        try store.add(
            .init(
                name: "Flat\(escape)", environment: "quiet\(escape)", audiologist: "Dr\(escape)", source: "x\(escape)",
                payload: try String(contentsOf: TestPaths.prescription("flat.rx"), encoding: .utf8), signature: "trusted",
                signer: "Dr\(escape)"))
        for command in [["list"], ["show", "1"]] {
            let result = try ribbitd(command)
            expectNoEscapes(result.stdout + result.stderr, "\(command)")
        }
        #expect(try ribbitd(["list"]).stdout.contains("Flat\\u{1B}]0;owned\\u{7}"))

        // Error messages that quote input: a foreign QR code, a config key.
        let foreign = path("foreign.png")
        try ImageFile.writePNG(try QRCode(Data("\(escape)hello".utf8)).image(scale: 4), to: foreign)
        let qr = try ribbitd(["rx", "show", foreign])
        #expect(qr.status == 65)
        expectNoEscapes(qr.stdout + qr.stderr, "foreign QR code")
        #expect(qr.stderr.contains("\\u{1B}"), "\(qr.stderr)")
        let conf = directory.appendingPathComponent("config/ribbit/ribbitd.conf")
        try Data("\"\\u001b[2Jx\" = true\n".utf8).write(to: conf)
        let config = try ribbitd(["rx", "show", rx("flat.rx")])
        #expect(config.status == 78, "\(config.stderr)")
        expectNoEscapes(config.stdout + config.stderr, "config key")
    }
}
