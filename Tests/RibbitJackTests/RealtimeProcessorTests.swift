import Glibc
import Synchronization
import Testing

@testable import RibbitDSP
@testable import RibbitJack

/// A tone generator, as a hearing test would run it: here deliberately too loud, with a NaN.
final class LoudTone: PeriodRenderer, @unchecked Sendable {
    static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
        Unmanaged<LoudTone>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
    }
    let phase = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    init() { phase.initialize(to: 0) }
    deinit { phase.deallocate() }
    func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, mix: Bool
    ) {
        for i in 0..<frameCount {
            let n = phase.pointee + i
            let x: Float = n == 100 ? .nan : 4 * sinf(Float(n) * 0.05)
            for c in 0..<2 { outputs[c][i] = mix ? outputs[c][i] + x : x }
        }
        phase.pointee += frameCount
    }
    func latencyFrames(period: Int) -> Int { 0 }
}

/// A microphone tap, as voice exercises would run it beside the hearing aid: it only listens.
final class Tap: PeriodRenderer, @unchecked Sendable {
    static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
        Unmanaged<Tap>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
    }
    let heard = Atomic<Int>(0)
    let peakBits = Atomic<UInt32>(0)
    func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, mix: Bool
    ) {
        var peak = Float(bitPattern: peakBits.load(ordering: .relaxed))
        for i in 0..<frameCount { peak = max(peak, abs(inputs[0][i])) }
        peakBits.store(peak.bitPattern, ordering: .relaxed)
        heard.add(frameCount, ordering: .relaxed)
    }
    func latencyFrames(period: Int) -> Int { 0 }
}

/// Whatever a broken generator could write: full scale, DC beyond it, NaN and both infinities.
final class HostileTone: PeriodRenderer, @unchecked Sendable {
    static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
        Unmanaged<HostileTone>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
    }
    static let values: [Float] = [1, -1, 4, -4, .nan, .infinity, -.infinity, 3e38]
    let phase = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    init() { phase.initialize(to: 0) }
    deinit { phase.deallocate() }
    func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, mix: Bool
    ) {
        // Each value held for 64 frames (DC), in turn.
        for i in 0..<frameCount {
            let x = Self.values[(phase.pointee + i) / 64 % Self.values.count]
            for c in 0..<2 { outputs[c][i] = mix ? outputs[c][i] + x : x }
        }
        phase.pointee += frameCount
    }
    func latencyFrames(period: Int) -> Int { 0 }
}

@Suite struct RealtimeProcessorTests {
    let geometry = EngineGeometry.standard(sampleRate: 48000)

    func processor(ceilingDBFS: Double = -1) throws -> RealtimeProcessor {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: ceilingDBFS)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        return RealtimeProcessor(engine: engine, period: 64)
    }

    /// Runs `periods` periods of `input` (both ears) and returns the left output.
    func run(_ p: RealtimeProcessor, periods: Int, input: (Int) -> Float) -> [Float] {
        var output = [Float]()
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 64) }
        defer { buffers.forEach { $0.deallocate() } }
        for k in 0..<periods {
            for i in 0..<64 { buffers[0][i] = input(k * 64 + i); buffers[1][i] = input(k * 64 + i) }
            p.render(inLeft: buffers[0], inRight: buffers[1], outLeft: buffers[2], outRight: buffers[3], frameCount: 64)
            output += UnsafeBufferPointer(start: buffers[2], count: 64)
        }
        return output
    }

    @Test func theHearingAidRunsByDefaultAtItsLatency() throws {
        let p = try processor()
        let out = run(p, periods: 20) { $0 == 100 ? 0.5 : 0 }
        #expect(out[100 + 96] == 0.5)
        #expect(p.latencyFrames == 96)
        #expect(p.guardedSamples.load(ordering: .relaxed) == 0)
    }

    /// Instead of the hearing aid: a renderer that plays 4x full scale and a NaN comes out
    /// under the output ceiling, and the NaN as silence.
    @Test func aToneInsteadOfTheHearingAidStaysUnderTheCeiling() throws {
        let p = try processor(ceilingDBFS: -6)
        p.run([LoudTone()])
        let out = run(p, periods: 20) { _ in 0 }
        let ceiling = powf(10, -6.0 / 20)
        #expect(out.allSatisfy { $0.isFinite && abs($0) <= ceiling })
        #expect(out[100] == 0)
        #expect(out.map(abs).max()! == ceiling)
        #expect(p.guardedSamples.load(ordering: .relaxed) > 0)
        #expect(p.latencyFrames == 0)
        p.collectRetired()
    }

    /// Beside the hearing aid: a tap hears every input frame and the hearing aid's output is
    /// unchanged; a tone beside it is mixed in, still under the ceiling.
    @Test func aTapAndAToneBesideTheHearingAid() throws {
        let p = try processor()
        let tap = Tap()
        p.run([p.hearingAid, tap])
        let out = run(p, periods: 20) { $0 == 100 ? 0.5 : 0 }
        #expect(out[100 + 96] == 0.5)
        #expect(tap.heard.load(ordering: .relaxed) == 20 * 64)
        #expect(Float(bitPattern: tap.peakBits.load(ordering: .relaxed)) == 0.5)
        #expect(p.latencyFrames == 96)

        p.run([p.hearingAid, LoudTone()])
        let mixed = run(p, periods: 20) { _ in 0.9 }
        // The fitting's ceiling (-1 dBFS) holds the sum: the guard's ceiling is the filters'.
        let ceiling = powf(10, -1.0 / 20)
        #expect(mixed.allSatisfy { $0.isFinite && abs($0) <= ceiling })
        #expect(mixed.contains { abs($0) == ceiling })
    }

    @Test func pauseStillRampsWhateverRenders() throws {
        let p = try processor()
        p.run([LoudTone()])
        p.paused.store(true, ordering: .relaxed)
        let out = run(p, periods: 20) { _ in 0 }
        #expect(out[(out.count - 64)...].allSatisfy { $0 == 0 })
    }

    /// The guard's ceiling is the filter set's, at the start and with every new set: a tone in
    /// place of the hearing aid is held under the ceiling of the fitting that was published last.
    @Test func theGuardFollowsTheFiltersCeiling() throws {
        let p = try processor(ceilingDBFS: -1)
        #expect(abs(p.outputCeilingDBFS - -1) < 1e-5)
        p.run([LoudTone()])
        try p.publish(FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: -12))
        #expect(abs(p.outputCeilingDBFS - -12) < 1e-5)
        let out = run(p, periods: 8) { _ in 0 }
        #expect(out.map(abs).max()! == powf(10, -12.0 / 20))
        try p.publish(FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: 3))
        #expect(p.outputCeilingDBFS == 0)  // never above full scale
        p.collectRetired()
    }

    /// The output guard against a generator writing full scale, DC at 4x full scale, NaN, +-Inf
    /// and 3e38, alone and beside the hearing aid fed full-scale DC: never above the ceiling,
    /// NaN and infinities as silence.
    @Test func theGuardHoldsForFullScaleDCNaNAndInfinity() throws {
        let p = try processor(ceilingDBFS: -20)
        let ceiling = powf(10, -20.0 / 20)
        for renderers in [[HostileTone()], [p.hearingAid, HostileTone()]] as [[any PeriodRenderer]] {
            p.run(renderers)
            let out = run(p, periods: 32) { _ in 1 }
            #expect(out.allSatisfy { $0.isFinite && abs($0) <= ceiling })
            #expect(out.contains { $0 == ceiling } && out.contains { $0 == -ceiling })
            p.collectRetired()
        }
        p.run([HostileTone()])
        let alone = run(p, periods: 8) { _ in 0 }
        // Frames 256..<448 are NaN, +Inf, -Inf: silence.
        #expect(alone[(4 * 64)..<(7 * 64)].allSatisfy { $0 == 0 })
    }
}
