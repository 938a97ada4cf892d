import Foundation
import GRDB
import Glibc

/// Every prescription the wearer loaded, which one is active, and a running trial: one SQLite
/// file (`$XDG_DATA_HOME/ribbit/ribbit.sqlite`). Each change is one transaction, so a process
/// killed in the middle leaves the old state or the new one, never a mix.
///
/// It holds patient names and audiograms: the file is created 0600 (its journal inherits that),
/// its directory 0700, and a symbolic link in its place is refused. Each payload carries a
/// CRC-32, so a page damaged on disk cannot play as written. The active prescription is also
/// copied to `last-active.json` beside the database after every change, which survives a
/// damaged database (`openRecovering`).
public final class PrescriptionStore: Sendable {
    public struct Record: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
        public static let databaseTableName = "prescription"
        public var id: Int64?
        public var name: String
        public var environment: String
        public var audiologist: String?
        /// When it was loaded, UTC.
        public var loadedAt: Date
        /// Where it came from: a file path, or how it arrived.
        public var source: String
        /// The exact bytes of the prescription (text format), signature line included.
        public var payload: String
        /// "trusted", "unknown key" or "unsigned" (a bad signature is never stored).
        public var signature: String
        /// The trusted signer's name, when trusted.
        public var signer: String?
        /// CRC-32 of the payload's bytes, in hex (nil only in a copy made before version 2).
        public var checksum: String?

        public init(
            name: String, environment: String, audiologist: String?, loadedAt: Date = Date(), source: String, payload: String,
            signature: String, signer: String?
        ) {
            self.name = name
            self.environment = environment
            self.audiologist = audiologist
            self.loadedAt = loadedAt
            self.source = source
            self.payload = payload
            self.signature = signature
            self.signer = signer
            checksum = Checksum.crc32Hex(payload)
        }

        public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

        /// Signed by a key the wearer trusts, and its text as it was stored: it may lift limits.
        public var isTrusted: Bool { isIntact && signature == "trusted" }

        /// How the history records the signature, as `status`, `list` and `show` say it.
        public var signatureText: String {
            guard isIntact else { return "DAMAGED (its text no longer matches its checksum)" }
            return switch signature {
            case "trusted": "signed by \(signer ?? "?") (trusted)"
            case "unknown key": "signed, unknown key"
            default: signature
            }
        }

        /// Whether the payload is still the one stored (its checksum matches).
        public var isIntact: Bool { checksum == Checksum.crc32Hex(payload) }

        /// The payload, or an error when it was damaged after it was stored: what plays and
        /// what is exported goes through here.
        public func intactPayload() throws(StoreError) -> String {
            guard isIntact else {
                throw StoreError(
                    "history entry \(id.map(String.init) ?? "?") (\(name)) is damaged: its text no longer matches its checksum; load the prescription again"
                )
            }
            return payload
        }
    }

    /// A trial fitting: `id` is active until `deadline`, then `previousID` comes back (or none).
    public struct Trial: Codable, Sendable, Equatable {
        public var id: Int64
        public var previousID: Int64?
        public var deadline: Date
    }

    public let path: String
    let database: DatabaseQueue

    /// The copy of the active prescription kept beside the database.
    public var activeCopyPath: String { Self.activeCopyPath(databasePath: path) }
    public static func activeCopyPath(databasePath: String) -> String {
        (databasePath as NSString).deletingLastPathComponent + "/last-active.json"
    }

    /// Whether it was opened read-only (its directory cannot be written): every change throws.
    public let isReadOnly: Bool

    /// Hands a file write to someone else (the daemon's writer thread), or nil: written at once.
    public typealias DeferredWrite = @Sendable (_ path: String, _ write: @escaping @Sendable () -> Void) -> Void
    /// How the copy of the active prescription is written.
    private let copyWrites: DeferredWrite?

    /// Opens (creating) the history; `readOnly` opens an existing one without writing a byte,
    /// for a data directory that cannot be written (a disk remounted read-only).
    public init(path: String, readOnly: Bool = false, copyWrites: DeferredWrite? = nil) throws {
        self.path = path
        isReadOnly = readOnly
        self.copyWrites = copyWrites
        if !readOnly { try PrivateFile.prepare(path) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.readonly = readOnly
        database = try DatabaseQueue(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "prescription") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull()
                t.column("environment", .text).notNull()
                t.column("audiologist", .text)
                t.column("loadedAt", .datetime).notNull()
                t.column("source", .text).notNull()
                t.column("payload", .text).notNull()
                t.column("signature", .text).notNull()
                t.column("signer", .text)
            }
            // One row per key: "active" -> prescription id; "trial" -> JSON of Trial.
            try db.create(table: "state") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        migrator.registerMigration("v2") { db in
            try db.alter(table: "prescription") { t in t.add(column: "checksum", .text) }
            for row in try Row.fetchAll(db, sql: "SELECT id, payload FROM prescription") {
                let payload: String = row["payload"]
                try db.execute(
                    sql: "UPDATE prescription SET checksum = ? WHERE id = ?", arguments: [Checksum.crc32Hex(payload), row["id"] as Int64])
            }
        }
        if readOnly {
            guard try database.read({ try migrator.hasCompletedMigrations($0) }) else {
                throw StoreError("\(path) was made by an older ribbit and cannot be updated while its directory cannot be written")
            }
        } else {
            try migrator.migrate(database)
        }
    }

    /// The default location for a data directory (`$XDG_DATA_HOME/ribbit`).
    public static func path(dataDirectory: String) -> String { dataDirectory + "/ribbit.sqlite" }

    // MARK: Reading

    public func all() throws -> [Record] {
        try database.read { try Record.order(Column("id")).fetchAll($0) }
    }

    public func record(id: Int64) throws -> Record? {
        try database.read { try Record.fetchOne($0, key: id) }
    }

    /// By id ("3"), else the newest with that exact name.
    public func find(_ selector: String) throws -> Record? {
        if let id = Int64(selector), let record = try record(id: id) { return record }
        return try database.read {
            try Record.filter(Column("name") == selector).order(Column("id").desc).fetchOne($0)
        }
    }

    /// The newest prescription for an environment.
    public func newest(environment: String) throws -> Record? {
        try database.read {
            try Record.filter(Column("environment") == environment).order(Column("id").desc).fetchOne($0)
        }
    }

    public func activeID() throws -> Int64? {
        try database.read { try Self.activeID($0) }
    }

    public func active() throws -> Record? {
        try database.read { db in try Self.activeID(db).flatMap { try Record.fetchOne(db, key: $0) } }
    }

    public func trial() throws -> Trial? {
        try database.read { try Self.trial($0) }
    }

    // MARK: Changing (each one transaction)

    /// Adds a prescription and makes it the active one. With `trialUntil`, as a trial that
    /// reverts to the current active one at that time. Returns the stored record.
    @discardableResult
    public func add(_ record: Record, trialUntil deadline: Date? = nil) throws -> Record {
        defer { saveActiveCopy() }
        return try database.write { db in
            let stored = try record.inserted(db)
            let previous = try Self.activeID(db)
            try Self.setActive(db, stored.id!)
            if let deadline {
                // A trial on top of a trial reverts to the original, not to the first trial.
                let original = try Self.trial(db).map(\.previousID) ?? previous
                try Self.setTrial(db, Trial(id: stored.id!, previousID: original, deadline: deadline))
            } else {
                try Self.setTrial(db, nil)
            }
            return stored
        }
    }

    /// Makes a stored prescription the active one (ends any trial: the wearer chose).
    public func activate(id: Int64) throws {
        defer { saveActiveCopy() }
        try database.write { db in
            guard try Record.exists(db, key: id) else {
                throw StoreError("no prescription \(id) in the history; `ribbitd list` shows them")
            }
            try Self.setActive(db, id)
            try Self.setTrial(db, nil)
        }
    }

    /// Ends the trial: keep the trial prescription, or go back to the one before (nil: none).
    /// Returns the prescription now active.
    @discardableResult
    public func endTrial(keep: Bool) throws -> Record? {
        defer { saveActiveCopy() }
        return try database.write { db in
            guard let trial = try Self.trial(db) else { throw StoreError("no trial is running") }
            if !keep {
                if let previous = trial.previousID {
                    try Self.setActive(db, previous)
                } else {
                    try db.execute(sql: "DELETE FROM state WHERE key = 'active'")
                }
            }
            try Self.setTrial(db, nil)
            return try Self.activeID(db).flatMap { try Record.fetchOne(db, key: $0) }
        }
    }

    /// Removes a prescription from the history; the active one, or one a trial returns to, stays.
    public func remove(id: Int64) throws {
        try database.write { db in
            guard try Record.exists(db, key: id) else {
                throw StoreError("no prescription \(id) in the history; `ribbitd list` shows them")
            }
            if try Self.activeID(db) == id { throw StoreError("prescription \(id) is the active one; `ribbitd use` another first") }
            if try Self.trial(db)?.previousID == id {
                throw StoreError("prescription \(id) is what the running trial returns to; `ribbitd keep` or `ribbitd revert` first")
            }
            _ = try Record.deleteOne(db, key: id)
        }
    }

    /// SQLite's own consistency check ("ok" when sound).
    public func integrityCheck() throws -> String {
        try database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "no answer" }
    }

    // MARK: The copy of the active prescription

    /// Writes the active record to `last-active.json` (atomically, 0600), or removes the copy
    /// when none is active. Best effort: the database is the record; the copy only matters when
    /// the database is lost, and a failure here must not undo a change already committed.
    public func saveActiveCopy() {
        guard !isReadOnly else { return }
        let path = activeCopyPath
        let write: @Sendable () -> Void
        if let active = try? active() {
            // A damaged entry never replaces its copy: the copy is what plays instead of it.
            guard active.isIntact, let json = try? JSONEncoder.iso8601.encode(active) else { return }
            write = { try? PrivateFile.replace(path, with: json) }
        } else {
            write = { unlink(path) }
        }
        if let copyWrites { copyWrites(path, write) } else { write() }
    }

    /// The copy of the last active prescription, when it is there and intact.
    public static func activeCopy(databasePath: String) -> Record? {
        guard let data = try? PrivateFile.read(activeCopyPath(databasePath: databasePath), maxBytes: 64 * 1024),
            let record = try? JSONDecoder.iso8601.decode(Record.self, from: data), record.isIntact
        else { return nil }
        return record
    }

    // MARK: Helpers

    private static func activeID(_ db: Database) throws -> Int64? {
        try String.fetchOne(db, sql: "SELECT value FROM state WHERE key = 'active'").flatMap { Int64($0) }
    }

    private static func setActive(_ db: Database, _ id: Int64) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO state (key, value) VALUES ('active', ?)", arguments: [String(id)])
    }

    private static func trial(_ db: Database) throws -> Trial? {
        guard let json = try String.fetchOne(db, sql: "SELECT value FROM state WHERE key = 'trial'") else { return nil }
        return try JSONDecoder().decode(Trial.self, from: Data(json.utf8))
    }

    private static func setTrial(_ db: Database, _ trial: Trial?) throws {
        if let trial {
            let json = String(decoding: try JSONEncoder().encode(trial), as: UTF8.self)
            try db.execute(sql: "INSERT OR REPLACE INTO state (key, value) VALUES ('trial', ?)", arguments: [json])
        } else {
            try db.execute(sql: "DELETE FROM state WHERE key = 'trial'")
        }
    }
}

public struct StoreError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
