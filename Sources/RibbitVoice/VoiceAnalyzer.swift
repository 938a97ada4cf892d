import Glibc
import RibbitDSP

/// The microphone's voice analysis: mono samples in, one `VoiceFrame` per 10 ms hop out.
/// Pure (no I/O, no Foundation); the daemon runs it on the control side from the dump tap.
///
/// - Level: sine-referenced (a full-scale sine reads 0 dBFS) through a 40 ms Hann window (the last
///   four hops). A low voice's energy is bunched in each cycle: on a steady 90 Hz voice a
///   rectangular 20 ms window swung by 2 dB with the cycle's phase, the Hann by 0.06 dB (72 Hz:
///   0.05 dB); its effective length (about 20 ms) still resolves a 150 ms syllable.
/// - Pitch: YIN (de Cheveigné & Kawahara 2002) on the signal low-passed at 2 kHz and decimated to
///   about 12 kHz: the difference function costs window × lags, both a quarter of what they are at
///   48 kHz, and the voice's first harmonics are what carries its period. The comparison window is
///   the newest 15 ms (the longest period, 70 Hz), against the same window one lag earlier.
/// - Voicing: clear enough, loud enough, in range, and confirmed over three hops whose fast level
///   has not fallen from the run's peak: a knock is periodic for a few hops but decays, a voice
///   holds (without the decay rule 11 % of the test knocks' frames were voiced, with it none).
/// - Cost (ribbit-bench, release): about 3 ms of CPU per second of 48 kHz audio.
public struct VoiceAnalyzer: Sendable {
    public static let hopSeconds = 0.01
    /// The voice's pitch range: children's high voices and shouting up to 800 Hz, men down to 70 Hz.
    public static let f0RangeHz = 70.0...800.0
    /// Under this level (dBFS, whatever the calibration) nothing is voiced and the pitch is not searched.
    public static let voicedFloorDBFS = -70.0
    /// YIN's absolute threshold: the first lag whose normalised difference dips under it is the period.
    static let dipThreshold: Float = 0.2
    /// The octave guard's threshold for the period the voice already had.
    static let holdThreshold: Float = 0.35
    /// Clarity (1 - YIN's d') to start a voiced run, and to keep one going (hysteresis).
    static let startClarity = 0.75
    static let keepClarity = 0.6
    /// Hops of candidates before a run is voiced, and how far its level may have fallen from the
    /// run's peak by then (a knock falls 5 to 30 dB a hop).
    static let confirmHops = 3
    static let maxDecayDB = 6.0
    /// During confirmation the pitch may move this much (octaves) a hop before the run restarts.
    static let maxStepOctaves = 0.1
    /// Unvoiced hops after which the pitch history (the median and the octave guard) is forgotten.
    static let forgetHops = 5
    /// Input magnitudes are clipped here so no sum can overflow (far beyond full scale).
    static let sampleLimit: Float = 1e6

    public let sampleRate: Double
    /// The microphone's dB SPL at 0 dBFS (nil: uncalibrated, levels in dBFS).
    public let dBSPLAtZeroDBFS: Double?
    /// The pitch analysis' rate after decimation.
    public let analysisRate: Double
    /// From the end of a hop back to the centre of the pitch window's newest part (the low-pass
    /// filter's delay and half the comparison window); a lag of `T` adds `T/2`, and on a glide the
    /// 5-hop median adds two hops.
    public let analysisDelaySeconds: Double

    private let hop: Int
    private let decimation: Int
    private let taps: Int
    private let lowPass: [Float]
    /// Comparison window and lag range, in analysis samples.
    private let window: Int
    private let tauMin: Int
    private let tauMax: Int
    /// The pitch buffer's length: the window plus the longest lag plus one for the parabola.
    private let span: Int
    /// DC blocker pole (about 20 Hz): a DC offset must not look like a long period.
    private let dcPole: Double

    // Filter and buffers, preallocated; the rings are written twice so a window is contiguous.
    private var firRing: [Float]
    private var firPosition = 0
    private var decimationPhase = 0
    private var pitchRing: [Float]
    private var pitchPosition = 0
    private var difference: [Float]
    private var dcInput = 0.0
    private var dcOutput = 0.0
    /// The last `levelWindow.count` samples' squares (a ring) and the normalised Hann weights.
    private let levelWindow: [Double]
    private var squares: [Double]
    private var squaresPosition = 0
    /// This hop's and the last hop's sums of squares: the fast level (20 ms, rectangular) the decay
    /// rule needs; the Hann level smooths a knock's fall over 40 ms, one hop swings with a low
    /// voice's cycles.
    private var hopSquares = 0.0
    private var lastHopSquares = 0.0
    private var inHop = 0
    private var hops = 0

    // Voicing state.
    private var runHops = 0
    private var runPeakDB = -Double.infinity
    private var runDecayed = false
    private var runLastF0 = 0.0
    private var voiced = false
    private var unvoicedHops = 0
    /// The last five candidates' f0 (a ring), for the median and the octave guard.
    private var history: [Double] = [0, 0, 0, 0, 0]
    private var historyCount = 0
    private var historyPosition = 0

    public init(sampleRate: Double, dBSPLAtZeroDBFS: Double? = nil) {
        precondition(sampleRate >= 8000 && sampleRate <= 384_000, "VoiceAnalyzer: sample rate \(sampleRate) Hz is not 8-384 kHz")
        self.sampleRate = sampleRate
        self.dBSPLAtZeroDBFS = dBSPLAtZeroDBFS
        hop = max(1, Int((sampleRate * Self.hopSeconds).rounded()))
        decimation = max(1, Int(sampleRate / 12000))
        analysisRate = sampleRate / Double(decimation)
        // A windowed-sinc low-pass about 1 ms long (Hamming: over 50 dB down above 6 kHz at 48 kHz).
        taps = max(15, Int(sampleRate / 1000)) | 1
        let cutoff = min(2000, 0.25 * analysisRate) / sampleRate
        var coefficients = [Float](repeating: 0, count: taps)
        var sum = 0.0
        let middle = Double(taps - 1) / 2
        for i in 0..<taps {
            let t = Double(i) - middle
            let sinc = t == 0 ? 2 * cutoff : sin(2 * .pi * cutoff * t) / (.pi * t)
            let value = sinc * (0.54 - 0.46 * cos(2 * .pi * Double(i) / Double(taps - 1)))
            coefficients[i] = Float(value)
            sum += value
        }
        lowPass = coefficients.map { $0 / Float(sum) }
        window = max(8, Int((analysisRate / Self.f0RangeHz.lowerBound).rounded(.up)))
        tauMin = max(2, Int(analysisRate / Self.f0RangeHz.upperBound))
        tauMax = Int((analysisRate / Self.f0RangeHz.lowerBound).rounded(.up)) + 1
        span = window + tauMax + 2
        dcPole = 1 - 2 * .pi * 20 / sampleRate
        let levelLength = 4 * hop
        let hann = (0..<levelLength).map { HannWindow.centredValue($0, length: levelLength) }
        let hannSum = hann.reduce(0, +)
        levelWindow = hann.map { $0 / hannSum }
        squares = [Double](repeating: 0, count: levelLength)
        firRing = [Float](repeating: 0, count: 2 * taps)
        pitchRing = [Float](repeating: 0, count: 2 * span)
        difference = [Float](repeating: 0, count: tauMax + 2)
        analysisDelaySeconds = middle / sampleRate + Double(window) / 2 / analysisRate
    }

    public mutating func append(_ mono: [Float]) -> [VoiceFrame] {
        var frames: [VoiceFrame] = []
        frames.reserveCapacity((inHop + mono.count) / hop)
        for raw in mono {
            // NaN and infinity are silence; absurd magnitudes are clipped.
            let x = raw.isFinite ? min(max(raw, -Self.sampleLimit), Self.sampleLimit) : 0
            let sample = Double(x)
            squares[squaresPosition] = sample * sample
            hopSquares += sample * sample
            squaresPosition = squaresPosition + 1 == squares.count ? 0 : squaresPosition + 1
            var y = sample - dcInput + dcPole * dcOutput
            if abs(y) < 1e-30 { y = 0 }  // no denormals after long silence
            dcInput = sample
            dcOutput = y
            firRing[firPosition] = Float(y)
            firRing[firPosition + taps] = Float(y)
            firPosition = firPosition + 1 == taps ? 0 : firPosition + 1
            decimationPhase += 1
            if decimationPhase == decimation {
                decimationPhase = 0
                pushDecimated()
            }
            inHop += 1
            if inHop == hop {
                inHop = 0
                frames.append(endHop())
            }
        }
        return frames
    }

    private mutating func pushDecimated() {
        var acc: Float = 0
        let start = firPosition
        firRing.withUnsafeBufferPointer { ring in
            lowPass.withUnsafeBufferPointer { h in
                for i in 0..<taps { acc += ring[start + i] * h[i] }
            }
        }
        pitchRing[pitchPosition] = acc
        pitchRing[pitchPosition + span] = acc
        pitchPosition = pitchPosition + 1 == span ? 0 : pitchPosition + 1
    }

    private mutating func endHop() -> VoiceFrame {
        hops += 1
        let meanSquare = weightedMeanSquare()
        let fastMeanSquare = (hopSquares + lastHopSquares) / Double(2 * hop)
        lastHopSquares = hopSquares
        hopSquares = 0
        let fastDB = fastMeanSquare > 0 ? 10 * log10(2 * fastMeanSquare) : VoiceFrame.floorDB
        let dBFS = meanSquare > 0 ? max(10 * log10(2 * meanSquare), VoiceFrame.floorDB) : VoiceFrame.floorDB
        let levelDB = dBFS <= VoiceFrame.floorDB ? VoiceFrame.floorDB : dBFS + (dBSPLAtZeroDBFS ?? 0)

        var clarity = 0.0
        var f0: Double?
        if dBFS >= Self.voicedFloorDBFS {
            let (lag, dPrime) = pitchLag()
            clarity = Double(min(max(1 - dPrime, 0), 1))
            if lag > 0 { f0 = analysisRate / lag }
        }
        let needed = voiced ? Self.keepClarity : Self.startClarity
        let candidate = f0.map { Self.f0RangeHz.contains($0) } == true && clarity >= needed && dBFS >= Self.voicedFloorDBFS
        var reported: Double?
        if candidate, let f0 {
            let guarded = octaveGuard(f0)
            if runHops > 0, !voiced, abs(log2(guarded / runLastF0)) > Self.maxStepOctaves {
                runHops = 0  // the pitch jumped: not one steady sound yet
                runPeakDB = -.infinity
                runDecayed = false
            }
            runHops += 1
            runPeakDB = max(runPeakDB, fastDB)
            runLastF0 = guarded
            if !voiced, runHops >= Self.confirmHops, !runDecayed {
                if fastDB >= runPeakDB - Self.maxDecayDB { voiced = true } else { runDecayed = true }
            }
            if runDecayed { historyCount = 0 } else { remember(guarded) }
            unvoicedHops = 0
            if voiced { reported = median() }
        } else {
            voiced = false
            runHops = 0
            runPeakDB = -.infinity
            runDecayed = false
            unvoicedHops += 1
            if unvoicedHops > Self.forgetHops { historyCount = 0 }
        }
        return VoiceFrame(
            time: Double(hops) * Self.hopSeconds, levelDB: levelDB, calibrated: dBSPLAtZeroDBFS != nil, clarity: clarity, voiced: voiced,
            f0Hz: reported)
    }

    /// The Hann-weighted mean square of the level window (oldest sample first).
    private func weightedMeanSquare() -> Double {
        let start = squaresPosition
        return squares.withUnsafeBufferPointer { ring in
            levelWindow.withUnsafeBufferPointer { w in
                let count = ring.count
                var sum = 0.0
                for i in 0..<(count - start) { sum += ring[start + i] * w[i] }
                for i in 0..<start { sum += ring[i] * w[count - start + i] }
                return sum
            }
        }
    }

    /// YIN on the pitch buffer: the period in analysis samples (interpolated; 0 when none) and its d'.
    private mutating func pitchLag() -> (Double, Float) {
        let start = pitchPosition  // the oldest sample; the newest is at start + span - 1
        let window = window
        let tauMax = tauMax
        let tauMin = tauMin
        let span = span
        return pitchRing.withUnsafeBufferPointer { ring in
            difference.withUnsafeMutableBufferPointer { d in
                let newest = start + span - window
                // d(tau) for the newest window against itself tau earlier, then YIN's cumulative
                // mean normalisation in place (d'(tau) = d(tau) * tau / sum of d(1...tau)).
                var running: Float = 0
                d[0] = 1
                for tau in 1...(tauMax + 1) {
                    var sum: Float = 0
                    let lagged = newest - tau
                    for j in 0..<window {
                        let delta = ring[newest + j] - ring[lagged + j]
                        sum += delta * delta
                    }
                    running += sum
                    d[tau] = running > 1e-20 ? sum * Float(tau) / running : 1
                }
                // The first dip under the threshold (its local minimum), else the deepest one.
                var best = -1
                var tau = tauMin
                while tau <= tauMax {
                    if d[tau] < Self.dipThreshold {
                        while tau < tauMax, d[tau + 1] < d[tau] { tau += 1 }
                        best = tau
                        break
                    }
                    tau += 1
                }
                if best < 0 {
                    best = tauMin
                    for t in tauMin...tauMax where d[t] < d[best] { best = t }
                }
                // A sound that repeats faster than a voice can (a whistle or a squeal over 800 Hz)
                // dips at every multiple of its period: the first one in range is not a pitch.
                if Self.repeatsFaster(d, lag: best, tauMin: tauMin) { return (0, 1) }
                return Self.parabola(d, best)
            }
        }
    }

    /// Whether d' dips under `dipThreshold` near a whole fraction lag / k (k >= 2) shorter than
    /// `tauMin`: the sound's period lies above the pitch range and `lag` is a multiple of it
    /// (1000 Hz read as 500, 2200 as 733 Hz). d' is known there: the difference function runs
    /// from lag 1. A voice in range does not dip at half its period unless its fundamental is far
    /// weaker than its second harmonic.
    private static func repeatsFaster(_ d: UnsafeMutableBufferPointer<Float>, lag: Int, tauMin: Int) -> Bool {
        var k = 2
        while lag / k >= 2 {
            let sub = Double(lag) / Double(k)
            let low = max(2, Int(sub.rounded(.down)) - 1)
            let high = min(tauMin - 1, Int(sub.rounded(.up)) + 1)
            if low <= high {
                for t in low...high where d[t] < dipThreshold { return true }
            }
            k += 1
        }
        return false
    }

    /// The parabola through d'(tau-1), d'(tau), d'(tau+1): the lag and depth of its minimum.
    private static func parabola(_ d: UnsafeMutableBufferPointer<Float>, _ tau: Int) -> (Double, Float) {
        let a = d[tau - 1]
        let b = d[tau]
        let c = d[tau + 1]
        let curvature = a - 2 * b + c
        guard curvature > 0 else { return (Double(tau), b) }
        let offset = min(max((a - c) / (2 * curvature), -1), 1)
        return (Double(tau) + Double(offset), b - (a - c) * offset / 4)
    }

    /// A drop of an octave from the recent pitch (YIN took twice the period because the period's
    /// own dip missed the threshold, as on a rough voice or in noise) is taken back when the recent
    /// period still dips under `holdThreshold`: a pitch that goes on gets a laxer test than a new
    /// one. A jump up is left alone: YIN's first dip under the threshold is the period, and
    /// holding the lower pitch there would lock a sub-harmonic in (measured: it did).
    private func octaveGuard(_ f0: Double) -> Double {
        guard historyCount >= 3 else { return f0 }
        let reference = median()
        guard (0.45...0.55).contains(f0 / reference) else { return f0 }
        let referenceLag = analysisRate / reference
        let low = max(tauMin, Int(referenceLag * 0.9))
        let high = min(tauMax, Int((referenceLag * 1.1).rounded(.up)))
        guard low < high else { return f0 }
        var best = low
        for t in low...high where difference[t] < difference[best] { best = t }
        guard best > low, best < high, difference[best] <= Self.holdThreshold else { return f0 }
        // Refine the kept lag as the main search does.
        let a = difference[best - 1]
        let b = difference[best]
        let c = difference[best + 1]
        let curvature = a - 2 * b + c
        let offset = curvature > 0 ? Double(min(max((a - c) / (2 * curvature), -1), 1)) : 0
        return analysisRate / (Double(best) + offset)
    }

    private mutating func remember(_ f0: Double) {
        history[historyPosition] = f0
        historyPosition = (historyPosition + 1) % history.count
        historyCount = min(historyCount + 1, history.count)
    }

    /// The median of the remembered f0s (the newest `historyCount`), without allocating.
    private func median() -> Double {
        var values: (Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0)
        let count = historyCount
        withUnsafeMutableBytes(of: &values) { raw in
            let v = raw.bindMemory(to: Double.self)
            for i in 0..<count { v[i] = history[(historyPosition - 1 - i + 2 * history.count) % history.count] }
            // Insertion sort of at most five values.
            for i in 1..<max(count, 1) {
                let key = v[i]
                var j = i - 1
                while j >= 0, v[j] > key {
                    v[j + 1] = v[j]
                    j -= 1
                }
                v[j + 1] = key
            }
        }
        return withUnsafeBytes(of: values) { $0.bindMemory(to: Double.self)[(count - 1) / 2] }
    }
}
