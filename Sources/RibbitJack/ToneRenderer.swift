import Glibc
import RibbitDSP
import RibbitRealtime
import Synchronization

/// A calibration tone instead of the hearing aid: a sine in one ear or both, at a level
/// clamped to `maxLevelDBFS`, faded in and out with raised-cosine ramps (no click), that stops
/// by itself after its length, counted in frames (so a client or daemon that dies cannot leave it
/// playing, and a loaded machine cannot lengthen it). It plays one steady tone or a pattern of
/// pulses (a hearing test's three 200 ms pulses), each ramped the same way, every edge counted
/// in frames. It also meters the input (`inputMeanSquare`), for the microphone's calibration.
///
/// Levels are sine levels: 0 dBFS is a sine of peak 1, as `Calibration` counts them. A new
/// tone fades the old one out first, then fades in from phase 0.
///
/// Beside the tone it plays a hearing test's masking noise (`playMasker`): narrow-band noise
/// around the test frequency in the other ear, crossfaded from one level or band to the next,
/// stopping by itself like the tone, its peak under the same limits, and never in an ear the
/// tone is playing in.
///
/// It replaces what the renderers before it wrote (it ignores `mix`): run it as
/// `[hearingAid, tone]`, so the hearing aid's engine keeps running behind it, unheard, and
/// comes back without a jump (an engine left idle for seconds would start from stale input).
public final class ToneRenderer: PeriodRenderer, @unchecked Sendable {
    /// The loudest tone it plays: -20 dBFS (peak 0.1). 100 dB SPL at 0 dBFS (uncalibrated)
    /// puts it near 80 dB SPL, loud enough for a sound level meter and short of harm for the
    /// length of a measurement; the output ceiling in force holds on top.
    public static let maxLevelDBFS = -20.0
    /// A hearing test's limit instead (the link's `hearingTest`): 1 dB under full scale. The
    /// daemon asks no more than its self-test ceiling (90 dB HL) through the calibration, and the
    /// output ceiling in force holds on top, as for every tone.
    public static let hearingTestMaxLevelDBFS = -headroomDB
    /// After a hearing test's tone the tone mode stays on, silent, this long (the audio
    /// process's part): the hearing aid must not play between a test's tones, and comes back by
    /// itself if the daemon goes away.
    public static let hearingTestHoldSeconds = 10.0
    /// The quietest level it takes (anything lower plays silence).
    /// A hearing test's quietest tone (-10 dB HL through a loud headphone, 110 dB SPL at
    /// 0 dBFS, at 1 kHz) is near -115; a float output carries it, as a 24-bit converter does.
    public static let minLevelDBFS = -130.0
    /// The longest a tone plays before it stops by itself.
    public static let maxSeconds = 60.0
    /// A tone's peak stays this far under 0 dBFS and under the output ceiling in force, so the
    /// output guard never touches it (a clipped or limited tone is not the level asked).
    public static let headroomDB = 1.0
    /// The length of each raised-cosine ramp (fade in, fade out). 25 ms, within the 20 to 35 ms
    /// a hearing test's pulses ask for: the onset's splatter narrows as the ramp lengthens, and
    /// 20 ms left only 35 dB one octave from a 250 Hz tone in a window of two ramps (25 ms: 45);
    /// longer ones eat into a 200 ms pulse (175 ms at full level with 25).
    public static let rampSeconds = 0.025
    /// The input meter's window: its mean square is published once per window.
    public static let meterSeconds = 0.25

    /// What to play: immutable, published through `settings`.
    final class Settings: Sendable {
        /// The oscillator's rotation per frame (cos and sin of 2 pi f / fs), computed here: no
        /// libm on the audio thread.
        let stepCos: Double
        let stepSin: Double
        let amplitude: Double
        let left: Bool
        let right: Bool
        /// The pattern in frames: each pulse sounds `onFrames` (between its half-amplitude
        /// points), pulses start every `periodFrames`, and the last one stops at `lengthFrames`.
        /// Exact whatever the load (a hearing test's pulse is 200 ms, not "about"), and it still
        /// stops by itself. A steady tone is one pulse.
        let onFrames: Int
        let periodFrames: Int
        let lengthFrames: Int
        /// The daemon's number for this tone (`started`).
        let number: Int
        init(
            phaseStep: Double, amplitude: Double, left: Bool, right: Bool, onFrames: Int, offFrames: Int = 0, pulses: Int = 1,
            number: Int = 0
        ) {
            self.number = number
            stepCos = cos(phaseStep)
            stepSin = sin(phaseStep)
            self.amplitude = amplitude
            self.left = left
            self.right = right
            self.onFrames = max(onFrames, 0)
            periodFrames = max(self.onFrames + max(offFrames, 0), 1)
            lengthFrames = max(pulses, 1) * periodFrames - max(offFrames, 0)
        }
    }

    public let sampleRate: Double
    /// The input's mean square per channel over the last complete meter window, as bits of a
    /// Double (audio thread -> control). `inputLevelDBFS` reads them.
    public let inputMeanSquareLeft = Atomic<UInt64>(0)
    public let inputMeanSquareRight = Atomic<UInt64>(0)
    /// True while a tone sounds (ramps included).
    public let sounding = Atomic<Bool>(false)
    /// The tone whose first frame was rendered last (`play`'s `number`) and when (monotonic
    /// nanoseconds, at the start of that period's render): one snapshot, so the number and
    /// the time read are the same tone's.
    private let started = SeqlockSnapshot(ToneStart(number: 0, nanoseconds: 0))

    struct ToneStart: BitwiseCopyable {
        var number: Int
        var nanoseconds: Int
    }

    /// The masking noise: a loop (`NarrowBandNoise`, RMS 1) and how loud, where and how long.
    /// The audio thread reads only its plain fields; `loop` keeps the samples alive.
    final class Masker: @unchecked Sendable {
        let loop: NoiseLoop?
        let samples: UnsafePointer<Float>?
        let count: Int
        let gain: Float
        let left: Bool
        let right: Bool
        let lengthFrames: Int
        /// Replaces the one before at once, without a crossfade: what was left of a masker when
        /// the tone mode ended must not be heard when the next begins.
        let cut: Bool
        init(loop: NoiseLoop?, gain: Float, left: Bool, right: Bool, lengthFrames: Int, cut: Bool = false) {
            self.cut = cut
            self.loop = loop
            samples = loop.map { UnsafePointer($0.samples) }
            count = loop?.count ?? 1
            self.gain = loop == nil ? 0 : gain
            self.left = left
            self.right = right
            self.lengthFrames = max(lengthFrames, 0)
        }
    }

    /// One band's noise loop, kept for the next presentation at the same frequency.
    final class NoiseLoop: @unchecked Sendable {
        let centerHz: Double
        let samples: UnsafeMutablePointer<Float>
        let count: Int
        let peak: Float
        init(centerHz: Double, sampleRate: Double) {
            self.centerHz = centerHz
            let loop = NarrowBandNoise.loop(centerHz: centerHz, sampleRate: sampleRate)
            count = max(loop.count, 1)
            samples = .allocate(capacity: count)
            samples.initialize(repeating: 0, count: count)
            for (i, v) in loop.enumerated() { samples[i] = v }
            peak = loop.reduce(0) { max($0, abs($1)) }
        }
        deinit { samples.deallocate() }
    }

    private let settings: ConfigSlot<Settings>
    private let masker: ConfigSlot<Masker>
    /// The masker being faded out (taken, not yet retired), and the crossfade's state:
    /// [loop position, crossfade frames done (-1: none), frames the current one has played,
    /// frames the old one has played].
    private let fadingMasker: UnsafeMutablePointer<Unmanaged<Masker>?>
    private let maskerState: UnsafeMutablePointer<Int>
    /// Per ear (left, right), how much of the noise passes, 0...1: off at once while a tone
    /// sounds in that ear, back over a ramp once it is over (no click).
    private let maskerOpen: UnsafeMutablePointer<Float>
    /// Control side only: the last band's loop, reused while the frequency stays.
    private var lastLoop: NoiseLoop?
    private let rampFrames: Int
    private let meterFrames: Int
    /// Audio-thread state: [oscillator cos, sin, ramp position (frames, 0...rampFrames), meter
    /// sums L, R, meter frames, frames since the tone started].
    private let state: UnsafeMutablePointer<Double>
    /// The raised-cosine fade at each ramp position 0...rampFrames (computed in init).
    private let fade: UnsafeMutablePointer<Double>

    public static let renderEntry: RenderEntry = { context, inputs, outputs, frames, mix in
        Unmanaged<ToneRenderer>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.render(inputs, outputs, frames, mix: mix) }
    }

    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        settings = ConfigSlot(Settings(phaseStep: 0, amplitude: 0, left: false, right: false, onFrames: 0))
        masker = ConfigSlot(Masker(loop: nil, gain: 0, left: false, right: false, lengthFrames: 0))
        fadingMasker = .allocate(capacity: 1)
        fadingMasker.initialize(to: nil)
        maskerState = .allocate(capacity: 4)
        maskerState.initialize(repeating: 0, count: 4)
        maskerState[1] = -1
        maskerOpen = .allocate(capacity: 2)
        maskerOpen.initialize(repeating: 1, count: 2)
        rampFrames = max(1, Int((Self.rampSeconds * sampleRate).rounded()))
        meterFrames = max(1, Int((Self.meterSeconds * sampleRate).rounded()))
        state = .allocate(capacity: 7)
        state.initialize(repeating: 0, count: 7)
        state[0] = 1
        fade = .allocate(capacity: rampFrames + 1)
        for i in 0...rampFrames { fade[i] = 0.5 - 0.5 * cos(Double.pi * Double(i) / Double(rampFrames)) }
    }

    deinit {
        state.deallocate()
        fade.deallocate()
        fadingMasker.pointee?.release()
        fadingMasker.deallocate()
        maskerState.deallocate()
        maskerOpen.deallocate()
    }

    public func latencyFrames(period: Int) -> Int { 0 }

    // MARK: Control side

    /// The amplitude (peak) a level asks for, clamped to [minLevelDBFS, limitDBFS] (at most
    /// `maxLevelDBFS`, or `hearingTestMaxLevelDBFS` for a hearing test) and to `headroomDB`
    /// under both 0 dBFS and `ceilingDBFS`; 0 below the minimum or for NaN.
    public static func amplitude(levelDBFS: Double, ceilingDBFS: Double, limitDBFS: Double = maxLevelDBFS) -> Double {
        guard levelDBFS.isFinite, ceilingDBFS.isFinite, levelDBFS >= minLevelDBFS else { return 0 }
        let limit = min(limitDBFS.isFinite ? limitDBFS : maxLevelDBFS, hearingTestMaxLevelDBFS)
        return pow(10, min(levelDBFS, limit, ceilingDBFS - headroomDB, -headroomDB) / 20)
    }

    /// Plays a sine of `frequencyHz` (clamped to 20 Hz...0.45 x the rate) at `levelDBFS`
    /// (clamped, see `amplitude`) in the left ear, the right or both: `pulses` pulses of
    /// `seconds` each, `offSeconds` apart (one pulse: a steady tone), all of it at most
    /// `maxSeconds` (longer patterns are cut; `seconds` 0 stops). The old tone fades out first.
    public func play(
        frequencyHz: Double, levelDBFS: Double, ceilingDBFS: Double, left: Bool, right: Bool, seconds: Double, pulses: Int = 1,
        offSeconds: Double = 0, limitDBFS: Double = maxLevelDBFS, number: Int = 0
    ) {
        let hz = min(max(frequencyHz.isFinite ? frequencyHz : 1000, 20), 0.45 * sampleRate)
        func frames(_ seconds: Double) -> Int { Int((min(max(seconds.isFinite ? seconds : 0, 0), Self.maxSeconds) * sampleRate).rounded()) }
        let (on, off) = (frames(seconds), frames(offSeconds))
        let count = max(1, min(pulses, (frames(Self.maxSeconds) + off) / max(on + off, 1)))
        let amplitude = on > 0 ? Self.amplitude(levelDBFS: levelDBFS, ceilingDBFS: ceilingDBFS, limitDBFS: limitDBFS) : 0
        settings.publish(
            Settings(
                phaseStep: 2 * Double.pi * hz / sampleRate, amplitude: amplitude, left: left, right: right, onFrames: on,
                offFrames: off, pulses: count, number: number))
    }

    /// The tone that began last and when (monotonic seconds); nil before the first.
    public var lastStart: (number: Int, atSeconds: Double)? {
        let start = started.read()
        return start.number > 0 ? (start.number, Double(start.nanoseconds) / 1e9) : nil
    }

    /// How long a pattern plays, from its first frame to the end of its last fade-out (seconds).
    public static func patternSeconds(seconds: Double, pulses: Int, offSeconds: Double) -> Double {
        Double(max(pulses, 1)) * (seconds + offSeconds) - offSeconds + rampSeconds
    }

    /// Stops the tone (a fade-out).
    public func stop() { play(frequencyHz: 1000, levelDBFS: -200, ceilingDBFS: 0, left: false, right: false, seconds: 0) }

    /// Plays narrow-band noise (a third of an octave around `centerHz`) at `levelDBFS` (the
    /// level of a sine of the same power) in the chosen ears for `seconds` (at most
    /// `maxSeconds`; 0 stops it), crossfaded from what played before. Its peak stays
    /// `headroomDB` under 0 dBFS, the ceiling in force and `limitDBFS`, as a tone's does: a
    /// level that would pass them is lowered (`maskerGain`). Only heard while the tone mode runs.
    public func playMasker(
        centerHz: Double, levelDBFS: Double, ceilingDBFS: Double, left: Bool, right: Bool, seconds: Double,
        limitDBFS: Double = hearingTestMaxLevelDBFS
    ) {
        let hz = min(max(centerHz.isFinite ? centerHz : 1000, 100), 0.4 * sampleRate)
        let length = Int((min(max(seconds.isFinite ? seconds : 0, 0), Self.maxSeconds) * sampleRate).rounded())
        guard length > 0, levelDBFS.isFinite, levelDBFS >= Self.minLevelDBFS else {
            masker.publish(Masker(loop: lastLoop, gain: 0, left: left, right: right, lengthFrames: 0))
            return
        }
        if lastLoop?.centerHz != hz { lastLoop = NoiseLoop(centerHz: hz, sampleRate: sampleRate) }
        let loop = lastLoop!
        masker.publish(
            Masker(
                loop: loop,
                gain: Float(Self.maskerGain(levelDBFS: levelDBFS, ceilingDBFS: ceilingDBFS, limitDBFS: limitDBFS, peak: loop.peak)),
                left: left, right: right, lengthFrames: length))
    }

    /// Silences the masker at once when the renderer next runs. A backstop: the tone mode ends
    /// only once `sounding` (the noise included) is false, so nothing should be left to cut.
    public func cutMasker() {
        masker.publish(Masker(loop: nil, gain: 0, left: false, right: false, lengthFrames: 0, cut: true))
    }

    /// The gain on a loop of RMS 1 and this peak for noise at `levelDBFS` (a sine's level of the
    /// same power: RMS = 10^(level/20) / sqrt 2), lowered so the peak stays under the limits;
    /// 0 for NaN or an empty loop.
    static func maskerGain(levelDBFS: Double, ceilingDBFS: Double, limitDBFS: Double, peak: Float) -> Double {
        guard levelDBFS.isFinite, ceilingDBFS.isFinite, peak > 0, peak.isFinite else { return 0 }
        let limit = min(limitDBFS.isFinite ? limitDBFS : maxLevelDBFS, hearingTestMaxLevelDBFS, ceilingDBFS - headroomDB, -headroomDB)
        return min(pow(10, levelDBFS / 20) / 2.squareRoot(), pow(10, limit / 20) / Double(peak))
    }

    /// Drops settings the audio thread has finished with.
    public func collectRetired() {
        _ = settings.collect()
        _ = masker.collect()
    }

    /// The input level per channel (left, right) over the last meter window, as the level of
    /// a sine with that power: 10 log10(2 x mean square); -200 for silence, +200 when the
    /// input held NaN or infinities (always a finite number, so the status can carry it).
    public var inputLevelDBFS: (Double, Double) {
        func level(_ bits: UInt64) -> Double {
            let meanSquare = Double(bitPattern: bits)
            guard meanSquare.isFinite else { return 200 }
            return meanSquare > 0 ? min(200, max(-200, 10 * log10(2 * meanSquare))) : -200
        }
        return (
            level(inputMeanSquareLeft.load(ordering: .relaxed)), level(inputMeanSquareRight.load(ordering: .relaxed))
        )
    }

    /// Runs one period on silence off the audio thread, so the first real one finds its code ready.
    public func warmUp(frameCount: Int) {
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frameCount) }
        defer { buffers.forEach { $0.deallocate() } }
        for b in buffers { b.initialize(repeating: 0, count: frameCount) }
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
        let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer {
            ins.deallocate()
            outs.deallocate()
        }
        ins[0] = UnsafePointer(buffers[0])
        ins[1] = UnsafePointer(buffers[1])
        outs[0] = buffers[2]
        outs[1] = buffers[3]
        render(UnsafePointer(ins), UnsafePointer(outs), frameCount, mix: false)
        state.update(repeating: 0, count: 5)
    }

    // MARK: Audio thread

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func render(
        _ inputs: UnsafePointer<UnsafePointer<Float>>, _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int,
        mix: Bool
    ) {
        meter(inputs[0], inputs[1], frameCount)
        // A new tone waits until the old one has faded out; then it starts at phase 0.
        let waiting = settings.canTake()
        if waiting, state[2] == 0, let old = settings.take() {
            settings.retire(old)
            (state[0], state[1]) = (1, 0)  // phase 0
            state[6] = 0
            started.write(
                ToneStart(number: settings.current()._withUnsafeGuaranteedRef { $0.number }, nanoseconds: Realtime.monotonicNanoseconds()))
        }
        // Not `&&`: its autoclosure would retain self on the audio thread.
        let fadingOut = waiting ? state[2] > 0 : false
        let soundedAtStart = state[2] > 0
        let state = state
        let (rampFrames, fade) = (rampFrames, fade)
        let (left, right) = (outputs[0], outputs[1])
        let playing = settings.current()._withUnsafeGuaranteedRef { tone in
            var (c, s) = (state[0], state[1])
            var ramp = Int(state[2])
            let on = fadingOut ? false : tone.amplitude > 0  // no `&&`: its autoclosure retains
            let elapsed = Int(state[6])
            let remaining = tone.lengthFrames - elapsed  // frames of this tone still to sound
            let (onFrames, periodFrames) = (tone.onFrames, tone.periodFrames)
            let (stepCos, stepSin, amplitude) = (tone.stepCos, tone.stepSin, Float(tone.amplitude))
            let (toLeft, toRight) = (tone.left, tone.right)
            for i in 0..<frameCount {
                // In a pulse: counted from the tone's first frame, so no period's timing moves an edge.
                let inPulse = (elapsed + i) % periodFrames < onFrames
                let sounds = i < remaining ? (inPulse ? on : false) : false
                ramp = sounds ? min(ramp + 1, rampFrames) : max(ramp - 1, 0)
                let sample = ramp == 0 ? 0 : amplitude * Float(fade[ramp] * s)
                (c, s) = (c * stepCos - s * stepSin, s * stepCos + c * stepSin)
                left[i] = toLeft ? sample : 0
                right[i] = toRight ? sample : 0
            }
            // Back onto the unit circle once a period (rounding would drift it over minutes):
            // one Newton step of 1 / sqrt(r^2) from r = 1, no libm.
            let k = (3 - (c * c + s * s)) / 2
            (state[0], state[1]) = (c * k, s * k)
            state[2] = Double(ramp)
            state[6] += Double(frameCount)
            let stillOn = frameCount < remaining ? on : false
            return ramp > 0 || stillOn
        }
        // A tone that sounded in any frame of this period (its fade-out included) keeps the
        // noise out of its ears.
        let toneSounded = playing ? true : soundedAtStart
        let (toneLeft, toneRight) = settings.current()._withUnsafeGuaranteedRef { ($0.left, $0.right) }
        let masking = renderMasker(
            outputs, frameCount, toneLeft: toneSounded ? toneLeft : false, toneRight: toneSounded ? toneRight : false)
        sounding.store(playing ? true : masking, ordering: .relaxed)
    }

    /// Adds the masking noise: the current masker, crossfaded from the one before over a ramp,
    /// each with its own end; never into a channel the tone is sounding in. Returns whether
    /// any noise sounds.
    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    private func renderMasker(
        _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>, _ frameCount: Int, toneLeft: Bool, toneRight: Bool
    ) -> Bool {
        let st = maskerState
        if st[1] < 0, let old = masker.take() {
            if masker.current()._withUnsafeGuaranteedRef({ $0.cut }) {
                masker.retire(old)
            } else {
                fadingMasker.pointee = old
                st[1] = 0
                st[3] = st[2]
            }
            st[2] = 0
        }
        let rampFrames = self.rampFrames
        let (left, right) = (outputs[0], outputs[1])
        var position = st[0]
        var crossfade = st[1]
        var (newElapsed, oldElapsed) = (st[2], st[3])
        var sounding = false
        // Each masker's fields as plain values: no reference counting in the loop.
        struct Voice {
            var samples: UnsafePointer<Float>?
            var count = 1
            var gain: Float = 0
            var left = false
            var right = false
            var lengthFrames = 0
        }
        func voice(_ m: Masker) -> Voice {
            Voice(samples: m.samples, count: m.count, gain: m.gain, left: m.left, right: m.right, lengthFrames: m.lengthFrames)
        }
        let now = masker.current()._withUnsafeGuaranteedRef { voice($0) }
        var old = Voice()
        if let fading = fadingMasker.pointee { old = fading._withUnsafeGuaranteedRef { voice($0) } }
        // Never into an ear the tone sounds in: closed at once, opened again over a ramp.
        var (openLeft, openRight) = (toneLeft ? 0 : maskerOpen[0], toneRight ? 0 : maskerOpen[1])
        let step = 1 / Float(rampFrames)
        let ramp = Float(rampFrames)
        for i in 0..<frameCount {
            // Each masker's envelope: its own end ramped, and the crossfade between them.
            let mix = crossfade < 0 ? Float(1) : Float(crossfade) / ramp
            var l: Float = 0
            var r: Float = 0
            if let samples = now.samples {
                let g = now.gain * Float(min(max(now.lengthFrames - newElapsed, 0), rampFrames)) / ramp * mix
                let v = g * samples[position % now.count]
                if now.left { l += v }
                if now.right { r += v }
            }
            if crossfade >= 0, let samples = old.samples {
                let g = old.gain * Float(min(max(old.lengthFrames - oldElapsed, 0), rampFrames)) / ramp * (1 - mix)
                let v = g * samples[position % old.count]
                if old.left { l += v }
                if old.right { r += v }
            }
            if !toneLeft { openLeft = min(openLeft + step, 1) }
            if !toneRight { openRight = min(openRight + step, 1) }
            left[i] += l * openLeft
            right[i] += r * openRight
            if l != 0 { sounding = true }
            if r != 0 { sounding = true }
            position = position + 1 == NarrowBandNoise.loopLength ? 0 : position + 1
            newElapsed += 1
            oldElapsed += 1
            if crossfade >= 0 {
                crossfade += 1
                if crossfade >= rampFrames { crossfade = -2 }  // done: retire below
            }
        }
        if crossfade == -2, let old = fadingMasker.pointee {
            masker.retire(old)
            fadingMasker.pointee = nil
            crossfade = -1
        }
        (st[0], st[1], st[2], st[3]) = (position, crossfade, newElapsed, oldElapsed)
        (maskerOpen[0], maskerOpen[1]) = (openLeft, openRight)
        return sounding
    }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    @inline(__always)
    private func meter(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, _ frameCount: Int) {
        var (sumLeft, sumRight, frames) = (state[3], state[4], Int(state[5]))
        for i in 0..<frameCount {
            sumLeft += Double(left[i] * left[i])
            sumRight += Double(right[i] * right[i])
            frames += 1
            if frames == meterFrames {
                inputMeanSquareLeft.store((sumLeft / Double(frames)).bitPattern, ordering: .relaxed)
                inputMeanSquareRight.store((sumRight / Double(frames)).bitPattern, ordering: .relaxed)
                (sumLeft, sumRight, frames) = (0, 0, 0)
            }
        }
        (state[3], state[4], state[5]) = (sumLeft, sumRight, Double(frames))
    }
}
