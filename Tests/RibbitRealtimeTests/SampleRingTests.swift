import Testing

@testable import RibbitRealtime

/// The dump's ring between the RT thread and the control thread: frames come out in order and
/// whole across the wrap, a full ring drops (and counts) instead of waiting, and discard()
/// forgets what a listener that arrives late would otherwise see.
@Suite struct SampleRingTests {
    /// Writes `count` frames whose channel c holds start + i + 1000 c.
    func write(_ ring: SampleRing, start: Int, count: Int) {
        let channels = (0..<SampleRing.channels).map { c in (0..<count).map { Float(start + $0 + 1000 * c) } }
        channels[0].withUnsafeBufferPointer { c0 in
            channels[1].withUnsafeBufferPointer { c1 in
                channels[2].withUnsafeBufferPointer { c2 in
                    channels[3].withUnsafeBufferPointer { c3 in
                        ring.write(c0.baseAddress!, c1.baseAddress!, c2.baseAddress!, c3.baseAddress!, count: count)
                    }
                }
            }
        }
    }

    func drain(_ ring: SampleRing) -> [[Float]] {
        var out = [[Float]](repeating: [], count: SampleRing.channels)
        ring.drain(into: &out)
        return out
    }

    @Test func framesComeOutInOrderAcrossTheWrap() {
        let ring = SampleRing(capacity: 100)
        var next = 0
        for block in [64, 30, 64, 7, 64, 99, 1] {  // wraps several times
            write(ring, start: next, count: block)
            let out = drain(ring)
            for c in 0..<SampleRing.channels {
                #expect(out[c] == (0..<block).map { Float(next + $0 + 1000 * c) })
            }
            next += block
        }
        #expect(ring.dropped.load(ordering: .relaxed) == 0)
    }

    @Test func aFullRingDropsWholeBlocksAndCountsThem() {
        let ring = SampleRing(capacity: 100)
        write(ring, start: 0, count: 64)
        write(ring, start: 64, count: 64)  // 128 > 100: dropped whole, not cut
        write(ring, start: 128, count: 36)  // exactly fills it
        #expect(ring.dropped.load(ordering: .relaxed) == 64)
        let out = drain(ring)
        #expect(out[0] == (0..<64).map(Float.init) + (128..<164).map(Float.init))
        #expect(drain(ring)[0].isEmpty)
    }

    @Test func discardForgetsWhatWaits() {
        let ring = SampleRing(capacity: 100)
        write(ring, start: 0, count: 50)
        ring.discard()
        write(ring, start: 50, count: 10)
        #expect(drain(ring)[3] == (50..<60).map { Float($0 + 3000) })
    }
}
