import Foundation
import Glibc
import RibbitControl
import RibbitRealtime
import Testing

@testable import RibbitJack

/// The calibration tone on its own, period by period, against closed forms.
@Suite struct ToneRendererTests {
    /// Renders `frames` in periods of `period`; inputs carry a sine of peak `inputPeak`. Returns (left, right).
    static func render(_ tone: ToneRenderer, frames: Int, period: Int = 256, inputPeak: Float = 0) -> ([Float], [Float]) {
        let input = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let out = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: period) }
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
        let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer {
            input.deallocate()
            out.forEach { $0.deallocate() }
            ins.deallocate()
            outs.deallocate()
        }
        (ins[0], ins[1], outs[0], outs[1]) = (UnsafePointer(input), UnsafePointer(input), out[0], out[1])
        var left: [Float] = []
        var right: [Float] = []
        var n = 0
        while left.count < frames {
            for i in 0..<period { input[i] = inputPeak * sinf(2 * .pi * 1000 * Float(n + i) / 48000) }
            n += period
            tone.render(UnsafePointer(ins), UnsafePointer(outs), period, mix: false)
            left += UnsafeBufferPointer(start: out[0], count: period)
            right += UnsafeBufferPointer(start: out[1], count: period)
        }
        return (left, right)
    }

    @Test func theLimitsAgreeWithTheProtocol() {
        #expect(ToneRenderer.maxLevelDBFS == ControlProtocol.toneMaxLevelDBFS)
        #expect(ToneRenderer.maxSeconds == ControlProtocol.toneMaxSeconds)
        #expect(ToneRenderer.headroomDB == ControlProtocol.toneHeadroomDB)
        #expect(ToneRenderer.rampSeconds == ControlProtocol.toneRampSeconds)
        // The shortest pulse reaches its level (two ramps); the shortest gap fades to silence (one).
        #expect(ControlProtocol.tonePulseOnMs.lowerBound == 2 * ToneRenderer.rampSeconds * 1000)
        #expect(ControlProtocol.tonePulseOffMs.lowerBound == ToneRenderer.rampSeconds * 1000)
    }

    /// Each tone's number and the time the audio thread rendered its first frame: a new tone
    /// starts only once the old one has faded out, and that is when it is stamped.
    @Test func itStampsWhenEachToneBegan() {
        let tone = ToneRenderer(sampleRate: 48000)
        #expect(tone.lastStart == nil)
        let asked = Double(Realtime.monotonicNanoseconds()) / 1e9
        tone.play(frequencyHz: 1000, levelDBFS: -30, ceilingDBFS: 0, left: true, right: true, seconds: 1, number: 7)
        _ = Self.render(tone, frames: 2560)  // past its 25 ms fade-in: at full level
        let first = tone.lastStart
        #expect(
            first?.number == 7
                && first.map { $0.atSeconds >= asked && $0.atSeconds <= Double(Realtime.monotonicNanoseconds()) / 1e9 } == true)
        // The next waits for the 25 ms fade-out (1200 frames): stamped at the period it begins.
        tone.play(frequencyHz: 500, levelDBFS: -30, ceilingDBFS: 0, left: true, right: true, seconds: 1, number: 8)
        _ = Self.render(tone, frames: 512)
        #expect(tone.lastStart?.number == 7, "began before the old tone faded out")
        _ = Self.render(tone, frames: 1024)
        #expect(tone.lastStart?.number == 8 && tone.lastStart!.atSeconds > first!.atSeconds)
    }

    /// Asked for 0 dBFS under a -1 dBFS ceiling it plays -20 (peak 0.1); under a -30 ceiling,
    /// -31: never within 1 dB of the ceiling (nor of 0 dBFS, the ceiling's own limit).
    @Test func theLevelIsClampedToTheToneLimitAndTheCeiling() {
        #expect(ToneRenderer.amplitude(levelDBFS: 0, ceilingDBFS: -1) == pow(10, -20.0 / 20))
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -10, ceilingDBFS: -30) - pow(10, -31.0 / 20)) < 1e-12)
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -30.5, ceilingDBFS: -30) - pow(10, -31.0 / 20)) < 1e-12)
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -31, ceilingDBFS: -30) - pow(10, -31.0 / 20)) < 1e-12)
        #expect(ToneRenderer.amplitude(levelDBFS: -20, ceilingDBFS: 10) <= pow(10, -1.0 / 20))
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -40, ceilingDBFS: -1) - 0.01) < 1e-12)
        #expect(ToneRenderer.amplitude(levelDBFS: .nan, ceilingDBFS: -1) == 0)
        #expect(ToneRenderer.amplitude(levelDBFS: -200, ceilingDBFS: -1) == 0)
        let tone = ToneRenderer(sampleRate: 48000)
        tone.play(frequencyHz: 1000, levelDBFS: 6, ceilingDBFS: 0, left: true, right: true, seconds: 5)
        let (left, right) = Self.render(tone, frames: 9600)
        #expect(abs((left.map(abs).max() ?? 0) - 0.1) < 1e-4)
        #expect(left == right)
    }

    /// A hearing test's tones may reach 1 dB under full scale, never more, and the ceiling in
    /// force still holds 1 dB under it; NaN and infinite asks play silence, an infinite limit
    /// falls back to the calibration tone's.
    @Test func aHearingTestsToneStaysUnderFullScaleAndTheCeiling() {
        let limit = ToneRenderer.hearingTestMaxLevelDBFS
        #expect(abs(ToneRenderer.amplitude(levelDBFS: 20, ceilingDBFS: 0, limitDBFS: limit) - pow(10, -1.0 / 20)) < 1e-12)
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -3, ceilingDBFS: 0, limitDBFS: limit) - pow(10, -3.0 / 20)) < 1e-12)
        #expect(abs(ToneRenderer.amplitude(levelDBFS: 0, ceilingDBFS: -10, limitDBFS: limit) - pow(10, -11.0 / 20)) < 1e-12)
        #expect(ToneRenderer.amplitude(levelDBFS: 0, ceilingDBFS: 0, limitDBFS: 10) <= pow(10, -1.0 / 20))
        #expect(ToneRenderer.amplitude(levelDBFS: 0, ceilingDBFS: 0, limitDBFS: .infinity) == pow(10, -20.0 / 20))
        #expect(ToneRenderer.amplitude(levelDBFS: .nan, ceilingDBFS: 0, limitDBFS: limit) == 0)
        #expect(ToneRenderer.amplitude(levelDBFS: .infinity, ceilingDBFS: 0, limitDBFS: limit) == 0)
        // -10 dB HL on a loud headphone: far below the calibration tone's old -100 dBFS floor.
        #expect(abs(ToneRenderer.amplitude(levelDBFS: -115, ceilingDBFS: 0, limitDBFS: limit) - pow(10, -115.0 / 20)) < 1e-15)
        let tone = ToneRenderer(sampleRate: 48000)
        tone.play(
            frequencyHz: 1000, levelDBFS: 40, ceilingDBFS: -6, left: true, right: true, seconds: 0.2, pulses: 3, offSeconds: 0.2,
            limitDBFS: limit)
        let (left, _) = Self.render(tone, frames: 48000)
        let peak = left.map(abs).max() ?? 0
        #expect(
            peak <= pow(10, -7.0 / 20) + 1e-6 && peak > pow(10, -7.0 / 20) - 1e-3, "peak \(20 * log10(peak)) dBFS under a -6 dBFS ceiling")
    }

    /// The fade-in follows 0.5 - 0.5 cos(pi n / N) exactly, then the sine at full level.
    @Test func itFadesInWithARaisedCosine() {
        let tone = ToneRenderer(sampleRate: 48000)
        tone.play(frequencyHz: 1000, levelDBFS: -20, ceilingDBFS: 0, left: true, right: false, seconds: 5)
        let (left, right) = Self.render(tone, frames: 4800)
        let ramp = Int(ToneRenderer.rampSeconds * 48000)
        var worst = 0.0
        for n in 0..<left.count {
            let fade = n + 1 >= ramp ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(n + 1) / Double(ramp))
            let expected = 0.1 * fade * sin(2 * Double.pi * 1000 * Double(n) / 48000)
            worst = max(worst, abs(Double(left[n]) - expected))
        }
        #expect(worst < 1e-5, "off by \(worst)")
        #expect(right.allSatisfy { $0 == 0 })
    }

    /// It stops by itself after its length, fading out; `stop` fades out at once; a new tone
    /// waits for the old one's fade-out and starts from phase 0.
    @Test func itStopsByItselfAndChangesWithoutAClick() {
        let tone = ToneRenderer(sampleRate: 48000)
        tone.play(frequencyHz: 1000, levelDBFS: -20, ceilingDBFS: 0, left: true, right: true, seconds: 0.05)
        var (left, _) = Self.render(tone, frames: 2560)
        let sounding = tone.sounding.load(ordering: .relaxed)
        #expect(sounding)
        #expect((left.suffix(256).map(abs).max() ?? 0) > 0.09)
        usleep(80_000)
        (left, _) = Self.render(tone, frames: 2560)  // fades out over the first 1040 frames
        #expect(left.suffix(1024).allSatisfy { $0 == 0 })
        let silent = !tone.sounding.load(ordering: .relaxed)
        #expect(silent)
        let slope = 0.1 * 2 * Double.pi * 1000 / 48000
        #expect(zip(left, left.dropFirst()).allSatisfy { Double(abs($1 - $0)) <= slope * 1.02 })

        // The length is counted in frames, however long the periods take: 0.2 s fades out from
        // frame 9600 and is silent from 9600 plus the ramp, rendered in one go or period by period.
        let ramp = Int((ToneRenderer.rampSeconds * 48000).rounded())
        for period in [12_000, 64] {
            let timed = ToneRenderer(sampleRate: 48000)
            timed.play(frequencyHz: 1000, levelDBFS: -20, ceilingDBFS: 0, left: true, right: true, seconds: 0.2)
            var samples = [Float]()
            while samples.count < 12_000 {
                samples += Self.render(timed, frames: period).0
                if period == 64 && samples.count == 6400 { usleep(50_000) }  // a late period changes nothing
            }
            let last = samples.lastIndex { $0 != 0 } ?? -1
            #expect(last == 9600 + ramp - 1 || last == 9600 + ramp - 2, "period \(period): last sound at frame \(last)")
        }

        tone.play(frequencyHz: 1000, levelDBFS: -20, ceilingDBFS: 0, left: true, right: true, seconds: 5)
        var all = Self.render(tone, frames: 4096).0
        tone.collectRetired()
        tone.play(frequencyHz: 4000, levelDBFS: -20, ceilingDBFS: 0, left: true, right: true, seconds: 5)
        all += Self.render(tone, frames: 4096).0
        let steepest = zip(all, all.dropFirst()).map { Double(abs($1 - $0)) }.max() ?? 0
        #expect(steepest <= 0.1 * 2 * Double.pi * 4000 / 48000 * 1.02, "a step of \(steepest)")
        #expect((all.suffix(512).map(abs).max() ?? 0) > 0.09)
        tone.stop()
        let after = Self.render(tone, frames: 2560).0
        #expect(after.suffix(1024).allSatisfy { $0 == 0 })
    }

    /// Three 200 ms pulses 200 ms apart: every frame as the closed form says (each pulse's
    /// raised-cosine rise from its first frame, its fall from frame 9600 after, the sine running
    /// on through the gaps), rendered in one block or period by period with a late period; then
    /// silence, and `sounding` true through the gaps and false after.
    @Test func itPlaysAPulsePatternExactToTheFrame() {
        let (on, off, ramp) = (9600, 9600, Int((ToneRenderer.rampSeconds * 48000).rounded()))
        func expected(_ n: Int) -> Double {
            let (pulse, t) = (n / (on + off), n % (on + off))  // which pulse, frames since it began
            guard pulse < 3 else { return 0 }
            let k = t < on ? min(t + 1, ramp) : max(ramp - (t - on + 1), 0)  // the ramp's position
            return 0.01 * (0.5 - 0.5 * cos(Double.pi * Double(k) / Double(ramp))) * sin(2 * Double.pi * 1000 * Double(n) / 48000)
        }
        for period in [60_000, 64] {
            let tone = ToneRenderer(sampleRate: 48000)
            tone.play(
                frequencyHz: 1000, levelDBFS: -40, ceilingDBFS: -1, left: false, right: true, seconds: 0.2, pulses: 3, offSeconds: 0.2)
            var (left, right) = ([Float](), [Float]())
            var soundingInGap = period != 64
            while right.count < 60_000 {
                let (l, r) = Self.render(tone, frames: period, period: period)
                (left, right) = (left + l, right + r)
                if period == 64 && right.count == 6400 { usleep(50_000) }  // a late period changes nothing
                if period == 64 && right.count == 14_400 { soundingInGap = tone.sounding.load(ordering: .relaxed) }
            }
            let worst = right.indices.map { abs(Double(right[$0]) - expected($0)) }.max() ?? 1
            #expect(worst < 1e-6, "period \(period): off by \(worst)")
            // The last pulse's fall ends one ramp after frame 2 x 19200 + 9600.
            let last = right.lastIndex { $0 != 0 } ?? -1
            #expect(last == 2 * (on + off) + on + ramp - 2, "period \(period): last sound at frame \(last)")
            #expect(left.allSatisfy { $0 == 0 })
            let over = !tone.sounding.load(ordering: .relaxed)
            #expect(soundingInGap && over)
        }
    }

    /// A pattern longer than a tone may last is cut to whole pulses within 60 s.
    @Test func aLongPatternIsCutToWholePulses() {
        let tone = ToneRenderer(sampleRate: 1000)
        tone.play(frequencyHz: 100, levelDBFS: -40, ceilingDBFS: -1, left: true, right: true, seconds: 5, pulses: 10, offSeconds: 5)
        var (left, _) = Self.render(tone, frames: 70_000, period: 1000)
        let last = left.lastIndex { abs($0) > 1e-3 } ?? -1
        #expect(last > 55_000 && last < 55_025, "last sound at frame \(last)")  // 6 pulses: 5 x 10 s + 5 s
        (left, _) = Self.render(tone, frames: 1000, period: 1000)
        #expect(left.allSatisfy { $0 == 0 })
    }

    /// The meter reads a sine of peak A as 20 log10 A dBFS, once per quarter second.
    @Test func theMeterReadsASinesLevel() {
        let tone = ToneRenderer(sampleRate: 48000)
        #expect(tone.inputLevelDBFS.0 == -200)
        _ = Self.render(tone, frames: 24000, inputPeak: 0.05)
        let (left, right) = tone.inputLevelDBFS
        #expect(abs(left - 20 * log10(0.05)) < 0.01, "\(left)")
        #expect(abs(right - left) < 1e-9)
        // NaN or infinity at the input: +200, never a number JSON cannot carry.
        _ = Self.render(tone, frames: 24000, inputPeak: .infinity)
        #expect(tone.inputLevelDBFS.0 == 200)
        _ = Self.render(tone, frames: 24000, inputPeak: .nan)
        #expect(tone.inputLevelDBFS.1 == 200)
    }
}
