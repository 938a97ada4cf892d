import Foundation
import RibbitTestSupport
import Testing

/// `rx show` and `show` say one signature verdict, the real one, in text and in JSON.
@Suite struct SignatureVerdictTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func ribbitd(_ arguments: [String]) throws -> RunResult { try Built.run(Ribbitd.binary, arguments, environment: environment) }

    /// The text's signature lines and the JSON's `signature` field.
    func shown(_ path: String) throws -> (lines: [String], json: String?) {
        let text = try ribbitd(["rx", "show", path])
        #expect(text.status == 0, "\(text.stderr)")
        let json = try ribbitd(["rx", "show", "--json", path])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        return (signatureLines(text.stdout), object?["signature"] as? String)
    }

    func signatureLines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.contains("sign") }
    }

    @Test func oneVerdictThatTheTrustedKeysDecide() throws {
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        #expect(try ribbitd(["rx", "keygen", "Dr. B", "-d", keys.path, "--no-passphrase"]).status == 0)
        let signed = directory.appendingPathComponent("code.png").path
        #expect(
            try ribbitd(["rx", "make", rx("ski-slope.rx"), "--sign", keys.appendingPathComponent("Dr--B.key").path, "-o", signed]).status
                == 0)

        let unsigned = try shown(rx("mild-presbycusis.rx"))
        #expect(unsigned.lines == ["  signature    unsigned"])
        #expect(unsigned.json == "unsigned")

        let unknown = try shown(signed)
        #expect(unknown.lines.count == 1, "\(unknown.lines)")
        let unknownVerdict = try #require(unknown.json)
        #expect(unknownVerdict.wholeMatch(of: /signed, unknown key [0-9a-f]{16}/) != nil, "\(unknownVerdict)")
        #expect(unknown.lines.first == "  signature    " + unknownVerdict)

        #expect(try ribbitd(["rx", "trust", keys.appendingPathComponent("Dr--B.pub").path]).status == 0)
        let trusted = try shown(signed)
        #expect(trusted.lines == ["  signature    signed by Dr. B (trusted)"])
        #expect(trusted.json == "signed by Dr. B (trusted)")

        // The history's `show` says the verdict recorded at load, once, in the report.
        #expect(try ribbitd(["load", signed]).status == 0)
        let history = try ribbitd(["show", "1"])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(signatureLines(history.stdout) == ["  signature    signed by Dr. B (trusted)"], "\(history.stdout)")
    }

    /// A trusted signature alone raises no output limit: camfit-sloping.rx signed by a trusted
    /// key plays under the OTC rule's 117 dB SPL like the unsigned file; only a `limit:` in it
    /// raises the limit, and only while the key is trusted. `rx show` says the limit and why.
    @Test func onlyATrustedLimitRaisesTheOutputLimit() throws {
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        #expect(try ribbitd(["rx", "keygen", "Dr. C", "-d", keys.path, "--no-passphrase"]).status == 0)
        let key = keys.appendingPathComponent("Dr--C.key").path
        #expect(try ribbitd(["rx", "trust", keys.appendingPathComponent("Dr--C.pub").path]).status == 0)
        let raised = directory.appendingPathComponent("raised.rx")
        try String(contentsOfFile: rx("camfit-sloping.rx"), encoding: .utf8).replacingOccurrences(
            of: "max-output:", with: "limit: 125\nmax-output:"
        )
        .write(to: raised, atomically: true, encoding: .utf8)
        func limitLine(_ path: String, sign: Bool) throws -> (line: String, json: [String: Double]) {
            var shown = path
            if sign {
                shown = directory.appendingPathComponent(UUID().uuidString + ".png").path
                #expect(try ribbitd(["rx", "make", path, "--sign", key, "-o", shown]).status == 0)
            }
            let text = try ribbitd(["rx", "show", shown])
            #expect(text.status == 0, "\(text.stderr)")
            let line = text.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("  output limit") } ?? ""
            let json =
                try JSONSerialization.jsonObject(with: Data(try ribbitd(["rx", "show", "--json", shown]).stdout.utf8)) as? [String: Any]
            return (line, json?["outputLimitDBSPL"] as? [String: Double] ?? [:])
        }
        let unsigned = try limitLine(rx("camfit-sloping.rx"), sign: false)
        #expect(
            unsigned.line
                == "  output limit 117 dB SPL right, 117 dB SPL left (the US rule for over-the-counter hearing aids with compression; only a limit: from a trusted audiologist raises it)",
            "\(unsigned.line)")
        let signed = try limitLine(rx("camfit-sloping.rx"), sign: true)
        #expect(signed.line == unsigned.line && signed.json == ["left": 117, "right": 117], "\(signed)")
        let trustedLimit = try limitLine(raised.path, sign: true)
        #expect(
            trustedLimit.json == ["left": 125, "right": 125] && trustedLimit.line.contains("the limit: 125 from a trusted audiologist"),
            "\(trustedLimit)")
        let untrustedLimit = try limitLine(raised.path, sign: false)
        #expect(untrustedLimit.json == ["left": 117, "right": 117] && untrustedLimit.line.contains("cannot raise it"), "\(untrustedLimit)")
    }
}
