import Foundation
import GRDB
import Glibc

extension PrescriptionStore {
    /// Opens the history, or, when the file is damaged or empty, moves it aside
    /// (`ribbit.sqlite.damaged-YYYYMMDD-HHMMSS`, with its journal), starts a new history and
    /// takes the last active prescription back from its copy (`last-active.json`), so the
    /// wearer keeps their sound and nothing is deleted. `recovery` says what happened, in one
    /// line for the log, `status` and the CLI; nil when the history was sound.
    ///
    /// Any other failure (no permission, a full disk) is thrown: moving the file would not help.
    ///
    /// `readOnly` (its directory cannot be written): opened as it is, read-only; a damaged file
    /// cannot be moved aside then, so it is thrown as damaged.
    public static func openRecovering(
        path: String, now: Date = Date(), readOnly: Bool = false, copyWrites: DeferredWrite? = nil
    ) throws -> (store: PrescriptionStore, recovery: String?) {
        if readOnly {
            let store = try PrescriptionStore(path: path, readOnly: true)
            let check = try store.quickCheck()
            guard check == "ok" else { throw StoreError("\(path) is damaged (SQLite finds: \(check.prefix(120)))") }
            return (store, nil)
        }
        var problem = "was empty (0 bytes)"
        var info = stat()
        if lstat(path, &info) != 0 || info.st_size > 0 || info.st_mode & S_IFMT != S_IFREG {
            do {
                let store = try PrescriptionStore(path: path, copyWrites: copyWrites)
                let check = try store.quickCheck()
                if check == "ok" { return (store, nil) }
                problem = "is damaged (SQLite finds: \(check.prefix(120)))"
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
                problem = "is damaged (\(error.message ?? "SQLite error \(error.resultCode.rawValue)"))"
            }
        }
        let aside = try moveAside(path, now: now)
        let store = try PrescriptionStore(path: path, copyWrites: copyWrites)
        var recovery = "the prescription history \(path) \(problem); it was moved to \(aside) and a new history was started"
        if var copy = activeCopy(databasePath: path) {
            copy.id = nil
            copy.source += " (recovered from last-active.json)"
            try store.add(copy)
            recovery += "; the last active prescription, \(copy.name), was taken back from its copy"
        }
        return (store, recovery)
    }

    /// SQLite's quick consistency check ("ok" when sound); fast on a history's few pages.
    func quickCheck() throws -> String {
        try database.read { try String.fetchOne($0, sql: "PRAGMA quick_check") ?? "no answer" }
    }

    /// Renames the database and its journal files to `PATH.damaged-STAMP` (a free name).
    static func moveAside(_ path: String, now: Date) throws(StoreError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        var aside = "\(path).damaged-\(formatter.string(from: now))"
        var number = 1
        while access(aside, F_OK) == 0 {
            number += 1
            aside = "\(path).damaged-\(formatter.string(from: now))-\(number)"
        }
        for suffix in ["", "-journal", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, aside + suffix) == 0 else {
                throw StoreError("cannot move the damaged history \(path + suffix) aside: \(String(cString: strerror(errno)))")
            }
        }
        return aside
    }
}
