import RibbitAudiometry
import RibbitStore

/// Finished hearing tests, kept in the history's SQLite file (`ribbitd audiogram list`). Opened
/// when the first result is saved, so a daemon that never runs a test never touches the table.
final class HearingTestRecords {
    private let path: String
    private var store: HearingTestStore?

    init(path: String) { self.path = path }

    func save(_ record: HearingTestRecord) throws -> Int64 {
        if store == nil { store = try HearingTestStore(path: path) }
        return try store!.save(record)
    }
}
