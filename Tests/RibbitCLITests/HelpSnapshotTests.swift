import Foundation
import RibbitTestSupport
import Testing

/// Every command's `--help`, word for word, against the snapshots in HelpSnapshots/: help text
/// (and so the man page) changes only on purpose. The commands come from the binary's own
/// `--experimental-dump-help`, so a new one cannot be left out.
/// `RIBBIT_UPDATE_SNAPSHOTS=1 swift test --disable-xctest --filter HelpSnapshotTests` rewrites them.
@Suite struct HelpSnapshotTests {
    static let folder = TestPaths.packageRoot.appendingPathComponent("Tests/RibbitCLITests/HelpSnapshots")
    static let updating = ProcessInfo.processInfo.environment["RIBBIT_UPDATE_SNAPSHOTS"] == "1"

    /// A fixed width, so the wrapping does not follow the terminal the tests run in.
    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["COLUMNS"] = "80"
        return env
    }

    /// Each command's words after `ribbitd`: [] for the top level, ["rx", "show"] ...
    static func commands() throws -> [[String]] {
        let dump = try Built.run(Ribbitd.binary, ["--experimental-dump-help"], environment: environment)
        guard dump.status == 0, let tool = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any],
            let root = tool["command"] as? [String: Any]
        else { throw SnapshotError("ribbitd --experimental-dump-help failed (\(dump.status)): \(dump.stderr)") }
        var found: [[String]] = []
        func walk(_ command: [String: Any], _ words: [String]) {
            found.append(words)
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                // `help` is swift-argument-parser's own; `help --help` is the top-level help.
                guard let name = sub["commandName"] as? String, !(words.isEmpty && name == "help") else { continue }
                walk(sub, words + [name])
            }
        }
        walk(root, [])
        return found
    }

    static func fileName(_ words: [String]) -> String { (["ribbitd"] + words).joined(separator: "-") + ".txt" }

    @Test func everyCommandsHelpMatchesItsSnapshot() throws {
        let commands = try Self.commands()
        #expect(commands.count > 20, "\(commands)")  // 19 commands, rx's 4 subcommands, the top level
        try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
        var mismatches: [String] = []
        for words in commands {
            let help = try Built.run(Ribbitd.binary, words + ["--help"], environment: Self.environment)
            #expect(
                help.status == 0 && help.stderr.isEmpty, "ribbitd \(words.joined(separator: " ")) --help: \(help.status) \(help.stderr)")
            let snapshot = Self.folder.appendingPathComponent(Self.fileName(words))
            let expected = try? String(contentsOf: snapshot, encoding: .utf8)
            guard expected != help.stdout else { continue }
            if Self.updating {
                try Data(help.stdout.utf8).write(to: snapshot)
            } else {
                mismatches.append(
                    try Self.unifiedDiff(expected: snapshot, actual: help.stdout, label: "ribbitd \(words.joined(separator: " ")) --help"))
            }
        }
        // A snapshot whose command is gone.
        let wanted = Set(commands.map(Self.fileName))
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.folder.path) where !wanted.contains(name) {
            if Self.updating {
                try FileManager.default.removeItem(at: Self.folder.appendingPathComponent(name))
            } else {
                mismatches.append("HelpSnapshots/\(name): no such command any more\n")
            }
        }
        guard !mismatches.isEmpty else { return }
        Issue.record(
            """
            the help text differs from Tests/RibbitCLITests/HelpSnapshots (- snapshot, + now). If the change is meant, \
            rewrite the snapshots with `RIBBIT_UPDATE_SNAPSHOTS=1 swift test --disable-xctest --filter HelpSnapshotTests` \
            and commit them.
            \(mismatches.joined(separator: "\n"))
            """)
    }

    /// `diff -u` between the snapshot (maybe missing) and what the binary printed.
    static func unifiedDiff(expected snapshot: URL, actual: String, label: String) throws -> String {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let actualFile = folder.appendingPathComponent("actual.txt")
        try Data(actual.utf8).write(to: actualFile)
        let old = FileManager.default.fileExists(atPath: snapshot.path) ? snapshot.path : "/dev/null"
        let diff = try Built.run(
            URL(fileURLWithPath: "/usr/bin/diff"),
            ["-u", "--label", "HelpSnapshots/\(snapshot.lastPathComponent)", "--label", label, old, actualFile.path])
        return diff.stdout
    }
}

struct SnapshotError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
