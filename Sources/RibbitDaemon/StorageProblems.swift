import Logging
import RibbitSettings

/// What the daemon could not read or store (a read-only or full disk, a damaged file of
/// ribbit's), each said once: a line in the log when it is found, and the same line in
/// `status` (`storageProblems`) while it lasts. None of them stops the sound: each line says
/// what ribbit did instead and what the wearer can do.
final class StorageProblems {
    private let log: Logger
    private var entries: [(key: String, line: String)] = []

    init(log: Logger) { self.log = log }

    /// Records a problem under `key` (a file or directory); logged when new or changed.
    func report(_ key: String, _ line: String) {
        if let index = entries.firstIndex(where: { $0.key == key }) {
            guard entries[index].line != line else { return }
            entries[index].line = line
        } else {
            // A file in a directory already reported as unwritable: that line says it.
            if entries.contains(where: { key.hasPrefix($0.key + "/") && $0.line.contains("cannot be written") }) { return }
            entries.append((key, line))
        }
        log.error("\(line)")
    }

    /// The problem under `key` is over (a file written again): `line` says so in the log.
    func clear(_ key: String, saying line: String) {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return }
        log.notice("\(line)")
        entries.remove(at: index)
    }

    func contains(_ key: String) -> Bool { entries.contains { $0.key == key } }

    /// For `status`: nil when there is nothing to say.
    var lines: [String]? { entries.isEmpty ? nil : entries.map(\.line) }

    /// The directories the daemon writes, checked at start: read-only, not ours, or full.
    func checkDirectories(_ paths: RibbitPaths) {
        let what = [
            (
                paths.dataDirectory,
                "the last prescription plays, but a new one cannot be stored (load and use are refused), nor the data log or a hearing test's result"
            ),
            (paths.stateDirectory, "the volume and program you choose apply until the daemon stops, and are not remembered"),
            (paths.cacheDirectory, "FFTW's plans are measured anew at each start (a slower start, nothing else)"),
        ]
        for (directory, consequence) in what {
            if let why = DirectoryCheck.unwritable(directory) {
                report(directory, "\(directory) cannot be written (\(why)): \(consequence); remount it writable or fix its owner and mode")
            } else if let free = DirectoryCheck.freeBytes(directory), free < DirectoryCheck.fullBelowBytes, !contains("full disk") {
                report(
                    "full disk",
                    "the disk holding \(directory) is full (\(free / 1024) KiB free): what cannot be stored is refused or left out and said; free some space"
                )
            }
        }
    }
}
