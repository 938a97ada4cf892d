import Foundation
import RibbitMeasure
import RibbitSignals
import RibbitTestSupport
import Testing

@testable import RibbitDSP

/// Every configuration the engine is documented to run: the default at each rate and the
/// option sets the README's trade-off table lists.
let supportedConfigurations: [(geometry: EngineGeometry, sampleRate: Double)] =
    [44100.0, 48000, 96000].map { (EngineGeometry.standard(sampleRate: $0), $0) } + [
        (EngineGeometry(fftLength: 128, hopSize: 32), 48000),
        (EngineGeometry(fftLength: 512, hopSize: 64), 48000),
        (EngineGeometry(fftLength: 512, hopSize: 128), 48000),
        (EngineGeometry(fftLength: 1024, hopSize: 256), 96000),
    ]

/// A sloping curve like a high-frequency loss: 0 dB up to 500 Hz, 40 dB from 4 kHz.
let slopingCurve = CombinationCurve(
    gain: GainCurve(points: [.init(frequencyHz: 500, gainDB: 0), .init(frequencyHz: 4000, gainDB: 40)]),
    lowpass: LowpassCurve(passHz: 8000))

func designedFilters(
    _ curve: CombinationCurve, _ geometry: EngineGeometry, sampleRate: Double, channels: Int = 1,
    ceilingDBFS: Double = -1
) -> FilterSet {
    let taps = LinearPhaseFIR.design(taps: geometry.filterLength, sampleRate: sampleRate, amplitude: curve.amplitude)
    return FilterSet(taps: Array(repeating: taps, count: channels), fftLength: geometry.fftLength, ceilingDBFS: ceilingDBFS)
}

@Suite struct EngineTests {
    let geometry = EngineGeometry.standard(sampleRate: 48000)

    @Test(arguments: supportedConfigurations.indices)
    func weightsArePartitionsOfUnity(_ index: Int) throws {
        let (geometry, sampleRate) = supportedConfigurations[index]
        try geometry.validate()
        #expect(EngineGeometry.supportedSampleRates.contains(sampleRate))
        // Overlap-save frames start every hop; at each output sample their weights sum to 1.
        let frameWeights = OverlapSaveEngine.frameWeights(geometry)
        let n = geometry.fftLength, hop = geometry.hopSize
        var worst = 0.0
        for t in n..<(n + 4 * hop) {
            var sum = 0.0
            for start in stride(from: 0, through: t, by: hop) where t - start < n { sum += Double(frameWeights[t - start]) }
            worst = max(worst, abs(sum - 1))
        }
        // A filter switch blends the old and new frames with 1 - s and s.
        for w in OverlapSaveEngine.crossfadeWeights(hopSize: hop) {
            worst = max(worst, abs(Double((1 - w) + w) - 1))
            #expect(w >= 0 && w <= 1)
        }
        #expect(worst < 1e-6)
    }

    @Test func nullFilterIsAnExactDelay() throws {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let left = Signals.whiteNoise(count: 48000, rms: 0.1, seed: 1)
        let right = Signals.whiteNoise(count: 48000, rms: 0.1, seed: 2)
        let out = engine.process([left, right])
        #expect(engine.latencyFrames == 96)
        #expect(Reference.residualDB(out[0], Reference.delayed(left, by: engine.latencyFrames)) < -90)
        #expect(Reference.residualDB(out[1], Reference.delayed(right, by: engine.latencyFrames)) < -90)
    }

    @Test(arguments: [nil, 1, 64, 100, 256, 4096] as [Int?])
    func impulsePeakIsAtTheReportedLatency(blockSize: Int?) throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000, ceilingDBFS: 0)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: blockSize)
        let out = engine.process([Signals.impulse(count: 12288, at: 1234, amplitude: 0.001)])[0]
        let peak = out.indices.max { abs(out[$0]) < abs(out[$1]) }!
        #expect(peak - 1234 == engine.latencyFrames)
        #expect(engine.latencyFrames == geometry.latencyFrames(blockSize: blockSize))
        #expect(engine.counters.underrunFrames == 0)
    }

    /// A JACK buffer-size change: the engine keeps streaming and its latency becomes the new
    /// block size's (the impulse lands there), with no frames missing.
    @Test(arguments: [(64, 100), (100, 64), (64, 32), (32, 256), (256, 16), (4096, 64), (100, 37)])
    func blockSizeChangeKeepsTheStreamAtTheNewLatency(from: Int, to: Int) throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000, ceilingDBFS: 0)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: from)
        _ = engine.process([[Float](repeating: 0, count: from * 7)])
        engine.changeBlockSize(to: to)
        #expect(engine.latencyFrames == geometry.latencyFrames(blockSize: to))
        let out = engine.process([Signals.impulse(count: to * (12288 / to), at: 1234, amplitude: 0.001)])[0]
        let peak = out.indices.max { abs(out[$0]) < abs(out[$1]) }!
        #expect(peak - 1234 == engine.latencyFrames)
        #expect(engine.counters.underrunFrames == 0)
    }

    @Test func equalsDirectConvolutionForAnyBlockSizes() throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000, ceilingDBFS: 20)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: nil)
        let x = Signals.whiteNoise(count: 60000, rms: 0.001, seed: 3)
        // Block sizes from 1 to 8192, seeded.
        var random = SeededRandom(seed: 4)
        var out = [Float]()
        var done = 0
        while done < x.count {
            let n = min(
                x.count - done, [1, 7, 63, 64, 65, 500, 8192, Int.random(in: 1...8192, using: &random)].randomElement(using: &random)!)
            out += engine.process([Array(x[done..<done + n])], blockSize: n)[0]
            done += n
        }
        let delay = engine.latencyFrames - geometry.filterDelayFrames
        let expected = Reference.delayed(x, by: delay)
        let reference = Reference.convolve(expected.map(Float.init), filters.taps[0])
        #expect(Reference.residualDB(out, reference) < -100)
        #expect(engine.counters.underrunFrames == 0)
        #expect(engine.counters.limitedSamples == 0)
    }

    @Test func sineThroughASlopeHasNoFrameArtefacts() throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let out = engine.process([Signals.sine(count: 48000, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01)])[0]
        #expect(Tone.thdPlusNoiseDB(out[4800...], frequencyHz: 1000, sampleRate: 48000) <= -60)
    }

    /// The THD+N criterion must catch time aliasing: raw per-bin gains (no filter fitted into
    /// the zero padding) fail it.
    @Test func naivePerBinGainsAliasAndFailTheArtefactTest() throws {
        let window = slopingCurve.window(fftLength: geometry.fftLength, sampleRate: 48000)
        let filters = FilterSet(naiveBinGains: [window], fftLength: geometry.fftLength, ceilingDBFS: -1)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let out = engine.process([Signals.sine(count: 48000, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.01)])[0]
        #expect(Tone.thdPlusNoiseDB(out[4800...], frequencyHz: 1000, sampleRate: 48000) > -60)
    }

    @Test func ceilingHoldsOnFullScaleNoiseThroughFiftyDecibels() throws {
        let loud = CombinationCurve(gain: GainCurve(points: [.init(frequencyHz: 1000, gainDB: 50)]), lowpass: .none)
        for ceilingDBFS in [-1.0, -6, -20] {
            let filters = designedFilters(loud, geometry, sampleRate: 48000, channels: 2, ceilingDBFS: ceilingDBFS)
            let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
            let noise = Signals.uniformNoise(count: 96000, peak: 1, seed: 5)
            let out = engine.process([noise, noise.map { -$0 }])
            let ceiling = Float(pow(10, ceilingDBFS / 20))
            #expect(out.allSatisfy { $0.allSatisfy { abs($0) <= ceiling } })
            #expect(engine.counters.limitedSamples > 0)
        }
    }

    @Test func quietSignalsPassTheLimiterUntouched() throws {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 1, fftLength: geometry.fftLength, ceilingDBFS: -1)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let x = Signals.sine(count: 48000, frequencyHz: 440, sampleRate: 48000, amplitude: 0.5)  // -6 dBFS
        let out = engine.process([x])[0]
        #expect(Reference.residualDB(out, Reference.delayed(x, by: 96)) < -90)
        #expect(engine.counters.limitedSamples == 0)
    }

    /// The daemon's bypass: a pure delay with no ceiling returns the input exactly, delayed.
    @Test func bypassDelayWithoutCeilingIsExact() throws {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: .infinity)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 512)
        let x = Signals.whiteNoise(count: 48000, rms: 0.1, seed: 9)
        let out = engine.process([x, x])
        #expect(Reference.residualDB(out[0], Reference.delayed(x, by: engine.latencyFrames)) < -120)
        #expect(engine.counters.limitedSamples == 0)
    }

    /// After a loud burst the limiter's gain must come back to exactly 1 (Float rounding once
    /// left it stuck at -0.0006 dB for good, found by the daemon's bypass test).
    @Test(arguments: [44100.0, 48000, 96000])
    func limiterRecoversExactlyAfterABurst(sampleRate: Double) throws {
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 1, fftLength: geometry.fftLength, ceilingDBFS: -1)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: sampleRate, filters: filters, blockSize: 256)
        let n = Int(sampleRate)
        let x = Signals.uniformNoise(count: n / 10, peak: 1, seed: 10) + Signals.whiteNoise(count: 2 * n, rms: 0.01, seed: 11)
        let out = engine.process([x])[0]
        #expect(engine.counters.limitedSamples > 0)
        let whole = x.count / 256 * 256  // the last partial block breaks the block-size promise
        #expect(Reference.residualDB(Array(out[..<whole]), Reference.delayed(x, by: engine.latencyFrames), from: n + n / 10) < -120)
    }

    @Test func nanAndInfinityNeverReachTheOutput() throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000, channels: 2)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        var x = Signals.whiteNoise(count: 9600, rms: 0.1, seed: 6)
        for i in stride(from: 100, to: 9600, by: 997) { x[i] = .nan }
        x[5000] = .infinity
        x[6000] = -.infinity
        x[7000] = 1e30
        let out = engine.process([x, x])
        #expect(out.allSatisfy { $0.allSatisfy(\.isFinite) })
        #expect(engine.counters.sanitizedInputs == 2 * 13)
    }

    @Test func publishingCrossfadesAtTheNextHopWithoutAClick() throws {
        let quiet = designedFilters(.unity, geometry, sampleRate: 48000)
        let loud = designedFilters(
            CombinationCurve(gain: GainCurve(points: [.init(frequencyHz: 1000, gainDB: 12)]), lowpass: .none),
            geometry, sampleRate: 48000)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: quiet, blockSize: 64)
        let x = Signals.sine(count: 24000, frequencyHz: 1000, sampleRate: 48000, amplitude: 0.05)
        var out = engine.process([Array(x[..<12032])])[0]
        try engine.publish(loud)
        #expect(engine.hasPendingFilters)
        out += engine.process([Array(x[12032...])])[0]
        #expect(!engine.hasPendingFilters)
        #expect(engine.counters.switches == 1)
        #expect(engine.collectRetired())
        // Both filters are flat with the same delay, so the output is a(n) x(n - D) with the
        // envelope a = A0 + (A1 - A0) s(n / hop). Its second difference is bounded by
        // |a''| + 2 |a'| w + A1 w^2 (w = 2 pi f / fs); a click (a jump) would exceed that many times.
        let (a0, a1) = (0.05, 0.05 * pow(10, 12.0 / 20))
        let omega = 2 * Double.pi * 1000 / 48000
        let hop = Double(geometry.hopSize)
        let h = 1e-4
        let slope = stride(from: h, to: 1, by: h).map { (SmoothStep.value($0 + h) - SmoothStep.value($0 - h)) / (2 * h) }.max()!
        let curvature = stride(from: h, to: 1, by: h).map {
            abs(SmoothStep.value($0 + h) - 2 * SmoothStep.value($0) + SmoothStep.value($0 - h)) / (h * h)
        }.max()!
        let bound = ((a1 - a0) * curvature / (hop * hop) + 2 * (a1 - a0) * slope / hop * omega + a1 * omega * omega) * 1.01
        var worst = 0.0
        for n in 2000..<out.count { worst = max(worst, abs(Double(out[n] - 2 * out[n - 1] + out[n - 2]))) }
        #expect(worst <= bound)
        // And the level really changed by 12 dB.
        let before = Levels.rms(out[6000..<12000]), after = Levels.rms(out[18000...])
        #expect(abs(Levels.decibels(after / before) - 12) < 0.1)
    }

    @Test func republishingTheSameFilterChangesNothing() throws {
        let filters = designedFilters(slopingCurve, geometry, sampleRate: 48000)
        let plain = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let switching = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let x = Signals.whiteNoise(count: 4800, rms: 0.01, seed: 9)
        let reference = plain.process([x])[0]
        // Split on a block boundary: the engine was promised blocks of 64.
        var out = switching.process([Array(x[..<1024])])[0]
        try switching.publish(filters)
        out += switching.process([Array(x[1024...])])[0]
        #expect(switching.counters.switches == 1)
        #expect(zip(out, reference).allSatisfy { abs($0 - $1) <= 1e-6 })
    }

    /// A host that breaks its promise (blocks of 64, then one of 100) gets silence for what was
    /// not ready, counted; after that the output is continuous again, late by exactly the
    /// counted frames (the host must prepare a new engine for the new block size).
    @Test func anOverlongBlockUnderrunsOnceThenRunsLateByTheCountedFrames() throws {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 1, fftLength: geometry.fftLength)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        let x = Signals.whiteNoise(count: 64 * 40 + 100, rms: 0.1, seed: 13)
        var out = engine.process([Array(x[..<1280])], blockSize: 64)[0]
        out += engine.process([Array(x[1280..<1380])], blockSize: 100)[0]
        let late = engine.counters.underrunFrames
        #expect(late == 36)  // 100 = 64 + 36: the last 36 frames were not ready
        out += engine.process([Array(x[1380...])], blockSize: 64)[0]
        #expect(engine.counters.underrunFrames == late)  // once only
        #expect(out.allSatisfy { $0.isFinite })
        let tail = 1380 + 128
        let expected = Reference.delayed(x, by: engine.latencyFrames + late)
        #expect(Reference.residualDB(Array(out[tail...]), Array(expected[tail...])) < -90)
    }

    @Test func rejectsSizesThatCannotWork() {
        #expect(throws: EngineError.self) { try EngineGeometry(fftLength: 256, hopSize: 64, filterLength: 195).validate() }
        #expect(throws: EngineError.self) { try EngineGeometry(fftLength: 256, hopSize: 64, filterLength: 100).validate() }
        #expect(throws: EngineError.self) { try EngineGeometry(fftLength: 255, hopSize: 64, filterLength: 1).validate() }
        let filters = FilterSet.delay(1, channelCount: 1, fftLength: 256)
        #expect(throws: EngineError.unsupportedSampleRate(8000)) {
            try OverlapSaveEngine(geometry: geometry, sampleRate: 8000, filters: filters)
        }
    }
}

/// The ceiling in every configuration the daemon publishes (the prescription's filters, the
/// pure delay of bypass and pass-through), for every input a broken upstream client can send.
@Suite struct CeilingTests {
    let geometry = EngineGeometry.standard(sampleRate: 48000)

    /// A full-scale square, DC, NaN, +-Inf and +-3e38 through a pure delay (bypass), a flat
    /// +10 dB filter and a sloping filter up to +40 dB, at ceilings of -20 dBFS, 0 dBFS and one
    /// asked for above full scale: no output sample beyond the ceiling (at most 0 dBFS), none
    /// non-finite, and the square still comes out near the ceiling (limited, not muted).
    @Test(arguments: [-20.0, 0, .infinity])
    func noInputPassesTheCeiling(ceilingDBFS: Double) throws {
        let limit = Float(pow(10, min(ceilingDBFS, 0) / 20))
        let flat10 = CombinationCurve(gain: GainCurve(points: [.init(frequencyHz: 1000, gainDB: 10)]), lowpass: .none)
        let filterSets: [(String, FilterSet)] = [
            (
                "delay",
                FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: ceilingDBFS)
            ),
            ("+10 dB", designedFilters(flat10, geometry, sampleRate: 48000, channels: 2, ceilingDBFS: ceilingDBFS)),
            ("sloping", designedFilters(slopingCurve, geometry, sampleRate: 48000, channels: 2, ceilingDBFS: ceilingDBFS)),
        ]
        let segment = 4800
        let x = HostileInput.signal(segmentFrames: segment)
        for (name, filters) in filterSets {
            #expect(filters.ceiling == limit)
            let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
            let out = engine.process([x, x.reversed()])
            for channel in out {
                let bad = channel.firstIndex { !($0.isFinite && abs($0) <= limit) }
                #expect(
                    bad == nil,
                    "\(name): \(bad.map { "\(channel[$0]) in \(HostileInput.segment(at: $0, segmentFrames: segment))" } ?? ""), ceiling \(limit)"
                )
            }
            let squarePeak = out[0][engine.latencyFrames..<segment].map(abs).max()!
            #expect(squarePeak > limit / 2, "\(name): the square came out at \(squarePeak), ceiling \(limit)")
        }
    }

    /// NaN and infinities become silence, and finite samples beyond full scale are clamped to it.
    @Test func outOfRangeInputIsSilenceOrFullScale() throws {
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 1, fftLength: geometry.fftLength)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: 48000, filters: filters, blockSize: 64)
        var x = [Float](repeating: 0, count: 4096)
        x[200] = .nan
        x[400] = .infinity
        x[600] = 3e38
        x[800] = -2
        let out = engine.process([x])[0]
        let d = engine.latencyFrames
        #expect(out[200 + d] == 0 && out[400 + d] == 0)
        #expect(out[600 + d] > 0.7 && out[600 + d] <= 1)  // clamped to 1, then the limiter's knee
        #expect(out[800 + d] < -0.7 && out[800 + d] >= -1)
        #expect(engine.counters.sanitizedInputs == 4)
    }
}
