import Foundation
import RibbitStore
import RibbitTestSupport
import Testing

@Suite struct StoreTests {
    func record(_ name: String, env: String = "quiet") -> PrescriptionStore.Record {
        .init(
            name: name, environment: env, audiologist: nil, source: "test", payload: "RIBBIT-RX 1\nname: \(name)\n", signature: "unsigned",
            signer: nil)
    }

    func store() throws -> PrescriptionStore {
        try PrescriptionStore(path: try TestPaths.temporaryDirectory().appendingPathComponent("ribbit.sqlite").path)
    }

    @Test func addActivatesAndUseSwitches() throws {
        let store = try store()
        #expect(try store.active() == nil)
        let a = try store.add(record("A"))
        let b = try store.add(record("B", env: "noisy"))
        #expect(try store.activeID() == b.id)
        try store.activate(id: a.id!)
        #expect(try store.active()?.name == "A")
        #expect(try store.find("B")?.id == b.id)
        #expect(try store.find("\(a.id!)")?.name == "A")
        #expect(try store.newest(environment: "noisy")?.name == "B")
        #expect(throws: StoreError.self) { try store.activate(id: 99) }
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func trialsRevertToTheOriginalAndKeepEndsThem() throws {
        let store = try store()
        let a = try store.add(record("A"))
        let t1 = try store.add(record("T1"), trialUntil: Date().addingTimeInterval(60))
        #expect(try store.trial()?.previousID == a.id)
        _ = try store.add(record("T2"), trialUntil: Date().addingTimeInterval(60))
        #expect(try store.trial()?.previousID == a.id)  // not T1
        #expect(try store.endTrial(keep: false)?.name == "A")
        #expect(try store.trial() == nil)
        _ = try store.add(record("T3"), trialUntil: Date().addingTimeInterval(60))
        #expect(try store.endTrial(keep: true)?.name == "T3")
        #expect(throws: StoreError.self) { try store.endTrial(keep: true) }
        _ = t1
    }

    @Test func removeRefusesTheActiveAndTheTrialsReturn() throws {
        let store = try store()
        let a = try store.add(record("A"))
        let b = try store.add(record("B"), trialUntil: Date().addingTimeInterval(60))
        #expect(throws: StoreError.self) { try store.remove(id: b.id!) }
        #expect(throws: StoreError.self) { try store.remove(id: a.id!) }
        try store.endTrial(keep: true)
        try store.remove(id: a.id!)
        #expect(try store.all().map(\.name) == ["B"])
    }
}
