import Foundation
import GRDB
import RibbitAudiometry
import RibbitStore
import RibbitTestSupport
import Testing

/// Hearing tests in the history's own file: round trip, newest first, a missing id, damage, and
/// the prescription history left as it was whichever store opens the file first.
@Suite struct HearingTestStoreTests {
    let path: String
    init() throws { path = try TestPaths.temporaryDirectory().appendingPathComponent("ribbit.sqlite").path }

    func prescription(_ name: String) -> PrescriptionStore.Record {
        .init(
            name: name, environment: "quiet", audiologist: nil, source: "test", payload: "RIBBIT-RX 1\nname: \(name)\n",
            signature: "unsigned",
            signer: nil)
    }

    @Test func savesAndReadsBackNewestFirstWithIds() throws {
        let store = try HearingTestStore(path: path)
        let older = HearingTestRecords.reliable(seed: 3, date: "2026-11-20T09:00:00Z")
        let newer = HearingTestRecords.unreliable()
        let olderID = try store.save(older)
        let newerID = try store.save(newer)
        #expect(olderID == 1 && newerID == 2)
        // Newest by date, not by id: the unreliable one is dated 2026-11-23.
        let all = try store.all()
        #expect(all.map(\.id) == [newerID, olderID])
        var expected = older
        expected.id = olderID
        #expect(try store.find(id: olderID) == expected)
        #expect(all[1] == expected)
        #expect(all[0].result.flags.contains(.falseAlarms))
        // The columns a query can use.
        let queue = try DatabaseQueue(path: path)
        let row = try queue.read { try Row.fetchOne($0, sql: "SELECT date, transducer, flags FROM hearing_tests WHERE id = 2") }
        #expect(row?["transducer"] == "consumer")
        #expect((row?["flags"] as String?)?.contains("false-alarms") == true)
    }

    @Test func aMissingIdIsOneLineNamingTheList() throws {
        let store = try HearingTestStore(path: path)
        do {
            _ = try store.find(id: 7)
            Issue.record("found a test that is not there")
        } catch {
            let text = "\(error)"
            #expect(text == "no hearing test 7 is stored; `ribbitd audiogram list` shows them")
            #expect(!text.contains("\n"))
        }
    }

    @Test func damageIsCaughtByTheChecksum() throws {
        let store = try HearingTestStore(path: path)
        let id = try store.save(HearingTestRecords.reliable())
        let queue = try DatabaseQueue(path: path)
        try queue.write {
            try $0.execute(
                sql: "UPDATE hearing_tests SET record = replace(record, '\"presentations\":', '\"presentations\": ') WHERE id = ?",
                arguments: [id])
        }
        #expect { try store.find(id: id) } throws: { "\($0)".contains("is damaged") }
    }

    /// Either order, and with the prescription store open meanwhile (as a running daemon holds it).
    @Test func thePrescriptionHistoryStaysIntact() throws {
        let history = try PrescriptionStore(path: path)
        let a = try history.add(prescription("A"))
        let b = try history.add(prescription("B"), trialUntil: Date().addingTimeInterval(600))
        let before = (try history.all(), try history.activeID(), try history.trial())
        let tests = try HearingTestStore(path: path)
        try tests.save(HearingTestRecords.reliable())
        #expect(try history.all() == before.0 && history.activeID() == before.1 && history.trial() == before.2)
        #expect(try history.activeID() == b.id && history.trial()?.previousID == a.id)
        // Reopened both ways: each migration runs once, nothing is lost.
        let again = try PrescriptionStore(path: path)
        #expect(try again.all() == before.0 && again.integrityCheck() == "ok")
        #expect(try HearingTestStore(path: path).all().count == 1)

        let fresh = try TestPaths.temporaryDirectory().appendingPathComponent("ribbit.sqlite").path
        try HearingTestStore(path: fresh).save(HearingTestRecords.reliable())
        let later = try PrescriptionStore(path: fresh)
        try later.add(prescription("C"))
        #expect(try later.all().map(\.name) == ["C"] && HearingTestStore(path: fresh).all().count == 1)
        // Recovery's check passes with the new table: nothing is moved aside.
        #expect(try PrescriptionStore.openRecovering(path: fresh).recovery == nil)
    }
}
