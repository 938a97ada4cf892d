import Foundation
import RibbitPrescription

/// One history entry as `ribbitd list --json` prints it and the web app's `/api/history` answers.
public struct HistoryEntry: Codable, Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var environment: String
    public var audiologist: String?
    /// Its fitting rule (`rule:`, or the default), from the stored text; absent when that no
    /// longer parses (a damaged entry).
    public var rule: String?
    /// ISO 8601, UTC.
    public var loadedAt: String
    public var source: String
    public var signature: String
    public var active: Bool

    public init(_ r: PrescriptionStore.Record, activeID: Int64?) {
        id = r.id ?? 0
        name = r.name
        environment = r.environment
        audiologist = r.audiologist
        rule = (try? Prescription.parse(Array(r.payload.utf8)))?.rule.rawValue
        loadedAt = ISO8601DateFormatter().string(from: r.loadedAt)
        source = r.source
        signature = r.signatureText
        active = r.id == activeID
    }

    /// The history, oldest first, the active one marked.
    public static func list(_ store: PrescriptionStore) throws -> [HistoryEntry] {
        let activeID = try store.activeID()
        return try store.all().map { HistoryEntry($0, activeID: activeID) }
    }

    /// Pretty JSON with sorted keys: the same bytes for the same data, for diffs and scripts.
    public static func json(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of strings and numbers cannot fail.
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }
}
