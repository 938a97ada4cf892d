import Synchronization
import Testing

@testable import RibbitRealtime

/// Counts live instances, so a test sees which side dropped a config.
final class Tracked: Sendable {
    static let alive = Atomic<Int>(0)
    let value: Int
    init(_ value: Int) {
        self.value = value
        Self.alive.add(1, ordering: .relaxed)
    }
    deinit { Self.alive.subtract(1, ordering: .relaxed) }
}

@Suite(.serialized) struct ConfigSlotTests {
    @Test func aPublishedConfigIsTakenRetiredAndCollectedOnTheControlSide() {
        let before = Tracked.alive.load(ordering: .relaxed)
        do {
            let slot = ConfigSlot(Tracked(1))
            let (pending, none) = (slot.hasPending, slot.take())
            #expect(!pending && none == nil)
            slot.publish(Tracked(2))
            let (pending2, canTake) = (slot.hasPending, slot.canTake())
            #expect(pending2 && canTake)
            let old = slot.take()!
            let current = slot.current().takeUnretainedValue().value
            #expect(old.takeUnretainedValue().value == 1 && current == 2)
            slot.retire(old)
            // The audio side never drops a config: the retired one lives until collected.
            #expect(Tracked.alive.load(ordering: .relaxed) == before + 2)
            let collected = slot.collect()
            #expect(collected)
            #expect(Tracked.alive.load(ordering: .relaxed) == before + 1)
            let again = slot.collect()
            #expect(!again)
        }
        #expect(Tracked.alive.load(ordering: .relaxed) == before)
    }

    @Test func aNewConfigWaitsWhileTheRetireSlotIsFullAndAnUntakenOneIsReplaced() {
        let slot = ConfigSlot(Tracked(1))
        slot.publish(Tracked(2))
        slot.retire(slot.take()!)
        slot.publish(Tracked(3))  // collects 1
        slot.publish(Tracked(4))  // replaces 3, never taken
        let current = slot.current().takeUnretainedValue().value
        #expect(current == 2)
        let old = slot.take()!
        let now = slot.current().takeUnretainedValue().value
        #expect(old.takeUnretainedValue().value == 2 && now == 4)
        slot.retire(old)
        slot.publish(Tracked(5))
        slot.retire(Unmanaged.passRetained(Tracked(99)))  // the retire slot is full: 5 must wait
        let (canTake, taken) = (slot.canTake(), slot.take())
        #expect(!canTake && taken == nil)
        let collected = slot.collect()
        #expect(collected)
        let last = slot.take()!.takeUnretainedValue().value
        #expect(last == 4)
    }
}

@Suite struct SeqlockSnapshotTests {
    struct Pair: BitwiseCopyable, Equatable {
        var a = 0
        var b = 0
    }

    final class Shared: Sendable {
        let snapshot = SeqlockSnapshot(Pair())
    }

    /// A reader never sees half of a write: a == b in every copy, while a writer thread races.
    @Test func readersSeeWholeValues() async {
        let shared = Shared()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for i in 1...200_000 { shared.snapshot.write(Pair(a: i, b: i)) }
            }
            group.addTask {
                for _ in 0..<200_000 {
                    let p = shared.snapshot.read()
                    if p.a != p.b { Issue.record("torn read \(p)") }
                }
            }
        }
        #expect(shared.snapshot.read() == Pair(a: 200_000, b: 200_000))
    }
}
