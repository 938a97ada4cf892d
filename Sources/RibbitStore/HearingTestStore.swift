import Foundation
import GRDB
import RibbitAudiometry

/// The hearing tests the wearer took, in the same SQLite file as the prescription history
/// (`ribbit.sqlite`: one file to back up, one set of permissions). Its own table and migration:
/// GRDB skips migrations it does not know, so a `PrescriptionStore` and this one open the file in
/// either order. Opening takes no history lock and only writes on the first migration, so it
/// works while a daemon runs, as `ribbitd list` does.
///
/// Each row keeps the whole record as JSON (with a CRC-32, as the history's payloads), and for
/// `list` and queries its date, transducer and flags as columns.
public final class HearingTestStore: Sendable {
    public let path: String
    let database: DatabaseQueue

    public init(path: String) throws {
        self.path = path
        try PrivateFile.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        database = try DatabaseQueue(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("hearing-tests-v1") { db in
            try db.create(table: "hearing_tests") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("date", .text).notNull()
                t.column("transducer", .text).notNull()
                // Comma-separated `ReliabilityFlag` raw values ("" when none).
                t.column("flags", .text).notNull()
                t.column("record", .text).notNull()
                t.column("checksum", .text).notNull()
            }
        }
        try migrator.migrate(database)
    }

    /// Stores a record (its `id` is ignored) and returns its new id.
    @discardableResult
    public func save(_ record: HearingTestRecord) throws -> Int64 {
        var stored = record
        stored.id = nil
        let json = String(decoding: try Self.encoder.encode(stored), as: UTF8.self)
        return try database.write { db in
            try db.execute(
                sql: "INSERT INTO hearing_tests (date, transducer, flags, record, checksum) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    record.date, record.transducer.rawValue, record.result.flags.map(\.rawValue).joined(separator: ","), json,
                    Checksum.crc32Hex(json),
                ])
            return db.lastInsertedRowID
        }
    }

    /// Every stored test, newest first, ids filled.
    public func all() throws -> [HearingTestRecord] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, record, checksum FROM hearing_tests ORDER BY date DESC, id DESC").map(Self.decode)
        }
    }

    public func find(id: Int64) throws -> HearingTestRecord {
        let row = try database.read { db in
            try Row.fetchOne(db, sql: "SELECT id, record, checksum FROM hearing_tests WHERE id = ?", arguments: [id])
        }
        guard let row else { throw StoreError("no hearing test \(id) is stored; `ribbitd audiogram list` shows them") }
        return try Self.decode(row)
    }

    static func decode(_ row: Row) throws -> HearingTestRecord {
        let id: Int64 = row["id"]
        let json: String = row["record"]
        guard Checksum.crc32Hex(json) == row["checksum"] else {
            throw StoreError("hearing test \(id) is damaged: its record no longer matches its checksum")
        }
        do {
            var record = try JSONDecoder().decode(HearingTestRecord.self, from: Data(json.utf8))
            record.id = id
            return record
        } catch {
            throw StoreError("hearing test \(id) cannot be read (\(error)); it may be from a newer ribbit")
        }
    }

    /// Sorted keys: the same bytes for the same record.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
