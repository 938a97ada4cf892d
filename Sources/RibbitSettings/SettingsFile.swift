import Foundation
import RibbitSystem

/// A settings file ribbit writes (calibration.toml, hearing-reference.toml): whole and
/// atomically (a temporary file beside it, fsync, rename), mode 0644 less the umask, so a crash leaves the old
/// file or the new one, never half of either.
enum SettingsFile {
    static func write(_ text: String, to path: String) throws(ConfigError) {
        let directory = (path as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ConfigError("cannot make \(directory): \(error.localizedDescription)", kind: .unreadable)
        }
        do { try AtomicFile.write(Array(text.utf8), to: path, mode: 0o644) } catch {
            throw ConfigError(error.description, kind: .unreadable)
        }
    }
}
