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
}
