import Glibc

/// Seeded test signals for the voice analysis: a synthetic voice and the sounds it must not take
/// for one (claps, knocks, noise bursts). Amplitudes are linear (1 = full scale).
public enum VoiceSignals {
    /// A voice: a glottal-like harmonic series whose period and amplitude are drawn anew each
    /// cycle (jitter, shimmer), so the cycles are really unequal, as a voice's are.
    public struct Voice: Sendable {
        /// f0 at the start and the end (an exponential glide between them; equal: constant).
        public var startHz: Double
        public var endHz: Double
        public var seconds: Double
        /// Level of the steady part, dB re a full-scale sine (10*log10(2*mean square)).
        public var levelDBFS: Double = -20
        /// Harmonic amplitudes fall this much per octave (a voice's source is about -12).
        public var tiltDBPerOctave: Double = -12
        /// Harmonics stop here (or at 0.45 of the sample rate).
        public var highestHarmonicHz: Double = 5000
        /// The first harmonic present (2: the fundamental is missing, as through a telephone).
        public var lowestHarmonic = 1
        /// Standard deviations of each cycle's period and amplitude, relative (0.01 = 1 %).
        public var jitter: Double = 0
        public var shimmer: Double = 0
        /// Every other cycle's amplitude is lowered by this (0.2 = 20 %): a rough, diplophonic
        /// voice whose true period is ambiguous (a trap for octave errors).
        public var alternation: Double = 0
        /// Vibrato: rate (Hz) and depth (relative f0 swing, 0.03 = ±3 %).
        public var vibratoHz: Double = 0
        public var vibratoDepth: Double = 0
        /// White noise added at this SNR (dB, re the voice's steady mean square); nil: none.
        public var snrDB: Double? = nil
        /// Onset and offset ramps (raised cosine), seconds.
        public var rampSeconds: Double = 0.02

        public init(startHz: Double, endHz: Double? = nil, seconds: Double) {
            self.startHz = startHz
            self.endHz = endHz ?? startHz
            self.seconds = seconds
        }

        /// The f0 the voice follows at `t` seconds (before jitter).
        public func f0(at t: Double) -> Double {
            let glide = startHz * pow(endHz / startHz, min(max(t / seconds, 0), 1))
            return glide * (1 + vibratoDepth * sin(2 * .pi * vibratoHz * t))
        }
    }

    public static func voice(_ voice: Voice, sampleRate: Double, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        let count = Int(voice.seconds * sampleRate)
        var out = [Float](repeating: 0, count: count)
        let harmonicLimit = min(voice.highestHarmonicHz, 0.45 * sampleRate)
        // Per-cycle state: phase in cycles (0..<1), this cycle's f0 factor and amplitude.
        var phase = 0.0
        var periodFactor = 1 + voice.jitter * gaussian(&random)
        var amplitude = 1 + voice.shimmer * gaussian(&random)
        var squares = 0.0
        var oddCycle = false
        let weights = (0..<1000).map { $0 == 0 ? 0 : pow(2, voice.tiltDBPerOctave / 20 * log2(Double($0))) }
        for i in 0..<count {
            let t = Double(i) / sampleRate
            let f0 = voice.f0(at: t) * periodFactor
            // sin(k x) by the Chebyshev recurrence: one sin and one cos a sample, not one per harmonic.
            let x = 2 * .pi * phase
            let twoCos = 2 * cos(x)
            var previous = 0.0
            var current = sin(x)
            var value = 0.0
            var k = 1
            while Double(k) * f0 < harmonicLimit, k < weights.count {
                if k >= voice.lowestHarmonic { value += weights[k] * current }
                (previous, current) = (current, twoCos * current - previous)
                k += 1
            }
            value *= oddCycle ? amplitude * (1 - voice.alternation) : amplitude
            squares += value * value
            out[i] = Float(value)
            phase += f0 / sampleRate
            if phase >= 1 {
                // A new cycle starts at every harmonic's zero crossing: new period and amplitude.
                phase -= 1
                oddCycle.toggle()
                periodFactor = 1 + voice.jitter * gaussian(&random)
                amplitude = max(0, 1 + voice.shimmer * gaussian(&random))
            }
        }
        // Scale to the level, then add the noise and the ramps.
        let meanSquare = squares / Double(max(count, 1))
        let gain = meanSquare > 0 ? (pow(10, voice.levelDBFS / 10) / 2 / meanSquare).squareRoot() : 0
        let noiseRMS = voice.snrDB.map { (pow(10, voice.levelDBFS / 10) / 2 / pow(10, $0 / 10)).squareRoot() } ?? 0
        let noise = noiseRMS > 0 ? Signals.whiteNoise(count: count, rms: noiseRMS, seed: seed &+ 1) : []
        let ramp = max(1, Int(voice.rampSeconds * sampleRate))
        for i in 0..<count {
            var value = Double(out[i]) * gain
            if !noise.isEmpty { value += Double(noise[i]) }
            out[i] = Float(value * envelope(i, count: count, ramp: ramp))
        }
        return out
    }

    /// A hand clap: a broadband burst decaying exponentially, `seconds` long (5-30 ms) to -60 dB.
    public static func clap(seconds: Double, peak: Double, sampleRate: Double, seed: UInt64) -> [Float] {
        let count = max(1, Int(seconds * sampleRate))
        let noise = Signals.whiteNoise(count: count, rms: 1, seed: seed)
        let decay = log(1000.0) / Double(count)  // -60 dB at the end
        return (0..<count).map { Float(peak / 3 * Double(noise[$0]) * exp(-decay * Double($0))) }
    }

    /// A knock on a table or door: a damped low resonance (100-400 Hz) with a second, weaker mode,
    /// `seconds` long (20-80 ms) to -60 dB, struck with a short click.
    public static func knock(resonanceHz: Double, seconds: Double, peak: Double, sampleRate: Double, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        let count = max(1, Int(seconds * sampleRate))
        let decay = log(1000.0) / Double(count)
        let phase = Double.random(in: 0..<(2 * .pi), using: &random)
        let second = Double.random(in: 2.3...2.9, using: &random)
        let click = Signals.whiteNoise(count: min(count, Int(0.002 * sampleRate)), rms: 0.2, seed: seed &+ 1)
        return (0..<count).map { i in
            let t = Double(i) / sampleRate
            var value = sin(2 * .pi * resonanceHz * t + phase) + 0.3 * sin(2 * .pi * second * resonanceHz * t) * exp(-2 * decay * Double(i))
            if i < click.count { value += Double(click[i]) }
            return Float(peak * value * exp(-decay * Double(i)))
        }
    }

    /// A noise burst, white or pink, `seconds` long (50-300 ms) with 5 ms ramps, at an RMS.
    public static func noiseBurst(seconds: Double, rms: Double, pink: Bool, sampleRate: Double, seed: UInt64) -> [Float] {
        let count = max(1, Int(seconds * sampleRate))
        var noise = Signals.whiteNoise(count: count, rms: 1, seed: seed)
        if pink {
            // Paul Kellet's economy pink filter (-3 dB/octave within about 1 dB above 40 Hz).
            var b0 = 0.0
            var b1 = 0.0
            var b2 = 0.0
            for i in 0..<count {
                let w = Double(noise[i])
                b0 = 0.99765 * b0 + w * 0.0990460
                b1 = 0.96300 * b1 + w * 0.2965164
                b2 = 0.57000 * b2 + w * 1.0526913
                noise[i] = Float(b0 + b1 + b2 + w * 0.1848)
            }
        }
        let meanSquare = noise.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(count)
        let gain = meanSquare > 0 ? rms / meanSquare.squareRoot() : 0
        let ramp = max(1, Int(0.005 * sampleRate))
        return (0..<count).map { Float(Double(noise[$0]) * gain * envelope($0, count: count, ramp: ramp)) }
    }

    /// `sounds` laid into silence at the given start times (seconds); `seconds` long in all.
    public static func place(_ sounds: [(start: Double, samples: [Float])], seconds: Double, sampleRate: Double) -> [Float] {
        var out = [Float](repeating: 0, count: Int(seconds * sampleRate))
        for sound in sounds {
            let first = Int(sound.start * sampleRate)
            for (i, value) in sound.samples.enumerated() where first + i < out.count && first + i >= 0 { out[first + i] += value }
        }
        return out
    }

    private static func envelope(_ i: Int, count: Int, ramp: Int) -> Double {
        let edge = min(i, count - 1 - i)
        guard edge < ramp else { return 1 }
        return 0.5 - 0.5 * cos(.pi * Double(edge) / Double(ramp))
    }

    private static func gaussian(_ random: inout SeededRandom) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let u2 = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
