import Foundation
import GRDB
import RibbitVoice

/// The voice exercises' children, sessions and events, in their own SQLite file
/// (`voice.sqlite`, 0600), as the data log has: events are written several times a second, and
/// the history's recovery (which moves a damaged file aside) must never take a child's progress
/// with it, nor the other way round. Times are Unix seconds (REAL).
///
/// Settings and summaries are JSON with a CRC-32 (as the other stores' records); events are
/// plain columns, appended in batches a few times a second, one transaction per batch.
/// A session nobody ended (the browser closed, ribbit crashed) reads as `interrupted`.
public final class VoiceStore: Sendable {
    public let path: String
    let database: DatabaseQueue

    /// Longest nickname, in characters: a name, not a note.
    public static let nicknameLimit = 40
    public static let ages = 1...18

    /// Where the voice exercises' file is, beside the history's.
    public static func path(dataDirectory: String) -> String { dataDirectory + "/voice.sqlite" }

    public init(path: String) throws {
        self.path = path
        try PrivateFile.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        database = try DatabaseQueue(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("voice-v1") { db in
            try db.create(table: "voice_children") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("nickname", .text).notNull()
                t.column("age", .integer)
                t.column("settings", .text).notNull()
                t.column("checksum", .text).notNull()
                t.column("created", .double).notNull()
                t.column("archived", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "voice_sessions") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("child", .integer).notNull().indexed().references("voice_children")
                t.column("game", .text).notNull()
                t.column("started", .double).notNull()
                // NULL until the session ends; NULL later means it was interrupted.
                t.column("ended", .double)
                t.column("outcome", .text)
                t.column("settings", .text).notNull()
                t.column("summary", .text)
                // CRC-32 of settings + "\n" + summary ("" when none).
                t.column("checksum", .text).notNull()
            }
            try db.create(table: "voice_events") { t in
                t.column("session", .integer).notNull().references("voice_sessions")
                t.column("time", .double).notNull()
                t.column("kind", .text).notNull()
                t.column("value", .double)
            }
            try db.create(index: "voice_events_by_session", on: "voice_events", columns: ["session", "time"])
        }
        try migrator.migrate(database)
    }

    // MARK: Children

    /// Adds a child and returns it with its id.
    @discardableResult
    public func addChild(nickname: String, ageYears: Int?, settings: VoiceSettings, now: Double = Date().timeIntervalSince1970) throws
        -> VoiceChild
    {
        let name = try Self.checked(nickname: nickname, ageYears: ageYears, settings: settings)
        let json = try Self.json(settings)
        let id = try database.write { db in
            try db.execute(
                sql: "INSERT INTO voice_children (nickname, age, settings, checksum, created, archived) VALUES (?, ?, ?, ?, ?, 0)",
                arguments: [name, ageYears, json, Checksum.crc32Hex(json), now])
            return db.lastInsertedRowID
        }
        return VoiceChild(id: id, nickname: name, ageYears: ageYears, settings: settings, created: now)
    }

    /// Changes a child's nickname, age and settings (`created` and `archived` stay as stored).
    public func updateChild(_ child: VoiceChild) throws {
        let name = try Self.checked(nickname: child.nickname, ageYears: child.ageYears, settings: child.settings)
        let json = try Self.json(child.settings)
        try database.write { db in
            try db.execute(
                sql: "UPDATE voice_children SET nickname = ?, age = ?, settings = ?, checksum = ? WHERE id = ?",
                arguments: [name, child.ageYears, json, Checksum.crc32Hex(json), child.id])
            guard db.changesCount == 1 else { throw Self.noChild(child.id) }
        }
    }

    /// Hides a child from `children()` (or shows it again); nothing is deleted.
    public func archiveChild(id: Int64, archived: Bool = true) throws {
        try database.write { db in
            try db.execute(sql: "UPDATE voice_children SET archived = ? WHERE id = ?", arguments: [archived, id])
            guard db.changesCount == 1 else { throw Self.noChild(id) }
        }
    }

    /// The children by nickname (then id); archived ones only when asked.
    public func children(includingArchived: Bool = false) throws -> [VoiceChild] {
        try database.read { try Self.children($0, includingArchived: includingArchived) }
    }

    public func child(id: Int64) throws -> VoiceChild {
        guard let row = try database.read({ try Row.fetchOne($0, sql: "SELECT * FROM voice_children WHERE id = ?", arguments: [id]) })
        else { throw Self.noChild(id) }
        return try Self.child(row)
    }

    // MARK: Sessions and events

    /// Starts a session of `game` for a child with its current settings (or `settings`, the
    /// ones the game actually uses). Returns the session's id.
    public func startSession(
        childID: Int64, game: VoiceGameKind, settings: VoiceSettings? = nil, now: Double = Date().timeIntervalSince1970
    ) throws -> Int64 {
        let used = try settings ?? child(id: childID).settings
        if let problem = used.problems.first { throw StoreError("the session's settings are not usable: \(problem)") }
        let json = try Self.json(used)
        return try database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT archived FROM voice_children WHERE id = ?", arguments: [childID]) == false else {
                throw try Self.exists(db, child: childID)
                    ? StoreError("child \(childID) is archived; restore it first") : Self.noChild(childID)
            }
            try db.execute(
                sql: "INSERT INTO voice_sessions (child, game, started, settings, checksum) VALUES (?, ?, ?, ?, ?)",
                arguments: [childID, game.rawValue, now, json, Checksum.crc32Hex(json + "\n")])
            return db.lastInsertedRowID
        }
    }

    /// Appends a batch of a session's events in one transaction (one fsync): call it with what a
    /// few frames produced, not once per event. Refused once the session has ended.
    public func appendEvents(sessionID: Int64, _ events: [VoiceGameEvent]) throws {
        guard !events.isEmpty else { return }
        try database.write { db in
            try Self.requireOpen(db, sessionID)
            let insert = try db.cachedStatement(sql: "INSERT INTO voice_events (session, time, kind, value) VALUES (?, ?, ?, ?)")
            for event in events {
                guard event.time.isFinite, event.value?.isFinite ?? true else {
                    throw StoreError("session \(sessionID): an event's time or value is not a number")
                }
                try insert.execute(arguments: [sessionID, event.time, event.kind.rawValue, event.value])
            }
        }
    }

    /// Ends a session with its outcome (`finished` or `exited`) and the game's summary.
    public func endSession(
        id: Int64, outcome: VoiceSessionOutcome, summary: VoiceSessionSummary, now: Double = Date().timeIntervalSince1970
    )
        throws
    {
        guard outcome != .interrupted else {
            throw StoreError("a session ends finished or exited; interrupted is what an unended one reads as")
        }
        let summaryJSON = try Self.json(summary)
        try database.write { db in
            try Self.requireOpen(db, id)
            let settings = try String.fetchOne(db, sql: "SELECT settings FROM voice_sessions WHERE id = ?", arguments: [id]) ?? ""
            try db.execute(
                sql: "UPDATE voice_sessions SET ended = ?, outcome = ?, summary = ?, checksum = ? WHERE id = ?",
                arguments: [now, outcome.rawValue, summaryJSON, Checksum.crc32Hex(settings + "\n" + summaryJSON), id])
        }
    }

    /// A child's sessions, oldest first (all children's when nil).
    public func sessions(childID: Int64? = nil) throws -> [VoiceSessionRecord] {
        try database.read { try Self.sessions($0, childID: childID) }
    }

    public func session(id: Int64) throws -> VoiceSessionRecord {
        let row = try database.read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT s.*, (SELECT MAX(time) FROM voice_events e WHERE e.session = s.id) AS last_event FROM voice_sessions s WHERE s.id = ?",
                arguments: [id])
        }
        guard let row else { throw StoreError("no voice session \(id) is stored") }
        return try Self.session(row)
    }

    /// A session's events in time order.
    public func events(sessionID: Int64) throws -> [VoiceGameEvent] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM voice_events WHERE session = ? ORDER BY time, rowid", arguments: [sessionID]).map {
                try Self.event($0).event
            }
        }
    }

    /// A child's events, by session then time (all children's when nil).
    public func events(childID: Int64? = nil) throws -> [VoiceStoredEvent] {
        try database.read { try Self.events($0, childID: childID) }
    }

    // MARK: For the therapist's screen

    /// A child's weeks of figures (see `VoiceProgress.weeks`).
    public func progress(childID: Int64, utcOffsetSeconds: Int = 0) throws -> [VoiceProgressWeek] {
        VoiceProgress.weeks(childID: childID, sessions: try sessions(childID: childID), utcOffsetSeconds: utcOffsetSeconds)
    }

    /// The two CSV files for one child (every child's when nil), read in one transaction.
    public func csv(childID: Int64? = nil, utcOffsetSeconds: Int = 0) throws -> (events: String, sessions: String) {
        let (children, sessions, events) = try database.read { db in
            (try Self.children(db, includingArchived: true), try Self.sessions(db, childID: childID), try Self.events(db, childID: childID))
        }
        return (
            VoiceCSV.events(children: children, sessions: sessions, events: events, utcOffsetSeconds: utcOffsetSeconds),
            VoiceCSV.sessions(children: children, sessions: sessions, utcOffsetSeconds: utcOffsetSeconds)
        )
    }

    // MARK: Helpers

    static func children(_ db: Database, includingArchived: Bool) throws -> [VoiceChild] {
        let filter = includingArchived ? "" : " WHERE archived = 0"
        return try Row.fetchAll(db, sql: "SELECT * FROM voice_children\(filter) ORDER BY nickname COLLATE NOCASE, id").map(child)
    }

    static func sessions(_ db: Database, childID: Int64?) throws -> [VoiceSessionRecord] {
        // An unended session ends, for the figures, at its last event.
        let sql = """
            SELECT s.*, (SELECT MAX(time) FROM voice_events e WHERE e.session = s.id) AS last_event
            FROM voice_sessions s \(childID == nil ? "" : "WHERE s.child = ?") ORDER BY s.started, s.id
            """
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(childID.map { [$0] } ?? [])).map(session)
    }

    static func events(_ db: Database, childID: Int64?) throws -> [VoiceStoredEvent] {
        let sql = """
            SELECT e.* FROM voice_events e JOIN voice_sessions s ON s.id = e.session
            \(childID == nil ? "" : "WHERE s.child = ?") ORDER BY s.started, e.session, e.time, e.rowid
            """
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(childID.map { [$0] } ?? [])).map(event)
    }

    /// The nickname trimmed, or one line saying what is wrong.
    static func checked(nickname: String, ageYears: Int?, settings: VoiceSettings) throws(StoreError) -> String {
        let name = nickname.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw StoreError("a child needs a nickname") }
        guard name.count <= nicknameLimit else {
            throw StoreError("a nickname is at most \(nicknameLimit) characters; this one has \(name.count)")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StoreError("a nickname cannot contain control characters (a tab or a line break)")
        }
        if let ageYears, !ages.contains(ageYears) {
            throw StoreError("age \(ageYears) is out of range: \(ages.lowerBound) to \(ages.upperBound) years, or none")
        }
        if !settings.problems.isEmpty { throw StoreError("the settings are not usable: " + settings.problems.joined(separator: "; ")) }
        return name
    }

    static func noChild(_ id: Int64) -> StoreError { StoreError("no child \(id) is stored") }

    static func exists(_ db: Database, child id: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM voice_children WHERE id = ?)", arguments: [id]) ?? false
    }

    static func requireOpen(_ db: Database, _ sessionID: Int64) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT ended FROM voice_sessions WHERE id = ?", arguments: [sessionID]) else {
            throw StoreError("no voice session \(sessionID) is stored")
        }
        guard (row["ended"] as Double?) == nil else { throw StoreError("voice session \(sessionID) has already ended") }
    }

    static func json<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decoded<Value: Decodable>(_ type: Value.Type, _ json: String, what: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(json.utf8))
        } catch {
            throw StoreError("\(what) cannot be read; it may be from a newer ribbit")
        }
    }

    static func child(_ row: Row) throws -> VoiceChild {
        let id: Int64 = row["id"]
        let json: String = row["settings"]
        guard Checksum.crc32Hex(json) == row["checksum"] else {
            throw StoreError("child \(id)'s settings are damaged: they no longer match their checksum; set them again")
        }
        return VoiceChild(
            id: id, nickname: row["nickname"], ageYears: row["age"],
            settings: try decoded(VoiceSettings.self, json, what: "child \(id)'s settings"),
            created: row["created"], archived: row["archived"])
    }

    static func session(_ row: Row) throws -> VoiceSessionRecord {
        let id: Int64 = row["id"]
        let settingsJSON: String = row["settings"]
        let summaryJSON: String? = row["summary"]
        guard Checksum.crc32Hex(settingsJSON + "\n" + (summaryJSON ?? "")) == row["checksum"] else {
            throw StoreError("voice session \(id) is damaged: its settings or summary no longer match their checksum")
        }
        guard let game = VoiceGameKind(rawValue: row["game"]) else {
            throw StoreError("voice session \(id) is of a game this ribbit does not know; it may be from a newer ribbit")
        }
        let started: Double = row["started"]
        let ended: Double? = row["ended"]
        let outcome = (row["outcome"] as String?).flatMap(VoiceSessionOutcome.init(rawValue:)) ?? .interrupted
        return VoiceSessionRecord(
            id: id, childID: row["child"], game: game, started: started, ended: ended ?? started + max(0, row["last_event"] ?? 0),
            outcome: ended == nil ? .interrupted : outcome, open: ended == nil,
            settings: try decoded(VoiceSettings.self, settingsJSON, what: "voice session \(id)'s settings"),
            summary: try summaryJSON.map { try decoded(VoiceSessionSummary.self, $0, what: "voice session \(id)'s summary") })
    }

    static func event(_ row: Row) throws -> VoiceStoredEvent {
        let session: Int64 = row["session"]
        let raw: String = row["kind"]
        guard let kind = VoiceGameEvent.Kind(rawValue: raw) else {
            throw StoreError("voice session \(session) has an event \"\(raw)\" this ribbit does not know; it may be from a newer ribbit")
        }
        return VoiceStoredEvent(sessionID: session, event: VoiceGameEvent(time: row["time"], kind: kind, value: row["value"]))
    }
}
