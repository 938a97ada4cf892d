import Foundation
import RibbitTestSupport
import Testing

/// ribbitd(1)'s COMMANDS section is the binary's own help, as mdoc: it must equal what
/// `--experimental-dump-help` gives now, so help text and man page cannot drift apart. A test
/// of HelpSnapshotTests, so the command that rewrites the help snapshots rewrites it too.
extension HelpSnapshotTests {
    @Test func manPageCommandsMatchTheHelp() throws {
        let dump = try Built.run(Ribbitd.binary, ["--experimental-dump-help"], environment: Self.environment)
        let tool = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any]
        let root = try #require(tool?["command"] as? [String: Any], "ribbitd --experimental-dump-help: \(dump.status) \(dump.stderr)")
        let page = try String(contentsOf: ManPage.ribbitd, encoding: .utf8)
        let (begin, end) = (".\\\" BEGIN GENERATED COMMANDS\n", ".\\\" END GENERATED COMMANDS\n")
        let start = try #require(page.range(of: begin), "docs/man/ribbitd.1 has no \(begin)")
        let stop = try #require(page.range(of: end), "docs/man/ribbitd.1 has no \(end)")
        let generated = ManPage.commandsSection(root)
        guard String(page[start.upperBound..<stop.lowerBound]) != generated else { return }
        if Self.updating {
            try Data((page[..<start.upperBound] + generated + page[stop.lowerBound...]).utf8).write(to: ManPage.ribbitd)
            return
        }
        Issue.record(
            """
            docs/man/ribbitd.1's COMMANDS section differs from the binary's help; if the help changed on purpose, \
            rewrite it with `RIBBIT_UPDATE_SNAPSHOTS=1 swift test --disable-xctest --filter HelpSnapshotTests`.
            \(try Self.unifiedDiff(expected: ManPage.ribbitd, actual: String(page[..<start.upperBound] + generated + page[stop.lowerBound...]), label: "made from the help"))
            """)
    }
}

/// The COMMANDS section of ribbitd(1) from the JSON of `--experimental-dump-help`.
enum ManPage {
    static let folder = TestPaths.packageRoot.appendingPathComponent("docs/man")
    static let ribbitd = folder.appendingPathComponent("ribbitd.1")

    static func commandsSection(_ root: [String: Any]) -> String {
        var out = ".Sh COMMANDS\n"
        func walk(_ command: [String: Any], _ words: [String]) {
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = sub["commandName"] as? String, name != "help", sub["shouldDisplay"] as? Bool ?? true else { continue }
                out += section(sub, words + [name])
                walk(sub, words + [name])
            }
        }
        walk(root, [])
        return out
    }

    /// One command: `.Ss`, its synopsis, abstract, discussion and arguments.
    static func section(_ command: [String: Any], _ words: [String]) -> String {
        let arguments = (command["arguments"] as? [[String: Any]] ?? []).filter(shown)
        let subcommands = (command["subcommands"] as? [[String: Any]] ?? []).compactMap { $0["commandName"] as? String }
        var out = ".Ss \(words.joined(separator: " "))\n.Nm\n.Cm \(words.joined(separator: " "))\n"
        for argument in arguments { out += "." + synopsis(argument) + "\n" }
        if !subcommands.isEmpty { out += ".Ar subcommand\n" }
        out += ".Pp\n" + text(command["abstract"] as? String ?? "")
        if let discussion = command["discussion"] as? String, !discussion.isEmpty { out += ".Pp\n" + text(discussion) }
        if !arguments.isEmpty {
            out += ".Bl -tag -width Ds\n"
            for argument in arguments { out += ".It " + item(argument) + "\n" + text(help(argument)) }
            out += ".El\n"
        }
        return out
    }

    /// Every command's --help and --version are described once, in SYNOPSIS.
    static func shown(_ argument: [String: Any]) -> Bool {
        let names = (argument["names"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        return argument["shouldDisplay"] as? Bool ?? true && !names.contains("help") && !names.contains("version")
    }

    static func flagName(_ name: [String: Any]) -> String {
        let text = name["name"] as? String ?? ""
        switch name["kind"] as? String {
        case "short", "longWithSingleDash": return "Fl \(text)"
        default: return "Fl -\(text)"
        }
    }

    static func value(_ argument: [String: Any]) -> String {
        let name = argument["valueName"] as? String ?? "value"
        return "Ar \(quoted(name))" + (argument["isRepeating"] as? Bool == true ? " No ..." : "")
    }

    /// As the usage line shows it: `Op Fl -trial Ar DURATION`, `Ar prescription`.
    static func synopsis(_ argument: [String: Any]) -> String {
        let kind = argument["kind"] as? String
        let preferred = argument["preferredName"] as? [String: Any] ?? [:]
        let words: String
        switch kind {
        case "positional": words = value(argument)
        case "flag": words = flagName(preferred)
        default: words = flagName(preferred) + " " + value(argument)
        }
        return (argument["isOptional"] as? Bool ?? false) || kind == "flag" ? "Op \(words)" : words
    }

    /// The list entry: every name of an option, then its value.
    static func item(_ argument: [String: Any]) -> String {
        let names = (argument["names"] as? [[String: Any]] ?? []).map(flagName).joined(separator: " , ")
        switch argument["kind"] as? String {
        case "positional": return value(argument)
        case "flag": return names
        default: return names + " " + value(argument)
        }
    }

    /// The help as `--help` prints it: abstract, discussion, values and default.
    static func help(_ argument: [String: Any]) -> String {
        var help = argument["abstract"] as? String ?? ""
        if let discussion = argument["discussion"] as? String, !discussion.isEmpty { help += "\n\n" + discussion }
        var notes: [String] = []
        if let values = argument["allValues"] as? [String], !values.isEmpty { notes.append("values: " + values.joined(separator: ", ")) }
        if let value = argument["defaultValue"] as? String { notes.append("default: " + value) }
        return notes.isEmpty ? help : help + " (" + notes.joined(separator: "; ") + ")"
    }

    /// A macro argument: quoted when it holds a space or could be read as a macro.
    static func quoted(_ word: String) -> String {
        word.contains(" ") || word.first?.isUppercase == true && word.count == 2 ? "\"\(word)\"" : word
    }

    /// Running text: a sentence per line (roff ends a sentence only at a line's end), paragraphs
    /// as `.Pp`, nothing roff would read as a request.
    static func text(_ string: String) -> String {
        guard !string.isEmpty else { return "" }
        return string.replacingOccurrences(of: "\\", with: "\\e").components(separatedBy: "\n").map { paragraph in
            let paragraph = paragraph.trimmingCharacters(in: .whitespaces)
            if paragraph.isEmpty { return ".Pp\n" }
            return sentences(paragraph).map { ($0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" : "") + $0 + "\n" }.joined()
        }.joined()
    }

    /// Split after ". ", "? " or "! " where a new sentence starts (a capital, a digit, a backtick).
    static func sentences(_ line: String) -> [String] {
        var result: [String] = []
        var current = ""
        let characters = Array(line)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            current.append(character)
            if ".?!".contains(character), index + 2 < characters.count, characters[index + 1] == " ",
                characters[index + 2].isUppercase || characters[index + 2].isNumber || characters[index + 2] == "`"
            {
                result.append(current)
                current = ""
                index += 2
                continue
            }
            index += 1
        }
        return result + [current]
    }
}

/// The hand-written parts of the man pages against what the code does: the exit codes, the
/// environment variables it reads, the files it makes, the config keys it knows, the
/// prescription keys docs/prescription-format.md lists; and mandoc finds nothing to warn about.
@Suite struct ManPageContentTests {
    static func page(_ name: String) throws -> String {
        try String(contentsOf: ManPage.folder.appendingPathComponent(name), encoding: .utf8)
    }

    /// The text of one `.Sh` section.
    static func section(_ title: String, of page: String) -> String {
        guard let start = page.range(of: ".Sh \(title)\n") else { return "" }
        let rest = page[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n.Sh ")?.lowerBound ?? rest.endIndex)])
    }

    @Test(arguments: ["ribbitd.1", "ribbitd.conf.5", "ribbit-rx.5"]) func mandocFindsNothingToWarnAbout(name: String) throws {
        let mandoc = try #require(Built.tool("mandoc"), "mandoc is needed (apt-get install mandoc)")
        let page = ManPage.folder.appendingPathComponent(name)
        let lint = try Built.run(mandoc, ["-T", "lint", "-W", "warning", page.path])
        #expect(lint.status == 0 && lint.stdout.isEmpty && lint.stderr.isEmpty, "\(lint.stdout)\(lint.stderr)")
        // A mistake is caught (the check can fail).
        let broken = try TestPaths.temporaryDirectory().appendingPathComponent(name)
        try Data((try Self.page(name) + ".Bl -tag\n.It x\n").utf8).write(to: broken)
        #expect(try Built.run(mandoc, ["-T", "lint", "-W", "warning", broken.path]).status != 0)
    }

    /// Every code `ribbitd --help` names, and every one RibbitError makes, is under EXIT STATUS.
    @Test func exitStatusListsEveryCode() throws {
        let help = try Ribbitd.run(["--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
        let sentence = try #require(help.range(of: "Exit codes: ").map { help[$0.upperBound...] }, "\(help)")
        let named = sentence.prefix { $0 != "." }.split(separator: ",").compactMap {
            Int($0.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
        }
        let source = try String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent("Sources/ribbitd/RibbitError.swift"), encoding: .utf8)
        let made = source.components(separatedBy: "ExitCode(").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(named.count >= 8 && made.count >= 5, "\(named) \(made)")
        let listed = Set(
            Self.section("EXIT STATUS", of: try Self.page("ribbitd.1")).split(separator: "\n").compactMap { line in
                line.hasPrefix(".It ") ? Int(line.dropFirst(4)) : nil
            })
        for code in Set(named + made) { #expect(listed.contains(code), "exit status \(code) is not in ribbitd(1)'s EXIT STATUS") }
        #expect(
            listed.isSubset(of: Set(named + made + [0])),
            "EXIT STATUS lists \(listed.subtracting(named + made)), which ribbitd does not use")
    }

    /// Every environment variable the sources read is under ENVIRONMENT.
    @Test func environmentNamesEveryVariableTheCodeReads() throws {
        let sources = TestPaths.packageRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        var read = Set<String>()
        let patterns = [#"environment\["([A-Z_][A-Z0-9_]*)"\]"#, #"getenv\("([A-Z_][A-Z0-9_]*)"\)"#, #""([A-Z][A-Z0-9]*_[A-Z0-9_]+)""#]
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for pattern in patterns {
                let regex = try NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    read.insert(String(text[Range(match.range(at: 1), in: text)!]))
                }
            }
        }
        #expect(read.isSuperset(of: ["XDG_RUNTIME_DIR", "XDG_DATA_HOME", "NOTIFY_SOCKET", "RIBBIT_AUDIO", "HOME"]), "\(read)")
        let environment = Self.section("ENVIRONMENT", of: try Self.page("ribbitd.1"))
        for name in read.sorted() { #expect(environment.contains("Ev \(name)"), "ribbitd(1) ENVIRONMENT does not describe \(name)") }
    }

    /// The files a `load` makes in a private home, and the socket, are under FILES.
    @Test func filesNameWhatRibbitdMakes() throws {
        let directory = try TestPaths.temporaryDirectory()
        let env = try TestPaths.privateHome(in: directory)
        #expect(try Built.run(Ribbitd.binary, ["load", rx("flat.rx")], environment: env).status == 0)
        let made = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("data/ribbit").path)
        #expect(made.contains("ribbit.sqlite"), "\(made)")
        let files = Self.section("FILES", of: try Self.page("ribbitd.1"))
        for name in made + ["ribbitd.sock", "ribbitd.conf", "trusted/", "ribbit-audio", "ribbitd.service"] {
            #expect(files.contains("/\(name)"), "ribbitd(1) FILES does not name \(name)")
        }
    }

    /// ribbitd.conf(5) describes every key the config parser knows (it lists them for an unknown one).
    @Test func configPageDescribesEveryKey() throws {
        let directory = try TestPaths.temporaryDirectory()
        let env = try TestPaths.privateHome(in: directory)
        let config = directory.appendingPathComponent("config/ribbit/ribbitd.conf")
        try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("no-such-key = true\n".utf8).write(to: config)
        let result = try Built.run(Ribbitd.binary, ["rx", "show", rx("flat.rx")], environment: env)
        #expect(result.status == 78, "\(result)")
        let known = try #require(
            result.stderr.range(of: "known", options: .backwards).map { result.stderr[$0.upperBound...] }, "\(result.stderr)")
        let keys = known.split { !($0.isLetter || $0 == "-") }.map(String.init).filter { !$0.isEmpty }
        #expect(keys.count >= 6, "\(keys)")
        let page = try Self.page("ribbitd.conf.5")
        for key in keys { #expect(page.contains(".It Cm \(key) "), "ribbitd.conf(5) does not describe \(key)") }
    }

    /// ribbit-rx(5) has every key of docs/prescription-format.md's table, and its limits.
    @Test func prescriptionPageHasEveryKeyOfTheFormat() throws {
        let format = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/prescription-format.md"), encoding: .utf8)
        let table = format.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let keys = table.flatMap { row in
            row.split(separator: "|")[0].split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }.map { $0.replacingOccurrences(of: "...", with: "") }
        #expect(keys.count >= 14, "\(keys)")
        let page = try Self.page("ribbit-rx.5")
        for key in keys { #expect(page.contains("Cm \(key)"), "ribbit-rx(5) does not describe the key \(key)") }
        for limit in [
            "4096 bytes", "-10 to 120", "-30 to +50", "1000 to 20000", "-40 to 0", "+50 dB", "RIBBIT-RX 1",
            "RIBBIT-RX 2", "50 to 140", "1 to 200", "10 to 5000", "20 to 60", "80 to 132", "111 dB SPL", "117 dB SPL", "132 dB SPL",
        ] {
            #expect(format.contains(limit) && page.contains(limit), "\(limit) is not in both docs/prescription-format.md and ribbit-rx(5)")
        }
    }
}
