import Foundation
import Glibc
import RibbitControl
import RibbitSettings
import RibbitTestSupport
import Testing

/// A hearing test's pulsed tones on the real daemon and a dummy JACK server, measured in what
/// ribbit wrote to its outputs: level, frequency, pulse timing, the silent ear, the onset's
/// spectrum, and an RT thread that stays clean while they play.
extension DaemonTests {
    /// One pulse of a presentation.
    struct Pulse {
        /// Its half-amplitude points (frames, interpolated).
        var rise: Double
        var fall: Double
        /// Its length between them (ms).
        var onMs: Double
        /// The level and frequency of its steady part (NaN for a pulse too short to have one).
        var levelDBFS: Double
        var hz: Double
        /// The tone's 1/3-octave band over the louder of the bands an octave away, in a window
        /// over its rise (dB).
        var onsetMarginDB: Double
        /// The largest step between neighbouring samples from a ramp before its rise to a ramp
        /// after its fall, over a sine's steepest (a gate without a ramp, or a period an xrun
        /// dropped, repeated or left silent, steps by up to the whole amplitude).
        var steepestStep: Double
        /// Whether 8 or more samples in a row are exactly 0 from a quarter ramp before its rise
        /// to a quarter ramp after its fall (a sine there never is 0 twice in a row; a period
        /// JACK left silent in the recording is).
        var holed: Bool
    }

    /// What one presentation measured.
    struct PulseMeasure {
        var pulses: [Pulse]
        /// Each gap's length between half-amplitude points (ms).
        var offMs: [Double]
        /// The other ear's loudest sample while the tone played (dBFS).
        var otherEarDBFS: Double
        /// Where the last fade-out ends (frame): half a ramp after the last fall's half-amplitude point.
        var endFrame: Double
        /// The largest step over the whole presentation, over a sine's steepest.
        var steepestStep: Double
    }

    /// The onset measure in `measurePulses`, on a tone gated on without a ramp: 23 dB at 500 Hz,
    /// 26 at 1 kHz, 33 at 4 kHz, so the 40 dB asked of ribbit's onsets does catch a click.
    @Test func theOnsetMeasureCatchesAToneWithoutARamp() throws {
        for hz in [500.0, 1000, 4000] {
            let gated =
                [Double](repeating: 0, count: 4800) + (0..<19200).map { 0.03 * sin(2 * .pi * hz * Double($0) / 48000) }
                + [Double](repeating: 0, count: 4800)
            let (m, _) = try Self.measurePulses(
                [gated, [Double](repeating: 0, count: gated.count)], ear: 0, hz: hz, amplitude: 0.03, pulses: 1, from: 0, rate: 48000,
                rampFrames: 1200)
            #expect(m.pulses[0].onsetMarginDB < 40, "a click measured \(m.pulses[0].onsetMarginDB) dB at \(hz) Hz")
        }
    }

    /// Three ramped 200 ms pulses, the second with a period of silence in it as an xrun leaves
    /// in a recording: with the xrun reported, the measure still finds three pulses, the holed
    /// one with a step that rules it out and the other two whole; without, it is two gaps.
    @Test func aPeriodAnXrunSilencedIsNotAGap() throws {
        let (rate, ramp, amplitude, hz) = (48000.0, 1200, 0.03, 1000.0)
        var x = [Double](repeating: 0, count: 4800)
        for _ in 0..<3 {
            // 200 ms between the half-amplitude points of 25 ms raised-cosine ramps.
            x +=
                (0..<10800).map { n in
                    let gain = min(1, Double(min(n, 10800 - n)) / Double(ramp))
                    return amplitude * (0.5 - 0.5 * cos(.pi * gain)) * sin(2 * .pi * hz * Double(n) / rate)
                } + [Double](repeating: 0, count: 8400)
        }
        for n in (4800 + 19200 + 5000)..<(4800 + 19200 + 5256) { x[n] = 0 }
        let silent = [Double](repeating: 0, count: x.count)
        let (m, _) = try Self.measurePulses(
            [x, silent], ear: 0, hz: hz, amplitude: amplitude, pulses: 3, from: 0, rate: rate, rampFrames: ramp, xruns: 1)
        #expect(m.pulses.map { abs($0.onMs - 200) < 1 } == [true, true, true], "\(m.pulses.map(\.onMs))")
        #expect(m.pulses.map { $0.steepestStep <= 1.02 } == [true, false, true], "\(m.pulses.map(\.steepestStep))")
        #expect(m.pulses.map(\.holed) == [false, true, false])
        #expect(abs(m.pulses[2].levelDBFS - 20 * log10(amplitude)) < 0.1 && abs(m.pulses[2].hz - hz) < 0.1, "\(m.pulses[2])")
        let (strict, _) = try Self.measurePulses(
            [x, silent], ear: 0, hz: hz, amplitude: amplitude, pulses: 3, from: 0, rate: rate, rampFrames: ramp)
        #expect(abs(strict.pulses[1].onMs - 200) > 1, "\(strict.pulses.map(\.onMs))")
    }

    /// The envelope of a sine of `hz` whose amplitude moves slowly (a ramp): the Teager-Kaiser
    /// energy x[n]^2 - x[n-1] x[n+1] is A^2 sin^2(w), whatever the phase.
    static func envelope(_ x: [Double], hz: Double, rate: Double) -> [Double] {
        let scale = 1 / sin(2 * .pi * hz / rate)
        var env = [Double](repeating: 0, count: x.count)
        for n in 1..<(x.count - 1) { env[n] = (max(0, x[n] * x[n] - x[n - 1] * x[n + 1])).squareRoot() * scale }
        return env
    }

    /// The energy of `x` in the band `low...high` (a DFT every 1 Hz).
    static func bandEnergy(_ x: [Double], low: Double, high: Double, rate: Double) -> Double {
        var total = 0.0
        var f = low
        while f <= high {
            let w = 2 * Double.pi * f / rate
            var (re, im) = (0.0, 0.0)
            for (n, v) in x.enumerated() {
                re += v * cos(w * Double(n))
                im -= v * sin(w * Double(n))
            }
            total += re * re + im * im
            f += 1
        }
        return total
    }

    /// Measures the presentation of `pulses` pulses of sine `hz`, peak `amplitude`, in `ear`
    /// (0 left, 1 right) of the recording, starting the search at `from`. In a recording with
    /// xruns, a crossing counts only when the envelope stays on its new side for 50 ms: a
    /// period dropped or left silent inside a pulse (JACK's, in the recording) is not a gap.
    static func measurePulses(
        _ channels: [[Double]], ear: Int, hz: Double, amplitude: Double, pulses: Int, from: Int, rate: Double, rampFrames: Int,
        xruns: Int = 0
    ) throws -> (PulseMeasure, end: Int) {
        let x = channels[ear]
        let env = envelope(x, hz: hz, rate: rate)
        let half = amplitude / 2
        let hold = xruns > 0 ? Int(0.05 * rate) : 1
        // The half-amplitude crossings, interpolated between frames: rises and falls in turn.
        var edges: [Double] = []
        var n = max(from, 1)
        while n < env.count - 1, edges.count < 2 * pulses {
            let rising = edges.count % 2 == 0
            let (a, b) = (env[n] - half, env[n + 1] - half)
            if rising ? (a < 0 && b >= 0) : (a >= 0 && b < 0),
                env[(n + 1)..<min(env.count, n + 1 + hold)].allSatisfy({ rising ? $0 >= half : $0 < half })
            {
                edges.append(Double(n) + a / (a - b))
            }
            n += 1
        }
        try #require(edges.count == 2 * pulses, "found \(edges.count) edges of \(2 * pulses) at \(hz) Hz: \(edges)")
        try #require(
            Int(edges[0]) >= 2 * rampFrames && Int(edges.last!) + 2 * rampFrames < x.count,
            "a pulse at \(hz) Hz is at the recording's edge: edges \(edges)")
        let sineStep = amplitude * 2 * .pi * hz / rate
        func steepest(_ range: Range<Int>) -> Double {
            (range.dropFirst().map { abs(x[$0] - x[$0 - 1]) }.max() ?? 0) / sineStep
        }
        let length = Int(0.05 * rate)
        let third = pow(2, 1.0 / 6)
        let measured = stride(from: 0, to: edges.count, by: 2).map { i -> Pulse in
            let (rise, fall) = (Int(edges[i]), Int(edges[i + 1]))
            // The steady part: from one ramp after the rise to one before the fall.
            var (level, measuredHz) = (Double.nan, Double.nan)
            if fall - rise > 2 * rampFrames + 4 {
                let steady = Array(x[(rise + rampFrames)..<(fall - rampFrames)])
                let rms = (steady.map { $0 * $0 }.reduce(0, +) / Double(steady.count)).squareRoot()
                level = 20 * log10(rms * 2.0.squareRoot())
                // The frequency from the first and last rising zero crossings, interpolated.
                let crossings = steady.indices.dropLast().compactMap { j -> Double? in
                    steady[j] < 0 && steady[j + 1] >= 0 ? Double(j) + steady[j] / (steady[j] - steady[j + 1]) : nil
                }
                if crossings.count > 1 { measuredHz = Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / rate) }
            }
            // The onset: a 50 ms Hann window centred on the rise (its half-amplitude point).
            let first = Int(edges[i].rounded()) - length / 2
            let onset = (0..<length).map { x[first + $0] * (0.5 - 0.5 * cos(2 * .pi * Double($0) / Double(length - 1))) }
            func band(_ f: Double) -> Double { bandEnergy(onset, low: f / third, high: f * third, rate: rate) }
            var (run, holed) = (0, false)
            for j in max(0, rise - rampFrames / 4)..<min(x.count, fall + rampFrames / 4) where !holed {
                run = x[j] == 0 ? run + 1 : 0
                holed = run >= 8
            }
            return Pulse(
                rise: edges[i], fall: edges[i + 1], onMs: (edges[i + 1] - edges[i]) / rate * 1000, levelDBFS: level, hz: measuredHz,
                onsetMarginDB: 10 * log10(band(hz) / max(band(hz / 2), band(2 * hz))),
                steepestStep: steepest((rise - rampFrames)..<(fall + rampFrames)), holed: holed)
        }
        let offMs = stride(from: 1, to: edges.count - 1, by: 2).map { (edges[$0 + 1] - edges[$0]) / rate * 1000 }
        let (start, end) = (Int(edges[0]) - 2 * rampFrames, Int(edges.last!) + 2 * rampFrames)
        let other = channels[1 - ear][start..<end].map(abs).max() ?? 1
        let measure = PulseMeasure(
            pulses: measured, offMs: offMs, otherEarDBFS: 20 * log10(max(other, 1e-20)),
            endFrame: edges.last! + Double(rampFrames) / 2, steepestStep: steepest(start..<end))
        return (measure, end)
    }

    /// Three 200 ms pulses 200 ms apart at 500, 1000 and 4000 Hz, at three levels, in one ear
    /// or the other: the level asked within 0.5 dB, the frequency within 1 Hz, pulses and gaps
    /// within 1 ms of 200, the other ear silent, no click at the onset; the RT thread clean.
    @Test func pulsedTonesAreExactInLevelFrequencyAndTiming() throws {
        let server = try JackTestServer(period: 256)
        let daemon = try DaemonUnderTest(server: server, audit: true)
        try daemon.waitUntilProcessing()
        let rate = 48000.0
        let socket = RibbitPaths(environment: daemon.environment).socketPath
        // Refused, one line each: bad patterns, and seconds with a pattern. Such a request cannot
        // be made as a value, and the daemon refuses the line a client writes by hand.
        let bad: [(pulses: Int, onMs: Double, offMs: Double, message: String)] = [
            (0, 200, 200, "pulses are from 1 to 10"), (3, 20, 200, "onMs is from 50 to 5000"), (3, 200, 5, "offMs is from 25 to 5000"),
            (10, 5000, 5000, "at most 60 s"),
        ]
        for pattern in bad {
            #expect(throws: RequestError.self) { try TonePulses(count: pattern.pulses, onMs: pattern.onMs, offMs: pattern.offMs) }
        }
        let lines =
            bad.map {
                (
                    #"{"command":"tone","frequencyHz":1000,"levelDBFS":-30,"ear":"left","pulses":\#($0.pulses),"onMs":\#($0.onMs),"offMs":\#($0.offMs)}"#,
                    $0.message
                )
            } + [
                (
                    #"{"command":"tone","frequencyHz":1000,"levelDBFS":-30,"ear":"left","pulses":3,"onMs":200,"offMs":200,"seconds":2}"#,
                    "without seconds"
                )
            ]
        for (line, message) in lines {
            let reply = try #require(try rawRequest(socket, Data((line + "\n").utf8)))
            #expect(!reply.ok && (reply.error ?? "").contains(message) && !(reply.error ?? "").contains(where: \.isNewline), "\(reply)")
        }

        let tones: [(hz: Double, level: Double, ear: ToneEar)] = [(500, -30, .left), (1000, -45, .right), (4000, -24, .left)]
        // The three tones, recorded; played again (three times at most) when JACK reported an
        // xrun, which drops or repeats a period of the recording.
        func playTones() throws -> (Probe.Recording, [ClosedRange<Double>]) {
            // Room for three tones and their round trips however slow a loaded machine is.
            let probe = try Probe(server: server, signal: "silence", levelDBFS: -100, seconds: 8)
            try probe.waitUntilPlaying()
            usleep(300_000)
            // When status said each would end (CLOCK_MONOTONIC s): secondsLeft counted from some
            // moment between the request and its reply, so the end lies between those two plus it.
            var predictedEnds: [ClosedRange<Double>] = []
            for tone in tones {
                let sent = MonotonicSeconds.now()
                let signal = try ToneSignal(
                    frequencyHz: tone.hz, levelDBFS: tone.level, ear: tone.ear,
                    timing: .pulsed(try TonePulses(count: 3, onMs: 200, offMs: 200)))
                let reply = try ControlClient.send(.tone(.play(signal)), socketPath: socket)
                let status = try #require(reply.status?.tone, "\(reply)")
                predictedEnds.append((sent + status.secondsLeft)...(MonotonicSeconds.now() + status.secondsLeft))
                // It ends after three pulses, two gaps and the last fade-out (1.025 s), once the
                // audio process has switched to the tone (about 26 ms at 256 frames).
                #expect(status.pulses == 3 && status.onMs == 200 && status.offMs == 200 && status.levelDBFS == tone.level, "\(status)")
                #expect(status.secondsLeft > 1.025 && status.secondsLeft < 1.075, "secondsLeft \(status.secondsLeft)")
                usleep(1_000_000)
                // Over the socket: `ribbitd status` would start a 100 MB process on a busy machine
                // just as the last pulse ends (an xrun in the probe's recording twice).
                let later = try ControlClient.send(.status, socketPath: socket)
                #expect((later.status?.tone?.secondsLeft ?? 0) < 0.1, "\(later)")
                usleep(300_000)
            }
            return (try probe.finish(besides: daemon), predictedEnds)
        }
        // A disturbance (an xrun JACK reported, or a cycle the probe missed) may drop, repeat or
        // silence a period of the recording: JACK's, not the tone's. Played again (three times
        // at most) while there is one; the take with the fewest is judged.
        var (recording, predictedEnds) = try playTones()
        var plays = 1
        while !recording.disturbances.isEmpty && plays < 3 {
            let again = try playTones()
            plays += 1
            if again.0.disturbances.count < recording.disturbances.count { (recording, predictedEnds) = again }
        }
        // A report can trail its glitch: a stretch is clean with no disturbance from 4 periods
        // before it to 16 after (85 ms at 256 frames).
        let period = Double(server.period)
        func clean(_ from: Double, _ to: Double) -> Bool {
            !recording.disturbances.contains { Double($0) >= from - 4 * period && Double($0) <= to + 16 * period }
        }
        let channels = recording.recorded.map { $0.map(Double.init) }
        let ramp = Int(0.025 * rate)
        var from = 0
        var report: [String] = []
        var judgedPulses = 0
        for (tone, predicted) in zip(tones, predictedEnds) {
            let (m, end) = try Self.measurePulses(
                channels, ear: tone.ear == .left ? 0 : 1, hz: tone.hz, amplitude: pow(10, tone.level / 20), pulses: 3, from: from,
                rate: rate, rampFrames: ramp, xruns: recording.disturbances.count)
            from = end
            let onMs = m.pulses.map(\.onMs)
            report.append(
                "\(Int(tone.hz)) Hz \(tone.level) dBFS: levels \(m.pulses.map(\.levelDBFS)), \(m.pulses.map(\.hz)) Hz, on \(onMs) ms, off \(m.offMs) ms, other ear \(m.otherEarDBFS) dBFS, onset margins \(m.pulses.map(\.onsetMarginDB)) dB, steepest step \(m.steepestStep) x the sine's"
            )
            #expect(m.otherEarDBFS < -90, "the other ear got \(m.otherEarDBFS) dBFS")
            // Every pulse and gap the recording kept clean is judged in full: no hole in it
            // and no disturbance near it.
            let ramped = Double(ramp)
            let judged = m.pulses.indices.filter { p in !m.pulses[p].holed && clean(m.pulses[p].rise - ramped, m.pulses[p].fall + ramped) }
            judgedPulses += judged.count
            for p in judged {
                let pulse = m.pulses[p]
                let which = "pulse \(p + 1) at \(tone.hz) Hz"
                #expect(abs(pulse.onMs - 200) < 1, "\(which) lasted \(pulse.onMs) ms")
                #expect(pulse.steepestStep <= 1.02, "a step of \(pulse.steepestStep) x the sine's steepest, \(which)")
                #expect(abs(pulse.levelDBFS - tone.level) < 0.5, "level \(pulse.levelDBFS) for \(tone.level), \(which)")
                #expect(abs(pulse.hz - tone.hz) < 1, "frequency \(pulse.hz) for \(tone.hz), \(which)")
                #expect(pulse.onsetMarginDB >= 40, "onset margin \(pulse.onsetMarginDB) dB, \(which)")
            }
            for g in m.offMs.indices where judged.contains(g) && judged.contains(g + 1) && clean(m.pulses[g].fall, m.pulses[g + 1].rise) {
                #expect(abs(m.offMs[g] - 200) < 1, "gap \(g + 1) at \(tone.hz) Hz lasted \(m.offMs[g]) ms")
            }
            // secondsLeft against the recording's clock: the end heard vs. the end announced,
            // within 20 ms (periods of 5.3 ms; a machine loaded by other tests wakes late).
            let frame = Int(m.endFrame)
            let callback = recording.callbacks.last { $0.frame <= frame } ?? (0, 0)
            let heard = Double(callback.nanoseconds) / 1e9 + (m.endFrame - Double(callback.frame)) / rate
            let late = heard > predicted.upperBound ? heard - predicted.upperBound : min(0, heard - predicted.lowerBound)
            report[report.count - 1] += String(
                format: ", %d of 3 pulses judged, ended %+.1f ms from when secondsLeft said (a window of %.1f ms)", judged.count,
                late * 1000, (predicted.upperBound - predicted.lowerBound) * 1000)
            if judged.count == 3 && clean(m.pulses[0].rise, m.endFrame) {
                #expect(abs(late) < 0.02, "ended \(late) s outside when secondsLeft said")
            }
        }
        print(
            "pulsed tones (played \(plays) times, \(recording.xruns) xruns and \(recording.disturbances.count) disturbances in the one judged, the fewest):\n"
                + report.joined(separator: "\n"))
        // However busy the machine, a third of the pulses must be judged: a test that judges
        // nothing passes nothing.
        #expect(judgedPulses >= 3, "only \(judgedPulses) of 9 pulses were clean enough to judge")

        #expect(try daemon.stop() == 0)
        try daemon.expectCleanAudioThread(callbacks: 4 * 48000 / 256)
    }
}
