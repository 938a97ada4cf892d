import ArgumentParser

/// "did you mean status?" for a mistyped subcommand, at the top level and under `rx`.
///
/// ArgumentParser reports a word that names no subcommand as an unexpected argument, with no
/// suggestion; so the words are checked here first, before it parses them.
enum UnknownCommand {
    /// The one-line error for the first word that should name a subcommand and does not, or nil.
    static func message(for arguments: [String]) -> String? {
        var command: ParsableCommand.Type = Ribbitd.self
        var path = ["ribbitd"]
        for word in arguments {
            let subcommands = command.configuration.subcommands
            // An option (--help, --version, or the command's own), or a command without subcommands: ArgumentParser's job.
            guard !subcommands.isEmpty, !word.hasPrefix("-") else { return nil }
            let names = subcommands.map { $0._commandName } + (path.count == 1 ? ["help"] : [])
            guard let next = subcommands.first(where: { $0._commandName == word }) else {
                if names.contains(word) { return nil }  // help
                let usage = "`\(path.joined(separator: " ")) --help` lists them"
                guard let closest = closest(to: word, in: names) else {
                    return "'\(word)' is not a command of \(path.joined(separator: " ")); \(usage)"
                }
                return "'\(word)' is not a command of \(path.joined(separator: " ")); did you mean '\(closest)'? (\(usage))"
            }
            command = next
            path.append(word)
        }
        return nil
    }

    /// The name nearest to `word` by edit distance, when near enough to be a typo: at most 2
    /// edits, and fewer than half the word's letters.
    static func closest(to word: String, in names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: editDistance(word.lowercased(), $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        return best.distance <= min(2, max(1, word.count / 2)) ? best.name : nil
    }

    /// Levenshtein distance (insert, delete, substitute), with a swap of neighbours counting as one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let (x, y) = (Array(a), Array(b))
        guard !x.isEmpty else { return y.count }
        guard !y.isEmpty else { return x.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { table[i][0] = i }
        for j in 0...y.count { table[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[x.count][y.count]
    }
}
