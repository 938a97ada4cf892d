import Testing

@testable import RibbitRealtime

/// The block <-> hop buffering: its delay is H - gcd(B, H) for a steady block size B (H - 1 for
/// any size), the smallest that never runs dry, and a size change keeps the stream.
@Suite struct BlockHopAdapterTests {
    /// Runs `input` through an adapter whose hop is the identity (each hop's output is its
    /// input), in the given block sizes; returns the output and the frames that were not ready.
    func run(_ input: [Float], hop: Int, promised: Int?, blocks: (Int) -> Int) -> (output: [Float], underruns: Int) {
        let adapter = BlockHopAdapter(hopSize: hop, channelCount: 1, blockSize: promised)
        let gathered = UnsafeMutablePointer<Float>.allocate(capacity: hop)
        let out = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: input.count)
        defer { gathered.deallocate(); out.deallocate(); buffer.deallocate() }
        out[0] = buffer
        var done = 0, call = 0, underruns = 0
        while done < input.count {
            let block = min(blocks(call), input.count - done)
            var at = 0
            while at < block {
                let n = adapter.inputFrames(available: block - at)
                let offset = adapter.inputOffset()
                for i in 0..<n { gathered[offset + i] = input[done + at + i] }
                if adapter.addInput(n) {
                    adapter.queueHop(channel: 0, from: gathered)
                    adapter.commitHop()
                }
                underruns += adapter.readOutput(into: UnsafePointer(out), at: done + at, count: n)
                at += n
            }
            done += block
            call += 1
        }
        return (Array(UnsafeBufferPointer(start: buffer, count: input.count)), underruns)
    }

    /// The largest value (t + B) mod H takes over block starts t = kB: the lag a steady host needs.
    func bruteForceLag(hop: Int, block: Int) -> Int {
        (0..<(hop * block)).map { k in (k * block) % hop == 0 ? 0 : hop - (k * block) % hop }.max()!
    }

    @Test(arguments: [(64, 64), (64, 128), (64, 32), (64, 100), (64, 37), (64, 1), (64, 4096), (128, 96), (32, 48)])
    func aSteadyBlockSizeIsDelayedByHopMinusGcd(hop: Int, block: Int) {
        let delay = BlockHopAdapter.bufferingDelayFrames(hopSize: hop, blockSize: block)
        #expect(delay == hop - gcd(block, hop))
        #expect(delay == bruteForceLag(hop: hop, block: block))
        let input = (0..<(block * max(2 * hop, 40))).map { Float($0 + 1) }  // whole blocks
        let (output, underruns) = run(input, hop: hop, promised: block) { _ in block }
        #expect(underruns == 0)
        let exact = output == [Float](repeating: 0, count: delay) + input.dropLast(delay)
        #expect(
            exact,
            "first difference at \(zip(output, [Float](repeating: 0, count: delay) + input).enumerated().first { $1.0 != $1.1 }?.offset ?? -1)"
        )
    }

    @Test func anySizePerCallIsDelayedByHopMinusOne() {
        let hop = 64
        #expect(BlockHopAdapter.bufferingDelayFrames(hopSize: hop, blockSize: nil) == hop - 1)
        let input = (0..<20000).map { Float($0 + 1) }
        let sizes = [1, 7, 63, 64, 65, 500, 3, 129]
        let (output, underruns) = run(input, hop: hop, promised: nil) { sizes[$0 % sizes.count] }
        #expect(underruns == 0)
        let exact = output == [Float](repeating: 0, count: hop - 1) + input.dropLast(hop - 1)
        #expect(exact)
    }

    /// A host that breaks its promise gets silence for what was not ready, counted, once.
    @Test func aBrokenPromiseUnderrunsOnceAndIsCounted() {
        let input = (0..<4000).map { Float($0 + 1) }
        let (output, underruns) = run(input, hop: 64, promised: 64) { $0 == 20 ? 100 : 64 }
        #expect(underruns == 36)
        #expect(output[3000] == input[3000 - 36])
    }

    @Test(arguments: [(64, 100), (100, 64), (64, 37), (37, 256)])
    func adoptingABlockSizeKeepsTheStreamAtTheNewDelay(from: Int, to: Int) {
        let hop = 64
        let adapter = BlockHopAdapter(hopSize: hop, channelCount: 1, blockSize: from)
        let before = adapter.bufferingDelayFrames
        #expect(before == hop - gcd(from, hop))
        // Gather some input first so the change happens mid-hop.
        _ = adapter.addInput(min(from % hop, hop - 1))
        if adapter.inputToFlush(beforeAdopting: to) > 0 {
            adapter.queueHop(channel: 0, from: [Float](repeating: 0, count: hop))
            adapter.commitHop()
            adapter.discardInput()
        }
        adapter.adoptBlockSize(to)
        let (size, after) = (adapter.blockSize, adapter.bufferingDelayFrames)
        #expect(size == to)
        #expect(after == hop - gcd(to, hop))
    }
}
