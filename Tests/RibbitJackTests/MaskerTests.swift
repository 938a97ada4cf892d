import Foundation
import RibbitDSP
import Testing

@testable import RibbitJack

/// A hearing test's masking noise: the band, the level, the limits, the ear, the end.
@Suite struct MaskerTests {
    static let rate = 48000.0

    /// The loop: RMS 1, its peak within the crest the limits count on, and all of its power in
    /// the third of an octave around the frequency (one loop is one period, so its DFT's bins
    /// are exact: nothing leaks, and the loop's end meets its start).
    @Test func theLoopIsAThirdOctaveOfNoiseThatRepeatsSeamlessly() {
        for hz in [250.0, 1000, 4000, 8000] {
            let loop = NarrowBandNoise.loop(centerHz: hz, sampleRate: Self.rate)
            #expect(loop.count == NarrowBandNoise.loopLength)
            let rms = (loop.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(loop.count)).squareRoot()
            #expect(abs(rms - 1) < 1e-4)
            #expect((loop.map(abs).max() ?? 99) <= NarrowBandNoise.maximumCrest)
            // The audiometry tests' bound on the noise's peak over a sine of its power.
            #expect(NarrowBandNoise.peakOverSineDB <= 10.06)
            let fft = RealFFT(length: loop.count, planning: .estimate)
            let input = RealFFT.allocateReal(loop.count)
            let spectrum = RealFFT.allocateComplex(fft.complexCount)
            defer {
                RealFFT.free(input)
                RealFFT.free(spectrum)
            }
            for (i, v) in loop.enumerated() { input[i] = v }
            fft.forward(input, spectrum)
            let (low, high) = NarrowBandNoise.edges(centerHz: hz)
            var inside = 0.0
            var total = 0.0
            for k in 0..<fft.complexCount {
                let power = Double(spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1])
                total += power
                let f = Double(k) * Self.rate / Double(loop.count)
                if f >= low && f <= high { inside += power }
            }
            #expect(inside / total > 0.9999, "\(hz) Hz: \(inside / total) in band")
            // The loop's seam is no louder a step than its inside: no click where it repeats.
            let steps = (1..<loop.count).map { abs(loop[$0] - loop[$0 - 1]) }
            #expect(abs(loop[0] - loop[loop.count - 1]) <= steps.max()!)
        }
    }

    /// At -40 dBFS (a sine of that power: mean square 10^-4 / 2) in the left ear only, steady
    /// after its fade-in; the right ear silent.
    @Test func itPlaysTheLevelAskedInTheEarAsked() {
        let tone = ToneRenderer(sampleRate: Self.rate)
        tone.play(frequencyHz: 1000, levelDBFS: -200, ceilingDBFS: 0, left: true, right: true, seconds: 10, limitDBFS: -1)
        tone.playMasker(centerHz: 1000, levelDBFS: -40, ceilingDBFS: 0, left: true, right: false, seconds: 5)
        let (left, right) = ToneRendererTests.render(tone, frames: 48000 + 65536)
        let steady = left[48000..<(48000 + 65536)]
        let meanSquare = steady.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(steady.count)
        #expect(abs(10 * log10(2 * meanSquare) - -40) < 0.05, "\(10 * log10(2 * meanSquare)) dBFS")
        #expect(right.allSatisfy { $0 == 0 })
        let sounding = tone.sounding.load(ordering: .relaxed)
        #expect(sounding)
    }

    /// Asked far too loud, its peak stays 1 dB under the ceiling in force (and under full scale);
    /// NaN, infinity and silence play nothing.
    @Test func itsPeakStaysUnderTheCeilingWhateverIsAsked() {
        for (asked, ceiling) in [(20.0, -6.0), (0, 0), (-3, -20), (Double.infinity, 0), (-10, 30)] {
            let tone = ToneRenderer(sampleRate: Self.rate)
            tone.playMasker(centerHz: 4000, levelDBFS: asked, ceilingDBFS: ceiling, left: true, right: true, seconds: 2)
            let (left, right) = ToneRendererTests.render(tone, frames: 96000)
            let peak = (left + right).map(abs).max() ?? 0
            let limit = Float(pow(10, (min(ceiling, 0) - ToneRenderer.headroomDB) / 20))
            #expect(peak <= limit * 1.0001, "asked \(asked) under \(ceiling): peak \(20 * log10(peak)) dBFS")
            if !asked.isFinite { #expect(peak == 0) }
        }
        #expect(ToneRenderer.maskerGain(levelDBFS: .nan, ceilingDBFS: 0, limitDBFS: -1, peak: 4) == 0)
        #expect(ToneRenderer.maskerGain(levelDBFS: -20, ceilingDBFS: .nan, limitDBFS: -1, peak: 4) == 0)
    }

    /// Never in the ear a tone sounds in: the tone's ear carries the tone alone, exactly, its
    /// fade-out included; after it the noise comes back over a ramp, not at once.
    @Test func itNeverPlaysInTheTonesEar() {
        let tone = ToneRenderer(sampleRate: Self.rate)
        let reference = ToneRenderer(sampleRate: Self.rate)
        for renderer in [tone, reference] {
            renderer.play(
                frequencyHz: 1000, levelDBFS: -30, ceilingDBFS: 0, left: false, right: true, seconds: 0.2, pulses: 3, offSeconds: 0.2,
                limitDBFS: -1)
        }
        tone.playMasker(centerHz: 1000, levelDBFS: -30, ceilingDBFS: 0, left: true, right: true, seconds: 3)
        let (left, right) = ToneRendererTests.render(tone, frames: 72000)
        let (_, alone) = ToneRendererTests.render(reference, frames: 72000)
        let end = alone.lastIndex { $0 != 0 }! + 1
        #expect(Array(right[..<end]) == Array(alone[..<end]), "the noise sounded in the tone's ear")
        #expect(left.map(abs).max()! > 0.001)
        // Back over 25 ms (1200 frames): within the ramp's share of the noise's largest peak.
        let peak = Float(pow(10, -30.0 / 20) / 2.squareRoot()) * NarrowBandNoise.maximumCrest
        let back = right[end...].firstIndex { $0 != 0 }!
        for k in back..<(back + 1200) { #expect(abs(right[k]) <= peak * Float(k - back + 257) / 1200, "frame \(k - back) after the tone") }
        #expect(right[(back + 1200)...].map(abs).max()! > 0.01)
    }

    /// It stops by itself after its length (counted in frames, with a 25 ms fade), a new level
    /// crossfades without a step, and `cutMasker` silences it at once.
    @Test func itStopsByItselfCrossfadesAndCuts() {
        let tone = ToneRenderer(sampleRate: Self.rate)
        tone.playMasker(centerHz: 500, levelDBFS: -30, ceilingDBFS: 0, left: true, right: false, seconds: 0.5)
        let (left, _) = ToneRendererTests.render(tone, frames: 48000)
        #expect(left[12000..<24000].map(abs).max()! > 0.005)
        #expect(left[24000...].allSatisfy { $0 == 0 }, "silent after 0.5 s")
        let stillSounding = tone.sounding.load(ordering: .relaxed)
        #expect(!stillSounding)

        // From -30 to -50 dBFS: the envelope moves over 25 ms, never above the louder level's peak.
        tone.playMasker(centerHz: 500, levelDBFS: -30, ceilingDBFS: 0, left: true, right: false, seconds: 5)
        _ = ToneRendererTests.render(tone, frames: 9600)
        tone.playMasker(centerHz: 500, levelDBFS: -50, ceilingDBFS: 0, left: true, right: false, seconds: 5)
        // After the 25 ms crossfade, one whole loop: its power is the level asked, whatever the draw.
        let (quieter, _) = ToneRendererTests.render(tone, frames: 9600 + NarrowBandNoise.loopLength)
        let loud = Float(pow(10, -30.0 / 20) / 2.squareRoot()) * NarrowBandNoise.maximumCrest
        #expect(quieter.map(abs).max()! <= loud)
        let tail = quieter[9600..<(9600 + NarrowBandNoise.loopLength)]
        let meanSquare = tail.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(tail.count)
        #expect(abs(10 * log10(2 * meanSquare) - -50) < 0.5)

        tone.cutMasker()
        let (cut, _) = ToneRendererTests.render(tone, frames: 2560)
        #expect(cut.allSatisfy { $0 == 0 })
    }
}
