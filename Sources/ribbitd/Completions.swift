import ArgumentParser
import Foundation
import RibbitSettings
import RibbitStore

/// What the shells complete from the prescription history (`use NAME`, `use --env ENV`).
/// The completion scripts run `ribbitd` itself for these, so they read the same history as
/// `ribbitd list`. Never an error on the terminal while completing: no history, a damaged one or
/// a busy one completes nothing, and nothing is created or moved aside.
enum HistoryCompletion {
    @Sendable static func names(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        unique(records().map(\.name))
    }

    @Sendable static func environments(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        unique(records().map(\.environment))
    }

    static func records() -> [PrescriptionStore.Record] {
        let path = RibbitPaths().storePath
        guard FileManager.default.fileExists(atPath: path), let store = try? PrescriptionStore(path: path) else { return [] }
        return (try? store.all()) ?? []
    }

    /// In history order, each once.
    static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}

/// What the shells offer for path arguments (`ribbitd --generate-completion-script SHELL`).
extension CompletionKind {
    /// A prescription: its text, or a picture of its QR code (cameras write .JPG).
    static let prescriptionFile = CompletionKind.file(extensions: ["rx", "png", "jpg", "jpeg", "PNG", "JPG", "JPEG"])
    static let prescriptionText = CompletionKind.file(extensions: ["rx"])
    /// What `export` writes.
    static let exportFile = CompletionKind.file(extensions: ["rx", "png"])
    /// What libsndfile reads for `process` and `measure`.
    static let soundFile = CompletionKind.file(extensions: ["wav", "flac", "WAV", "FLAC"])
}
