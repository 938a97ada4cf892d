import Foundation
import RibbitFitting

/// The wearer's program choice and volume, kept across restarts in
/// `$XDG_STATE_HOME/ribbit/listening.json` (written whole and atomically; private to the
/// wearer like the rest of the state). A missing or damaged file means the defaults: the
/// prescription's own program at 0 dB, which is always safe.
struct ListeningFile {
    let path: String

    init(stateDirectory: String) { path = stateDirectory + "/listening.json" }

    func load() -> Listening {
        guard let data = FileManager.default.contents(atPath: path), var listening = try? JSONDecoder().decode(Listening.self, from: data)
        else { return Listening() }
        let range = Listening.volumeRangeDB
        listening.volumeDB = listening.volumeDB.isFinite ? min(max(listening.volumeDB, range.lowerBound), range.upperBound) : 0
        return listening
    }

    /// Saves; a failure is returned for the log (the setting still applies until restart).
    func save(_ listening: Listening) -> String? {
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(listening).write(to: URL(fileURLWithPath: path), options: [.atomic])
            chmod(path, 0o600)
            return nil
        } catch {
            return "cannot remember the volume and program in \(path): \(error.localizedDescription)"
        }
    }
}
