import Foundation
import RibbitFitting
import RibbitSettings
import RibbitSystem

/// The wearer's program choice and volume, kept across restarts in
/// `$XDG_STATE_HOME/ribbit/listening.json` (written whole and atomically; private to the
/// wearer like the rest of the state). A missing or damaged file means the defaults: the
/// prescription's own program at 0 dB, which is always safe.
struct ListeningFile {
    let path: String

    init(stateDirectory: String) { path = stateDirectory + "/listening.json" }

    /// The remembered choice, and what was wrong with the file when it is there but unusable.
    func load() -> (listening: Listening, problem: String?) {
        guard FileManager.default.fileExists(atPath: path) else { return (Listening(), nil) }
        guard let data = try? BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes),
            var listening = try? JSONDecoder().decode(Listening.self, from: data)
        else {
            return (
                Listening(),
                "\(path) was damaged: the program and volume start from the prescription's own (0 dB); choose them again (the file is written anew)"
            )
        }
        let range = Listening.volumeRangeDB
        listening.volumeDB = listening.volumeDB.isFinite ? min(max(listening.volumeDB, range.lowerBound), range.upperBound) : 0
        return (listening, nil)
    }

    /// Saves; a failure is returned for the log (the setting still applies until restart).
    func save(_ listening: Listening) -> String? {
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try AtomicFile.write([UInt8](try encoder.encode(listening)), to: path, mode: 0o600, exactly: true)
            return nil
        } catch {
            return
                "cannot remember the volume and program in \(path) (\(PrivateErrorText.describe(error))): they apply until the daemon stops; free some space or make the directory writable"
        }
    }
}

enum PrivateErrorText {
    /// The system's words for a Foundation file error ("Read-only file system"), else its own.
    static func describe(_ error: Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        return underlying.map { String(cString: strerror(Int32($0.code))) } ?? error.localizedDescription
    }
}
