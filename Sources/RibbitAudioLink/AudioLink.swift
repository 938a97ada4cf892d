import RibbitDSP

/// The link between the daemon and its audio process (`ribbit-audio`): length-prefixed
/// binary messages on a Unix socket pair. The audio process holds the JACK client and the
/// engine and nothing else, so it stays small; the daemon decides what plays. No Foundation
/// here: both sides link this, and the audio process must not pay for Foundation's pages.
public enum AudioMessage: Equatable, Sendable {
    /// The messages' layout, passed to ribbit-audio as `--link-version`: an upgrade can replace
    /// ribbit-audio under a daemon that still runs, and the two must not guess at each other's
    /// bytes. A mismatch is refused with `failed`, whose layout (type 15, a string) never changes.
    /// 2: tones numbered, `toneStarted`, `guardedSamples` in `stats`. 3: `masker`.
    public static let linkVersion = 3

    // The daemon to the audio process.
    /// What to play from now on (crossfaded): a symmetric FIR per channel, its FFT length
    /// and the output ceiling in dBFS (never above 0).
    case filters(ceilingDBFS: Double, fftLength: Int, taps: [[Double]])
    /// The compressor that replaces the filters (crossfaded), or nil for the filters alone.
    /// Sent just before `filters`, so the audio process publishes both in one go.
    case compressor(CompressorPlan?)
    /// The wearer's volume: the compressor's trim in dB (`OverlapSaveEngine.setTrim`), glided
    /// to on the audio thread; a volume step sends only this, no design.
    case trim(Double)
    case paused(Bool)
    /// Whether to copy each period's input and output for the dump.
    case dump(Bool)
    /// A calibration tone instead of the hearing aid (`ToneRenderer`): a sine of `frequencyHz`
    /// at `levelDBFS` (the audio process clamps it to -20 dBFS and the ceiling in force) in
    /// the chosen ears for `seconds` (at most 60; 0 stops it and the hearing aid plays again);
    /// or `pulses` pulses of `seconds` each, `offSeconds` apart (a hearing test's tone).
    /// It stops by itself at the end, whatever happens to the daemon. `hearingTest` raises the
    /// -20 dBFS limit to 1 dB under 0 dBFS (the ceiling in force still holds): the daemon's
    /// hearing test converts dB HL through the calibration and never asks above its ceiling.
    /// `number`: the daemon's count of the tones it sent this process, told back in `toneStarted`.
    case tone(
        frequencyHz: Double, levelDBFS: Double, left: Bool, right: Bool, seconds: Double, pulses: Int = 1, offSeconds: Double = 0,
        hearingTest: Bool = false, number: Int = 0)
    /// A hearing test's masking noise beside its tones (`ToneRenderer.playMasker`): a third of an
    /// octave around `centerHz` at `levelDBFS` (a sine's level of the same power; its peak kept
    /// under the ceiling in force) in the chosen ears for `seconds` (0 stops it). Only heard
    /// while the tone mode runs; it stops by itself at the end.
    case masker(centerHz: Double, levelDBFS: Double, left: Bool, right: Bool, seconds: Double)
    case stop
    /// Connect these ports (source, destination), once the engine has taken every setting sent
    /// before this message: what a live measurement took away, put back after the wearer's
    /// program and volume play again (never the live microphone at a measurement's settings).
    case connect([Connection])

    // The audio process to the daemon.
    /// The JACK server answered; the audio process waits for `filters` before it activates.
    case connected(client: String, sampleRate: Int, period: Int)
    /// Activated and wired: sound flows, `latencyFrames` added (and reported to JACK).
    case running(latencyFrames: Int)
    case stats(AudioStats)
    /// Frames of the four dump channels (input left, input right, output left, output right),
    /// planar, with the xruns and the dump samples dropped (ring and link) counted when they were
    /// sent: a frame built from them knows what glitched them, without waiting for `stats`.
    case samples(frameCount: Int, channels: [Float], xruns: Int, droppedFrames: Int)
    case log(level: LogLevel, text: String)
    /// Could not open, activate or run; the process exits next.
    case failed(String)
    /// The server went away (`sampleRateChanged` false) or changed its rate; the process exits next.
    case gone(reason: String, sampleRateChanged: Bool)
    /// The output has reached what `paused` asked: silent (true), or the renderers' sound again.
    case pauseTookEffect(Bool)
    /// Tone `number` began: the audio thread rendered its first frame at `atSeconds` (the
    /// monotonic clock both processes read), whatever the scheduler did in between. A hearing
    /// test's response window opens then.
    case toneStarted(number: Int, atSeconds: Double)

    /// A JACK connection, by full port names.
    public struct Connection: Equatable, Sendable {
        public var source: String
        public var destination: String
        public init(source: String, destination: String) {
            self.source = source
            self.destination = destination
        }
    }

    public enum LogLevel: UInt8, Sendable { case debug, info, notice, warning, error }
}

/// What `status` shows of the audio thread, sent ten times a second.
public struct AudioStats: Equatable, Sendable {
    public var cycles = 0
    public var busyNanoseconds = 0
    public var longestNanoseconds = 0
    public var period = 0
    public var latencyFrames = 0
    public var xruns = 0
    /// JACK cycles the process callback did not run for (found by the frame time), and the
    /// frame time after each gap found since the previous stats, oldest first.
    public var missedCycles = 0
    public var missedAtFrameTimes: [UInt32] = []
    public var limitedSamples = 0
    /// Output samples the last guard changed (beyond the ceiling, or NaN): 0 unless a renderer
    /// went past the ceiling it should stay under.
    public var guardedSamples = 0
    public var dumpFramesDropped = 0
    /// JACK's DSP load for the whole graph, percent.
    public var dspLoadPercent = 0.0
    /// The input levels (left, right) over the last quarter second, dBFS of a sine of that
    /// power (-200: silence; only measured while the tone mode runs).
    public var inputLeftDBFS = -200.0
    public var inputRightDBFS = -200.0
    /// Whether the calibration tone mode runs (a tone sounds or the input is metered).
    public var toneMode = false
    /// What the compressor's detectors heard since the previous stats (about 100 ms), the power
    /// mean of both ears, in dB SPL through the calibration: per band and broadband. Empty and
    /// -200 while no compressor runs (bypass, no prescription) or nothing was processed.
    public var bandLevelsDBSPL: [Double] = []
    public var broadbandDBSPL = -200.0
    /// What the compressor's stages did over the last whole second (nil until one passed, and
    /// while no compressor runs).
    public var activity: StageActivity?

    public init() {}
}

extension AudioMessage {
    /// The message as bytes: a 4-byte little-endian length, then the type and the fields.
    public func encoded() -> [UInt8] {
        var out = Encoder()
        switch self {
        case .filters(let ceiling, let fftLength, let taps):
            out.byte(1)
            out.double(ceiling)
            out.int(fftLength)
            out.int(taps.count)
            for channel in taps {
                out.int(channel.count)
                for tap in channel { out.double(tap) }
            }
        case .compressor(let plan):
            out.byte(6)
            out.compressorPlan(plan)
        case .trim(let dB): out.byte(8); out.double(dB)
        case .paused(let on): out.byte(2); out.byte(on ? 1 : 0)
        case .dump(let on): out.byte(3); out.byte(on ? 1 : 0)
        case .stop: out.byte(4)
        case .connect(let connections):
            out.byte(7)
            out.int(connections.count)
            for connection in connections {
                out.string(connection.source)
                out.string(connection.destination)
            }
        case .tone(let hz, let level, let left, let right, let seconds, let pulses, let offSeconds, let hearingTest, let number):
            out.byte(5)
            out.double(hz)
            out.double(level)
            out.byte((left ? 1 : 0) | (right ? 2 : 0) | (hearingTest ? 4 : 0))
            out.double(seconds)
            out.int(pulses)
            out.double(offSeconds)
            out.int(number)
        case .masker(let hz, let level, let left, let right, let seconds):
            out.byte(9)
            out.double(hz)
            out.double(level)
            out.byte((left ? 1 : 0) | (right ? 2 : 0))
            out.double(seconds)
        case .connected(let client, let rate, let period): out.byte(10); out.string(client); out.int(rate); out.int(period)
        case .running(let latency): out.byte(11); out.int(latency)
        case .stats(let s):
            out.byte(12)
            for value in [
                s.cycles, s.busyNanoseconds, s.longestNanoseconds, s.period, s.latencyFrames, s.xruns, s.limitedSamples,
                s.dumpFramesDropped, s.missedCycles, s.guardedSamples,
            ] {
                out.int(value)
            }
            out.int(s.missedAtFrameTimes.count)
            for frameTime in s.missedAtFrameTimes { out.int(Int(frameTime)) }
            out.double(s.dspLoadPercent)
            out.double(s.inputLeftDBFS)
            out.double(s.inputRightDBFS)
            out.byte(s.toneMode ? 1 : 0)
            out.int(s.bandLevelsDBSPL.count)
            for level in s.bandLevelsDBSPL { out.double(level) }
            out.double(s.broadbandDBSPL)
            out.byte(s.activity == nil ? 0 : 1)
            if let a = s.activity {
                for values in [a.inputDBSPL, a.compressionDB, a.followingSpeech, a.noiseReductionDB, a.outputLimitDB] {
                    out.int(values.count)
                    for value in values { out.double(value) }
                }
            }
        case .samples(let frames, let channels, let xruns, let dropped):
            out.byte(13)
            out.int(xruns)
            out.int(dropped)
            out.int(frames)
            for sample in channels { out.float(sample) }
        case .log(let level, let text): out.byte(14); out.byte(level.rawValue); out.string(text)
        case .failed(let text): out.byte(15); out.string(text)
        case .gone(let reason, let rateChanged): out.byte(16); out.string(reason); out.byte(rateChanged ? 1 : 0)
        case .pauseTookEffect(let paused): out.byte(17); out.byte(paused ? 1 : 0)
        case .toneStarted(let number, let seconds): out.byte(18); out.int(number); out.double(seconds)
        }
        let length = UInt32(out.bytes.count)
        return withUnsafeBytes(of: length.littleEndian, Array.init) + out.bytes
    }

    /// Takes every complete message off the front of `buffer`; nil when a message is malformed
    /// (the other side is not ours or is broken: the link is closed).
    public static func decode(from buffer: inout [UInt8]) -> [AudioMessage]? {
        var messages: [AudioMessage] = []
        var start = 0
        while buffer.count - start >= 4 {
            let length = Int(buffer[start]) | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 24
            guard length > 0, length <= maxMessageBytes else { return nil }
            guard buffer.count - start - 4 >= length else { break }
            var reader = Decoder(bytes: buffer[(start + 4)..<(start + 4 + length)])
            guard let message = reader.message(), reader.atEnd else { return nil }
            messages.append(message)
            start += 4 + length
        }
        buffer.removeFirst(start)
        return messages
    }

    /// Larger than any message either side sends (a dump block is at most 16384 frames).
    public static let maxMessageBytes = 1 << 20
}

private struct Encoder {
    var bytes: [UInt8] = []
    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func int(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func double(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func float(_ value: Float) { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        int(utf8.count)
        bytes.append(contentsOf: utf8)
    }
}

private struct Decoder {
    let bytes: ArraySlice<UInt8>
    var at: Int
    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }
    var atEnd: Bool { at == bytes.endIndex }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.endIndex - at >= count else { return nil }
        defer { at += count }
        return bytes[at..<(at + count)]
    }
    mutating func byte() -> UInt8? { take(1)?.first }
    mutating func uint64() -> UInt64? { take(8).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } } }
    mutating func int() -> Int? { uint64().map { Int(Int64(bitPattern: $0)) } }
    mutating func double() -> Double? { uint64().map { Double(bitPattern: $0) } }
    mutating func float() -> Float? { take(4).map { Float(bitPattern: $0.reversed().reduce(0) { $0 << 8 | UInt32($1) }) } }
    mutating func string() -> String? {
        guard let count = int(), let utf8 = take(count) else { return nil }
        return String(decoding: utf8, as: UTF8.self)
    }
    mutating func count(_ size: Int) -> Int? {
        guard let n = int(), n >= 0, n <= (bytes.endIndex - at) / size else { return nil }
        return n
    }

    mutating func message() -> AudioMessage? {
        switch byte() {
        case 1:
            guard let ceiling = double(), let fftLength = int(), let channels = count(8) else { return nil }
            var taps: [[Double]] = []
            for _ in 0..<channels {
                guard let n = count(8) else { return nil }
                var channel: [Double] = []
                channel.reserveCapacity(n)
                for _ in 0..<n {
                    guard let tap = double() else { return nil }
                    channel.append(tap)
                }
                taps.append(channel)
            }
            return .filters(ceilingDBFS: ceiling, fftLength: fftLength, taps: taps)
        case 6:
            guard let plan = compressorPlan() else { return nil }
            return .compressor(plan)
        case 8: return double().map { .trim($0) }
        case 2: return byte().map { .paused($0 != 0) }
        case 3: return byte().map { .dump($0 != 0) }
        case 4: return .stop
        case 7:
            guard let n = count(16) else { return nil }  // two string lengths at least
            var connections: [AudioMessage.Connection] = []
            for _ in 0..<n {
                guard let source = string(), let destination = string() else { return nil }
                connections.append(AudioMessage.Connection(source: source, destination: destination))
            }
            return .connect(connections)
        case 5:
            guard let hz = double(), let level = double(), let ears = byte(), let seconds = double(), let pulses = int(),
                let offSeconds = double(), let number = int()
            else { return nil }
            return .tone(
                frequencyHz: hz, levelDBFS: level, left: ears & 1 != 0, right: ears & 2 != 0, seconds: seconds, pulses: pulses,
                offSeconds: offSeconds, hearingTest: ears & 4 != 0, number: number)
        case 9:
            guard let hz = double(), let level = double(), let ears = byte(), let seconds = double() else { return nil }
            return .masker(centerHz: hz, levelDBFS: level, left: ears & 1 != 0, right: ears & 2 != 0, seconds: seconds)
        case 10:
            guard let client = string(), let rate = int(), let period = int() else { return nil }
            return .connected(client: client, sampleRate: rate, period: period)
        case 11: return int().map { .running(latencyFrames: $0) }
        case 12:
            var s = AudioStats()
            guard let a = int(), let b = int(), let c = int(), let d = int(), let e = int(), let f = int(), let g = int(), let h = int(),
                let missed = int(), let guarded = int(), let missedAt = frameTimes(), let load = double(), let inputLeft = double(),
                let inputRight = double(),
                let toneMode = byte(),
                let bands = doubles(), let broadband = double(), let hasActivity = byte()
            else { return nil }
            if hasActivity == 1 {
                guard let input = doubles(), let compression = doubles(), let following = doubles(), let reduction = doubles(),
                    let limit = doubles()
                else { return nil }
                s.activity = StageActivity(
                    inputDBSPL: input, compressionDB: compression, followingSpeech: following, noiseReductionDB: reduction,
                    outputLimitDB: limit)
            }
            (s.bandLevelsDBSPL, s.broadbandDBSPL) = (bands, broadband)
            (s.cycles, s.busyNanoseconds, s.longestNanoseconds, s.period, s.latencyFrames, s.xruns, s.limitedSamples, s.dumpFramesDropped) =
                (a, b, c, d, e, f, g, h)
            (s.missedCycles, s.missedAtFrameTimes, s.guardedSamples) = (missed, missedAt, guarded)
            s.dspLoadPercent = load
            (s.inputLeftDBFS, s.inputRightDBFS, s.toneMode) = (inputLeft, inputRight, toneMode != 0)
            return .stats(s)
        case 13:
            guard let xruns = int(), let dropped = int(), let frames = int(), frames >= 0, frames <= (bytes.endIndex - at) / 16 else {
                return nil
            }
            var channels: [Float] = []
            channels.reserveCapacity(4 * frames)
            for _ in 0..<(4 * frames) {
                guard let sample = float() else { return nil }
                channels.append(sample)
            }
            return .samples(frameCount: frames, channels: channels, xruns: xruns, droppedFrames: dropped)
        case 14:
            guard let level = byte().flatMap(AudioMessage.LogLevel.init(rawValue:)), let text = string() else { return nil }
            return .log(level: level, text: text)
        case 15: return string().map { .failed($0) }
        case 16:
            guard let reason = string(), let changed = byte() else { return nil }
            return .gone(reason: reason, sampleRateChanged: changed != 0)
        case 17: return byte().map { .pauseTookEffect($0 != 0) }
        case 18:
            guard let number = int(), let seconds = double() else { return nil }
            return .toneStarted(number: number, atSeconds: seconds)
        default: return nil
        }
    }
}

// The compressor plan: a presence byte, the calibration, the transition, the noise reduction's
// strength, then per channel the
// times, the steady-noise detector (a presence byte, then slow, follow-above and blend), the
// bands (nine numbers each), the band filters and the lowering (a presence byte,
// cut-off, ratio, the sub-bands' filters and Hilbert partners, the amplitudes at the centres).
extension Encoder {
    fileprivate mutating func compressorPlan(_ plan: CompressorPlan?) {
        guard let plan else {
            byte(0)
            return
        }
        byte(1)
        double(plan.calibration.inputDBSPLAtFullScale)
        int(plan.calibration.outputDBSPLAtFullScale.count)
        for level in plan.calibration.outputDBSPLAtFullScale { double(level) }
        int(plan.calibration.outputResponseDB.count)
        for response in plan.calibration.outputResponseDB {
            let points = response.sorted { $0.key < $1.key }
            int(points.count)
            for (hz, db) in points {
                double(hz)
                double(db)
            }
        }
        double(plan.transitionHz)
        double(plan.noiseReduction.strength)
        int(plan.settings.count)
        for (channel, ear) in plan.settings.enumerated() {
            double(ear.attackMs)
            double(ear.releaseMs)
            if let steady = ear.steadyNoise {
                byte(1)
                for value in [steady.slowMs, steady.followAboveDB, steady.blendMs, steady.floorWithinDB] { double(value) }
            } else {
                byte(0)
            }
            int(ear.bands.count)
            for band in ear.bands {
                for value in [
                    band.centreHz, band.gainDB, band.kneeDBSPL, band.ratio, band.expansionKneeDBSPL, band.expansionRatio, band.limitDBSPL,
                    band.maximumGainDB, band.steadyNoiseKneeDBSPL,
                ] {
                    double(value)
                }
            }
            let filters = channel < plan.bandTaps.count ? plan.bandTaps[channel] : []
            int(filters.count)
            for taps in filters {
                int(taps.count)
                for tap in taps { double(tap) }
            }
            guard channel < plan.lowering.count, let lowering = plan.lowering[channel] else {
                byte(0)
                continue
            }
            byte(1)
            double(lowering.cutoffHz)
            double(lowering.ratio)
            for set in [lowering.taps, lowering.hilbertTaps, [lowering.centreAmplitudes]] {
                int(set.count)
                for values in set {
                    int(values.count)
                    for value in values { double(value) }
                }
            }
        }
    }
}

extension Decoder {
    /// nil: malformed; .some(nil): no compressor.
    fileprivate mutating func compressorPlan() -> CompressorPlan?? {
        guard let present = byte() else { return nil }
        if present == 0 { return .some(nil) }
        guard present == 1, let input = double(), let outputs = doubles(), let responseCount = count(8) else { return nil }
        var responses: [[Double: Double]] = []
        for _ in 0..<responseCount {
            guard let pointCount = count(16), let values = doubles(exactly: 2 * pointCount) else { return nil }
            var response: [Double: Double] = [:]
            for i in 0..<pointCount { response[values[2 * i]] = values[2 * i + 1] }
            responses.append(response)
        }
        guard let transition = double(), let strength = double(), let channels = count(8) else { return nil }
        var settings: [CompressorSettings] = []
        var bandTaps: [[[Double]]] = []
        var lowering: [LoweringPlan?] = []
        for _ in 0..<channels {
            guard let attack = double(), let release = double(), let steadyPresent = byte(), steadyPresent <= 1 else { return nil }
            var steady: SteadyNoiseDetector?
            if steadyPresent == 1 {
                guard let v = doubles(exactly: 4) else { return nil }
                steady = SteadyNoiseDetector(slowMs: v[0], followAboveDB: v[1], blendMs: v[2], floorWithinDB: v[3])
            }
            guard let bandCount = count(64) else { return nil }
            var bands: [CompressorBand] = []
            for _ in 0..<bandCount {
                guard let v = doubles(exactly: 9) else { return nil }
                bands.append(
                    CompressorBand(
                        centreHz: v[0], gainDB: v[1], kneeDBSPL: v[2], ratio: v[3], expansionKneeDBSPL: v[4], expansionRatio: v[5],
                        limitDBSPL: v[6], maximumGainDB: v[7], steadyNoiseKneeDBSPL: v[8]))
            }
            guard let filterCount = count(8) else { return nil }
            var filters: [[Double]] = []
            for _ in 0..<filterCount {
                guard let taps = doubles() else { return nil }
                filters.append(taps)
            }
            settings.append(CompressorSettings(bands: bands, attackMs: attack, releaseMs: release, steadyNoise: steady))
            bandTaps.append(filters)
            guard let lowered = byte() else { return nil }
            if lowered == 0 {
                lowering.append(nil)
                continue
            }
            guard lowered == 1, let cutoff = double(), let ratio = double(), LoweringLayout.cutoffRangeHz.contains(cutoff),
                LoweringLayout.ratioRange.contains(ratio)
            else { return nil }
            var sets: [[[Double]]] = []
            for _ in 0..<3 {
                guard let setCount = count(8) else { return nil }
                var set: [[Double]] = []
                for _ in 0..<setCount {
                    guard let values = doubles() else { return nil }
                    set.append(values)
                }
                sets.append(set)
            }
            guard sets[2].count == 1 else { return nil }
            lowering.append(
                LoweringPlan(cutoffHz: cutoff, ratio: ratio, taps: sets[0], hilbertTaps: sets[1], centreAmplitudes: sets[2][0]))
        }
        // Only levels convert here: the bands' gains and maxima are the daemon's (`GainMaximum`).
        let calibration = Calibration(inputDBSPLAtFullScale: input, outputDBSPLAtFullScale: outputs, outputResponseDB: responses)
        return .some(
            CompressorPlan(
                settings: settings, bandTaps: bandTaps, calibration: calibration, transitionHz: transition,
                noiseReduction: NoiseReductionSettings(strength: strength),
                lowering: lowering.contains { $0 != nil } ? lowering : []))
    }

    /// A count, then that many JACK frame times (each sent as an int).
    fileprivate mutating func frameTimes() -> [UInt32]? {
        guard let n = count(8) else { return nil }
        var values: [UInt32] = []
        for _ in 0..<n {
            guard let value = int().flatMap(UInt32.init(exactly:)) else { return nil }
            values.append(value)
        }
        return values
    }

    /// A count, then that many doubles.
    fileprivate mutating func doubles() -> [Double]? {
        guard let n = count(8) else { return nil }
        return doubles(exactly: n)
    }

    fileprivate mutating func doubles(exactly n: Int) -> [Double]? {
        var values: [Double] = []
        values.reserveCapacity(n)
        for _ in 0..<n {
            guard let value = double() else { return nil }
            values.append(value)
        }
        return values
    }
}
