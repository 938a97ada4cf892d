import Foundation
import RibbitAudioFile
import RibbitTestSupport
import Testing

/// What new users tripped over (issue 12, item 7), each run on the built binary.
@Suite struct PapercutTests {
    let directory: URL
    let environment: [String: String]

    init() throws {
        directory = try TestPaths.temporaryDirectory()
        environment = try TestPaths.privateHome(in: directory)
    }

    func ribbitd(_ arguments: [String], environment extra: [String: String] = [:]) throws -> RunResult {
        try Built.run(Ribbitd.binary, arguments, environment: environment.merging(extra) { $1 }, timeoutSeconds: 30)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func keygen(_ name: String) throws -> String {
        let result = try ribbitd(["rx", "keygen", name, "-d", directory.path, "--no-passphrase"])
        #expect(result.status == 0, "\(result.stderr)")
        return path(name.replacingOccurrences(of: " ", with: "-") + ".key")
    }

    /// a, l: -o NAME.rx once got a PNG; now the signed text, which loads and verifies; an unknown
    /// extension is refused in one line with nothing written.
    @Test func rxMakeWritesTheSignedTextForDotRx() throws {
        let key = try keygen("Dr Rx")
        let signed = path("my.rx")
        let made = try ribbitd(["rx", "make", rx("ski-slope.rx"), "--sign", key, "-o", signed])
        #expect(made.status == 0, "\(made.stderr)")
        let text = try String(contentsOfFile: signed, encoding: .utf8)
        #expect(text.hasPrefix("RIBBIT-RX 1\n"), "\(text.prefix(40))")
        #expect(text.split(separator: "\n").last?.hasPrefix("sig: ed25519:") == true)
        #expect(try ribbitd(["rx", "trust", path("Dr-Rx.pub")]).status == 0)
        let shown = try ribbitd(["rx", "show", signed])
        #expect(shown.status == 0 && shown.stdout.contains("signed by Dr Rx (trusted)"), "\(shown.stdout)\(shown.stderr)")
        let png = try ribbitd(["rx", "make", rx("ski-slope.rx"), "-o", path("code.PNG")])
        #expect(png.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("code.PNG"))).starts(with: [0x89, 0x50, 0x4E, 0x47]))
        for name in ["my.txt", "code.jpg", "noextension"] {
            let refused = try ribbitd(["rx", "make", rx("ski-slope.rx"), "--sign", key, "-o", path(name)])
            #expect(refused.status == 64, "\(name): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("(.png)"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path(name)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(name) } == [])
        }
    }

    /// b: OUT's extension picks the format; an unknown one is refused before any work.
    @Test func processWritesTheFormatItsNameSays() throws {
        let input = path("in.wav")
        let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: 2, float: false))
        try writer.write(channels: [[Float]](repeating: (0..<4800).map { 0.1 * sin(Float($0) * 0.13) }, count: 2))
        try writer.close()
        // The first bytes of each container, as `file` knows them.
        let magic: [(String, [UInt8])] = [
            ("out.flac", Array("fLaC".utf8)), ("out.ogg", Array("OggS".utf8)), ("out.aiff", Array("FORM".utf8)),
            ("out.wav", Array("RIFF".utf8)),
        ]
        for (name, header) in magic {
            let result = try ribbitd(["process", input, path(name), "--rx", rx("flat.rx")])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path(name))).starts(with: header), "\(name)")
            let back = try AudioFileReader(path: path(name))
            #expect(back.frameCount == 4800 && back.format.channelCount == 2, "\(name): \(back.frameCount) frames")
        }
        // MP3 where this libsndfile writes it (1.1 and later with LAME): never WAV data under .mp3.
        let mp3 = try ribbitd(["process", input, path("out.mp3"), "--rx", rx("flat.rx")])
        if mp3.status == 0 {
            #expect(try !Data(contentsOf: URL(fileURLWithPath: path("out.mp3"))).starts(with: Array("RIFF".utf8)))
            #expect(mp3.stdout.contains("MPEG layer III"), "\(mp3.stdout)")
        } else {
            #expect(mp3.status == 64 && !FileManager.default.fileExists(atPath: path("out.mp3")), "\(mp3.stderr)")
        }
        let start = Date()
        let refused = try ribbitd(["process", input, path("out.xyz"), "--rx", rx("flat.rx")])
        #expect(refused.status == 64 && refused.stderr.contains("no sound format is named .xyz; name it"), "\(refused.stderr)")
        #expect(refused.stderr.contains(".flac") && refused.stderr.split(separator: "\n").count == 1)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(
            !FileManager.default.fileExists(atPath: path("out.xyz")) && !FileManager.default.fileExists(atPath: path("out.xyz.partial")))
    }

    /// d: the signature verdict is said once, unsigned or signed, in text and JSON.
    @Test func rxShowSaysTheSignatureOnce() throws {
        let key = try keygen("Dr Once")
        #expect(try ribbitd(["rx", "make", rx("flat.rx"), "--sign", key, "-o", path("s.rx")]).status == 0)
        for file in [rx("flat.rx"), path("s.rx")] {
            for json in [false, true] {
                let shown = try ribbitd(["rx", "show", file] + (json ? ["--json"] : []))
                #expect(shown.status == 0)
                #expect(shown.stdout.components(separatedBy: "signature").count == 2, "\(shown.stdout)")
                #expect(shown.stdout.components(separatedBy: "signed").count == 2, "\(shown.stdout)")
            }
        }
    }

    /// e: a file that is no prescription is called that, with what one is, in one line.
    @Test func notAPrescriptionIsSaidSo() throws {
        let readme = TestPaths.packageRoot.appendingPathComponent("README.md").path
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: path("note.rx")))
        try Data(repeating: 0x41, count: 100).write(to: URL(fileURLWithPath: path("broken.png")))
        for file in [readme, path("note.rx"), path("broken.png")] {
            for command in [["load"], ["rx", "show"]] {
                let result = try ribbitd(command + [file])
                #expect(result.status == 65, "\(command) \(file): \(result.stderr)")
                #expect(result.stderr.contains("not a ribbit prescription"), "\(result.stderr)")
                #expect(result.stderr.contains("'RIBBIT-RX 1'") && result.stderr.contains("QR code"), "\(result.stderr)")
                #expect(!result.stderr.contains("the limit is"), "\(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1)
            }
        }
        #expect(try ribbitd(["list"]).stdout.contains("no prescriptions yet"))
    }

    /// f: a mistyped command gets the closest one, at the top and under rx; far off, none.
    @Test func mistypedCommandsGetASuggestion() throws {
        let cases: [([String], String)] = [
            (["statuss"], "did you mean 'status'?"), (["stats"], "did you mean 'status'?"), (["lsit"], "did you mean 'list'?"),
            (["rx", "shwo", "x.rx"], "did you mean 'show'?"), (["rx", "keygn", "A"], "did you mean 'keygen'?"),
            (["rx", "trsut"], "did you mean 'trust'?"),
        ]
        for (arguments, words) in cases {
            let result = try ribbitd(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(words) && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let far = try ribbitd(["frobnicate"])
        #expect(far.status == 64 && !far.stderr.contains("did you mean") && far.stderr.contains("`ribbitd --help` lists them"))
        #expect(try ribbitd(["help", "status"]).status == 0)
        #expect(try ribbitd(["rx", "show", rx("flat.rx")]).status == 0)
    }

    /// g: list in local time with no trailing spaces; list --json and show --json in their documented shape.
    @Test func listIsLocalAndTidyAndShowHasJSON() throws {
        for sample in ["mild-presbycusis.rx", "ski-slope.rx"] { #expect(try ribbitd(["load", rx(sample)]).status == 0) }
        let utc = try ribbitd(["list"], environment: ["TZ": "UTC"]).stdout
        let tokyo = try ribbitd(["list"], environment: ["TZ": "Asia/Tokyo"]).stdout  // UTC+9, no daylight saving
        #expect(!utc.contains("UTC"))
        for text in [utc, tokyo] {
            #expect(text.split(separator: "\n").allSatisfy { !$0.hasSuffix(" ") }, "\(text.replacingOccurrences(of: " ", with: "."))")
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        func loaded(_ text: String) throws -> Date {
            let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("*") })
            let match = try #require(row.firstMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d/))
            return try #require(formatter.date(from: String(match.output)))
        }
        #expect(try loaded(tokyo).timeIntervalSince(try loaded(utc)) == 9 * 3600)

        let list = try #require(try JSONSerialization.jsonObject(with: Data(ribbitd(["list", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 2)
        #expect(Set(list[0].keys) == ["id", "name", "environment", "audiologist", "rule", "loadedAt", "source", "signature", "active"])
        #expect(list[1]["active"] as? Bool == true && (list[1]["loadedAt"] as? String)?.hasSuffix("Z") == true)
        let shown = try ribbitd(["show", "2", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let show = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        let entry = try #require(show["entry"] as? [String: Any])
        let prescription = try #require(show["prescription"] as? [String: Any])
        #expect(entry["id"] as? Int == 2 && entry["name"] as? String == "Steep ski-slope loss" && entry["active"] as? Bool == true)
        #expect(prescription["name"] as? String == "Steep ski-slope loss" && prescription["signature"] as? String == "unsigned")
        let right = try #require((prescription["ears"] as? [String: Any])?["right"] as? [String: Any])
        #expect((right["targetGainDB"] as? [String: Any])?.count == 11)
        // The documented fields are the printed ones.
        let doc = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/json-output.md"), encoding: .utf8)
        for key in Array(entry.keys) + Array(prescription.keys) + Array(right.keys) { #expect(doc.contains("`\(key)`"), "\(key)") }
    }

    /// h: `ribbitd VERSION` on one line, as GNU tools print it (what help2man and scripts read).
    @Test func versionNamesTheProgram() throws {
        let result = try ribbitd(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.wholeMatch(of: /ribbitd \d+\.\d+\.\d+\n/) != nil, "\(result.stdout)")
    }

    /// i: rx make --text draws black on white with ANSI colours, and in the terminal's own colours
    /// under NO_COLOR or TERM=dumb; the blocks are the same.
    @Test func qrTextHonoursNoColorAndDumbTerminals() throws {
        let arguments = ["rx", "make", rx("flat.rx"), "--text"]
        let coloured = try ribbitd(arguments, environment: ["TERM": "xterm", "NO_COLOR": ""])
        #expect(coloured.stdout.contains("\u{1B}["))
        for extra in [["NO_COLOR": "1", "TERM": "xterm"], ["TERM": "dumb"]] {
            let plain = try ribbitd(arguments, environment: extra)
            #expect(plain.status == 0)
            #expect(!plain.stdout.contains("\u{1B}"), "\(extra)")
            let blocks = coloured.stdout.replacingOccurrences(of: "\u{1B}[30;47m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            #expect(plain.stdout == blocks)
        }
    }

    /// j: no SwiftPM warning about unhandled files (the FuzzFindings were three of them). SwiftPM
    /// says it while loading the package for a build, so a build of no product shows it in seconds
    /// (in a scratch directory of its own: this test's own build holds .build).
    @Test func thePackageDeclaresEveryFile() throws {
        let swift = Built.tool("swift") ?? URL(fileURLWithPath: "/opt/swift/usr/bin/swift")
        let arguments = [
            "build", "--package-path", TestPaths.packageRoot.path, "--scratch-path", path("scratch"), "--product", "no-such-product",
        ]
        let result = try Built.run(swift, arguments, timeoutSeconds: 300)
        #expect(result.stderr.contains("no product named 'no-such-product'"), "the package did not load: \(result.stderr)")
        // swift-distributed-tracing (through Hummingbird, ribbit-web's server) says it of a file of
        // its own at 1.7.3: not ours to fix.
        let unhandled = (result.stdout + result.stderr).split(separator: "\n").filter {
            $0.contains("unhandled") && !$0.contains("'swift-distributed-tracing'")
        }
        #expect(unhandled.isEmpty, "\(result.stdout)\(result.stderr)")
    }
}
