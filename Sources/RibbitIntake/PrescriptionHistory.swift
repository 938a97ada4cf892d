import Foundation
import RibbitStore

/// The history side of `load` and `use`: the one transaction the daemon and the CLI's offline
/// paths share. Every entry it hands out has been checked once (`Intake.Accepted`).
public struct PrescriptionHistory: Sendable {
    public let store: PrescriptionStore
    public let intake: Intake

    public init(store: PrescriptionStore, intake: Intake) {
        self.store = store
        self.intake = intake
    }

    /// A history entry and what its text holds.
    public struct Entry: Sendable {
        public let record: PrescriptionStore.Record
        public let accepted: Intake.Accepted
        public var id: Int64 { record.id ?? 0 }
        /// "Name (environment)".
        public var title: String { "\(accepted.prescription.name) (\(accepted.prescription.environment))" }
    }

    /// Stores an accepted prescription as the active one; with `trialUntil`, as a trial that
    /// goes back to the current one then.
    public func add(_ accepted: Intake.Accepted, source: String, trialUntil: Date? = nil) throws(IntakeError) -> Entry {
        do {
            return Entry(record: try store.add(accepted.record(source: source), trialUntil: trialUntil), accepted: accepted)
        } catch {
            throw IntakeError("cannot store the prescription in \(store.path) (\(error))", kind: .storage)
        }
    }

    /// The entry `use` means: by id or name, or the newest for an environment; checked.
    public func find(selector: String?, environment: String?) throws(IntakeError) -> Entry {
        let found: PrescriptionStore.Record?
        do { found = try environment.map { try store.newest(environment: $0) } ?? selector.flatMap { try store.find($0) } } catch {
            throw IntakeError("cannot read the prescription history \(store.path) (\(error))", kind: .storage)
        }
        guard let record = found, record.id != nil else {
            let what = environment.map { "for the environment '\($0)'" } ?? "'\(selector ?? "")' in the history"
            throw IntakeError("no prescription \(what); `ribbitd list` shows them")
        }
        return try check(record)
    }

    /// Makes an entry the active one.
    public func activate(_ entry: Entry) throws(IntakeError) {
        do { try store.activate(id: entry.id) } catch { throw IntakeError("\(error)", kind: .storage) }
    }

    /// A stored entry's text, verified against its checksum, parsed and judged again (keys
    /// trusted since it was stored count; a damaged entry is refused).
    public func check(_ record: PrescriptionStore.Record) throws(IntakeError) -> Entry {
        let payload: String
        do { payload = try record.intactPayload() } catch { throw IntakeError(error.description) }
        return Entry(record: record, accepted: try intake.check(payload, source: "history entry \(record.id ?? 0)"))
    }
}
