import Foundation
import GRDB
import Glibc

/// The data log: what the wearer's days were like, for a follow-up visit. Per local day: the
/// seconds processing in each program, bypassed and paused; a histogram of 1-s input levels in
/// dB SPL (5 dB bins); the seconds with noise reduction on; program switches, volume changes,
/// xruns and daemon starts. Nothing else (no sound, no times of day), and nothing leaves the
/// machine.
///
/// Its own SQLite file beside the history (`$XDG_DATA_HOME/ribbit/wearlog.sqlite`), not a table
/// in the history: the daemon writes it every minute, so a full disk, damage or `log --erase`
/// here can never touch the prescriptions, and the history stays a small file written only when
/// the wearer changes something. Each flush is one transaction that adds the minute's counts to
/// the day's rows (WAL, synchronous FULL), so a process killed or a power cut loses at most the
/// minute not yet flushed, never a day already written. Bounded: one row per day, one per
/// program used that day and one per level bin heard that day; a year is well under 10 MB.
public final class WearLog: Sendable {
    /// One day's counts, plain values (what `ribbitd log` prints and `verify` reads).
    public struct Day: Sendable, Equatable, Codable {
        /// The local date, YYYY-MM-DD.
        public var date: String
        /// Seconds processing (JACK connected), by program name; "none": no prescription loaded.
        public var processingSeconds: [String: Double] = [:]
        public var bypassedSeconds = 0.0
        public var pausedSeconds = 0.0
        /// Seconds processing in a program with noise reduction on.
        public var noiseReductionSeconds = 0.0
        /// Seconds of input at each level, by the bin's lower edge in dB SPL (`WearLog.bin`).
        public var levelSeconds: [Int: Int] = [:]
        public var programSwitches = 0
        public var volumeChanges = 0
        public var xruns = 0
        /// Daemon starts (a restart counts one).
        public var starts = 0

        public init(date: String) { self.date = date }

        /// Adds another tally of the same day.
        public mutating func add(_ other: Day) {
            processingSeconds.merge(other.processingSeconds, uniquingKeysWith: +)
            bypassedSeconds += other.bypassedSeconds
            pausedSeconds += other.pausedSeconds
            noiseReductionSeconds += other.noiseReductionSeconds
            levelSeconds.merge(other.levelSeconds, uniquingKeysWith: +)
            programSwitches += other.programSwitches
            volumeChanges += other.volumeChanges
            xruns += other.xruns
            starts += other.starts
        }

        /// Seconds worn: processing in any program, bypassed or paused.
        public var wornSeconds: Double { processingSeconds.values.reduce(0, +) + bypassedSeconds + pausedSeconds }

        public var isEmpty: Bool { self == Day(date: date) }
    }

    /// The level bins' lower edges: 15 holds everything below 20 dB SPL, 120 everything from
    /// 120 up; the others are [edge, edge + 5).
    public static let binEdges = Array(stride(from: 15, through: 120, by: 5))

    /// The bin of a level in dB SPL.
    public static func bin(levelDBSPL: Double) -> Int {
        guard levelDBSPL.isFinite else { return levelDBSPL > 0 ? 120 : 15 }
        return min(120, max(15, Int((levelDBSPL / 5).rounded(.down)) * 5))
    }

    public let path: String
    let database: DatabaseQueue

    /// `$XDG_DATA_HOME/ribbit/wearlog.sqlite` for a data directory.
    public static func path(dataDirectory: String) -> String { dataDirectory + "/wearlog.sqlite" }

    /// Opens (creating 0600, as the history) and migrates. `busySeconds`: how long a write
    /// waits for another writer (`log --erase`) before it fails.
    public init(path: String, busySeconds: Double = 5) throws {
        self.path = path
        try PrivateFile.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(busySeconds)
        configuration.prepareDatabase { db in
            // A flush survives a power cut once committed; erased rows are overwritten on disk;
            // the WAL is folded back every 64 pages (256 KB) and cut back to 256 KB after.
            try db.execute(
                sql:
                    "PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; PRAGMA wal_autocheckpoint = 64; PRAGMA journal_size_limit = 262144"
            )
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        // WAL: `ribbitd log` reads while the daemon writes, and a commit is one append.
        _ = try database.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode = WAL") }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE day (
                        date TEXT PRIMARY KEY NOT NULL, bypassedSeconds REAL NOT NULL DEFAULT 0, pausedSeconds REAL NOT NULL DEFAULT 0,
                        noiseReductionSeconds REAL NOT NULL DEFAULT 0, programSwitches INTEGER NOT NULL DEFAULT 0,
                        volumeChanges INTEGER NOT NULL DEFAULT 0, xruns INTEGER NOT NULL DEFAULT 0, starts INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    CREATE TABLE program (
                        date TEXT NOT NULL, program TEXT NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (date, program)
                    ) WITHOUT ROWID;
                    CREATE TABLE level (
                        date TEXT NOT NULL, bin INTEGER NOT NULL, seconds INTEGER NOT NULL, PRIMARY KEY (date, bin)
                    ) WITHOUT ROWID;
                    """)
        }
        try migrator.migrate(database)
    }

    /// Opens the log, or, when the file is damaged, moves it aside (`wearlog.sqlite.damaged-STAMP`)
    /// and starts a new one; `recovery` says so in one line (nil when sound). A log is worth less
    /// than the hearing aid: the daemon runs on either way.
    public static func openRecovering(path: String, busySeconds: Double = 5, now: Date = Date()) throws -> (
        log: WearLog, recovery: String?
    ) {
        let problem: String
        do {
            let log = try WearLog(path: path, busySeconds: busySeconds)
            let check = try log.database.read { try String.fetchOne($0, sql: "PRAGMA quick_check") ?? "no answer" }
            if check == "ok" { return (log, nil) }
            problem = "is damaged (SQLite finds: \(check.prefix(120)))"
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
            problem = "is damaged (\(error.message ?? "SQLite error \(error.resultCode.rawValue)"))"
        }
        let aside = try PrescriptionStore.moveAside(path, now: now)
        return (
            try WearLog(path: path, busySeconds: busySeconds),
            "the data log \(path) \(problem); it was moved to \(aside) and a new log was started"
        )
    }

    // MARK: Writing

    /// Adds the tallies to their days, all in one transaction: every count lands, or none.
    public func add(_ days: [Day]) throws {
        let days = days.filter { !$0.isEmpty }
        guard !days.isEmpty else { return }
        try database.write { db in
            for day in days {
                try db.execute(
                    sql: """
                        INSERT INTO day (date, bypassedSeconds, pausedSeconds, noiseReductionSeconds, programSwitches, volumeChanges, xruns, starts)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (date) DO UPDATE SET
                            bypassedSeconds = bypassedSeconds + excluded.bypassedSeconds, pausedSeconds = pausedSeconds + excluded.pausedSeconds,
                            noiseReductionSeconds = noiseReductionSeconds + excluded.noiseReductionSeconds,
                            programSwitches = programSwitches + excluded.programSwitches, volumeChanges = volumeChanges + excluded.volumeChanges,
                            xruns = xruns + excluded.xruns, starts = starts + excluded.starts
                        """,
                    arguments: [
                        day.date, day.bypassedSeconds, day.pausedSeconds, day.noiseReductionSeconds, day.programSwitches, day.volumeChanges,
                        day.xruns, day.starts,
                    ])
                for (program, seconds) in day.processingSeconds where seconds > 0 {
                    try db.execute(
                        sql: "INSERT INTO program VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET seconds = seconds + excluded.seconds",
                        arguments: [day.date, program, seconds])
                }
                for (bin, seconds) in day.levelSeconds where seconds > 0 {
                    try db.execute(
                        sql: "INSERT INTO level VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET seconds = seconds + excluded.seconds",
                        arguments: [day.date, bin, seconds])
                }
            }
        }
    }

    /// Erases every day (the rows' bytes are overwritten, the WAL emptied).
    public func erase() throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM day; DELETE FROM program; DELETE FROM level")
        }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    // MARK: Reading

    /// The days from `since` (YYYY-MM-DD, inclusive; nil: all), oldest first.
    public func days(since: String? = nil) throws -> [Day] {
        let from = since ?? ""
        return try database.read { db in
            var days: [String: Day] = [:]
            func day(_ date: String) -> Day { days[date] ?? Day(date: date) }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM day WHERE date >= ?", arguments: [from]) {
                var d = day(row["date"])
                d.bypassedSeconds = row["bypassedSeconds"]
                d.pausedSeconds = row["pausedSeconds"]
                d.noiseReductionSeconds = row["noiseReductionSeconds"]
                d.programSwitches = row["programSwitches"]
                d.volumeChanges = row["volumeChanges"]
                d.xruns = row["xruns"]
                d.starts = row["starts"]
                days[d.date] = d
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM program WHERE date >= ?", arguments: [from]) {
                var d = day(row["date"])
                d.processingSeconds[row["program"]] = row["seconds"]
                days[d.date] = d
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM level WHERE date >= ?", arguments: [from]) {
                var d = day(row["date"])
                d.levelSeconds[row["bin"]] = row["seconds"]
                days[d.date] = d
            }
            return days.values.sorted { $0.date < $1.date }
        }
    }

    /// The days logged in a data directory from `since` on, oldest first; [] when there is no
    /// log (the file is not created). For readers other than the daemon (`verify`'s report).
    public static func days(dataDirectory: String, since: String? = nil) throws -> [Day] {
        let path = path(dataDirectory: dataDirectory)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        return try WearLog(path: path).days(since: since)
    }

    /// SQLite's own consistency check ("ok" when sound).
    public func integrityCheck() throws -> String {
        try database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "no answer" }
    }

    /// The local date of a moment, YYYY-MM-DD (the day a count belongs to).
    public static func date(of moment: Date, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: moment)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

extension WearLog {
    /// What the daemon gathers between flushes, a pure value: the time in each mode and
    /// program, the 1-s input levels (each the power average of the ~10 levels the audio
    /// process sends per second) and the events, by day.
    public struct Tally: Sendable {
        public private(set) var days: [String: Day] = [:]
        /// The open 1-s level window: when it started (monotonic seconds), the sum of the
        /// powers and how many levels.
        private var window: (start: Double, power: Double, count: Int)?

        public init() {}

        /// What plays during a stretch of time.
        public enum Mode: Sendable, Equatable {
            case processing(program: String, noiseReduction: Bool)
            case bypassed, paused
        }

        /// `seconds` spent in `mode` on `date`.
        public mutating func add(seconds: Double, mode: Mode, date: String) {
            guard seconds > 0 else { return }
            update(date) { day in
                switch mode {
                case .processing(let program, let noiseReduction):
                    day.processingSeconds[program, default: 0] += seconds
                    if noiseReduction { day.noiseReductionSeconds += seconds }
                case .bypassed: day.bypassedSeconds += seconds
                case .paused: day.pausedSeconds += seconds
                }
            }
        }

        /// One input level (dB SPL, ~100 ms) at `now` (monotonic seconds). A window of 1 s
        /// closes at the first level (or `closeLevels`) 1 s after it opened, and its power
        /// average counts one second in its bin.
        public mutating func addLevel(_ levelDBSPL: Double, now: Double, date: String) {
            guard levelDBSPL.isFinite, levelDBSPL > -150 else { return }  // -200: no compressor ran
            closeLevels(now: now, date: date)
            let power = Foundation.pow(10, levelDBSPL / 10)
            if let open = window {
                window = (open.start, open.power + power, open.count + 1)
            } else {
                window = (now, power, 1)
            }
        }

        /// Closes the level window when its second is over (or, with `force`, now).
        public mutating func closeLevels(now: Double, date: String, force: Bool = false) {
            guard let open = window, force || now - open.start >= 1 else { return }
            window = nil
            let level = 10 * Foundation.log10(open.power / Double(open.count))
            update(date) { $0.levelSeconds[WearLog.bin(levelDBSPL: level), default: 0] += 1 }
        }

        public mutating func count(date: String, programSwitches: Int = 0, volumeChanges: Int = 0, xruns: Int = 0, starts: Int = 0) {
            update(date) { day in
                day.programSwitches += programSwitches
                day.volumeChanges += volumeChanges
                day.xruns += max(0, xruns)
                day.starts += starts
            }
        }

        /// The days gathered so far, oldest first; the tally starts empty again (the open level
        /// window stays open).
        public mutating func take() -> [Day] {
            defer { days = [:] }
            return days.values.sorted { $0.date < $1.date }
        }

        /// Puts back days a flush could not write, to try again at the next one.
        public mutating func putBack(_ unwritten: [Day]) {
            for day in unwritten { update(day.date) { $0.add(day) } }
        }

        private mutating func update(_ date: String, _ change: (inout Day) -> Void) {
            var day = days[date] ?? Day(date: date)
            change(&day)
            days[date] = day
        }
    }
}
