import Foundation
import RibbitSettings

/// A key file's text (a key is about 100 bytes; a FIFO, device or huge file is refused in one line).
func readKeyFile(_ path: String, what: String) throws(RibbitError) -> String {
    let bytes: Data
    do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
        if case .tooLarge = error.problem { throw .data("\(error) for a key; give \(what)") }
        throw .noInput("\(error); give \(what)")
    }
    return String(decoding: bytes, as: UTF8.self)
}
