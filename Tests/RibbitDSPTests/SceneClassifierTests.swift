import Foundation
import RibbitSignals
import RibbitTestSupport
import Testing

@testable import RibbitDSP

/// The automatic program choice on generated scenes (48 kHz), through the real engine: the
/// scene runs through an OverlapSaveEngine with a linear 11-band compressor (uncalibrated:
/// a full-scale sine reads 100 dB SPL), the band levels are read after every hop and averaged
/// in power over 100 ms, and each 100 ms frame feeds the classifier.
@Suite(.serialized) struct SceneClassifierTests {
    static let sampleRate = 48000.0
    static let geometry = EngineGeometry.standard(sampleRate: 48000)
    static let centres = BandSplit.audiometricCentresHz
    static let frameSamples = 4800

    // MARK: Scenes as audio

    /// RMS of a signal at `levelDBSPL` uncalibrated (a full-scale sine, RMS 1/sqrt 2, is 100 dB SPL).
    static func rms(levelDBSPL: Double) -> Double { pow(10, (levelDBSPL - 100) / 20) / 2.squareRoot() }

    static func scaled(_ x: [Float], toDBSPL level: Double) -> [Float] {
        let current = (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
        let g = Float(rms(levelDBSPL: level) / current)
        return x.map { $0 * g }
    }

    static func mix(_ signals: [Float]...) -> [Float] {
        var out = signals[0]
        for s in signals.dropFirst() { for i in out.indices { out[i] += s[i] } }
        return out
    }

    /// `count` samples of `x` from `offset`, wrapping around.
    static func looped(_ x: [Float], count: Int, offset: Int) -> [Float] {
        (0..<count).map { x[($0 + offset) % x.count] }
    }

    static let speechText =
        "The north wind and the sun were disputing which was the stronger, when a traveller came along wrapped in a warm cloak. "
        + "They agreed that the one who first succeeded in making the traveller take his cloak off should be considered stronger "
        + "than the other. Then the north wind blew as hard as he could, but the more he blew the more closely did the traveller "
        + "fold his cloak around him; and at last the north wind gave up the attempt."

    /// espeak-ng speech (about 20 s), resampled to 48 kHz with sox, as raw floats.
    static func speech() throws -> [Float] {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let raw = folder.appendingPathComponent("raw.wav").path
        let floats = folder.appendingPathComponent("speech.f32").path
        try run("espeak-ng", ["-w", raw, speechText])
        try run("sox", ["-q", raw, "-r", "48000", "-c", "1", "-e", "floating-point", "-b", "32", "-t", "raw", floats])
        let data = try Data(contentsOf: URL(fileURLWithPath: floats))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSetupError("\(tool) failed (\(process.terminationStatus))") }
    }

    /// `talkers` copies of the speech, each from its own offset (at least 1.3 s apart), summed:
    /// babble for a few talkers, near stationary speech-shaped noise for many.
    static func babble(_ speech: [Float], talkers: Int, count: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        var out = [Float](repeating: 0, count: count)
        for t in 0..<talkers {
            let offset = 62_400 * (t + 1) + Int(random.next() % 24_000)
            let copy = looped(speech, count: count, offset: offset)
            for i in out.indices { out[i] += copy[i] }
        }
        return out
    }

    /// A generated piece on a beat of `beatSeconds`: a melody of harmonic notes (6 partials,
    /// 1/k) every half beat (or, `freeMelody`, of random lengths 200-500 ms off the beat), a
    /// held three-note chord every two beats, a bass note every beat, all with 10 ms attacks
    /// and exponential decays, and (`percussion`) a kick on the beat and a hi-hat between.
    static func music(count: Int, seed: UInt64, beatSeconds: Double = 0.5, percussion: Bool = true, freeMelody: Bool = false)
        -> [Float]
    {
        var random = SeededRandom(seed: seed)
        let fs = sampleRate
        let beat = Int(beatSeconds * fs)
        var out = [Double](repeating: 0, count: count)
        let scale = [0, 2, 4, 7, 9, 12, 14, 16]  // pentatonic, semitones above the key
        func add(at start: Int, length: Int, f0: Double, partials: Int, amplitude: Double, decaySeconds: Double) {
            for i in 0..<min(length, count - start) {
                let t = Double(i) / fs
                let envelope = min(t / 0.01, 1) * exp(-t / decaySeconds)
                var v = 0.0
                for k in 1...partials where Double(k) * f0 < 16000 {
                    v += sin(2 * Double.pi * Double(k) * f0 * t) / Double(k)
                }
                out[start + i] += amplitude * envelope * v
            }
        }
        let key = 220.0
        func pitch(_ semitones: Int) -> Double { key * pow(2, Double(semitones) / 12) }
        var start = 0
        while start < count {  // melody
            let length = freeMelody ? 9600 + Int(random.next() % 14401) : beat / 2
            let s = scale[Int(random.next() % UInt64(scale.count))] + 12
            add(at: start, length: length, f0: pitch(s), partials: 6, amplitude: 0.5, decaySeconds: 0.3)
            start += length
        }
        for start in stride(from: 0, to: count, by: 2 * beat) {  // chords
            let root = scale[Int(random.next() % 5)]
            for s in [root, root + 4, root + 7] {
                add(at: start, length: 2 * beat, f0: pitch(s), partials: 4, amplitude: 0.25, decaySeconds: 0.8)
            }
        }
        for start in stride(from: 0, to: count, by: beat) {  // bass
            let s = scale[Int(random.next() % 4)] - 24
            add(at: start, length: beat, f0: pitch(s), partials: 4, amplitude: 0.6, decaySeconds: 0.5)
        }
        for start in stride(from: 0, to: percussion ? count : 0, by: beat) {  // kick: 120 -> 50 Hz, 100 ms
            var phase = 0.0
            for i in 0..<min(4800, count - start) {
                let t = Double(i) / fs
                phase += 2 * Double.pi * (50 + 70 * exp(-t / 0.03)) / fs
                out[start + i] += 0.8 * exp(-t / 0.05) * sin(phase)
            }
        }
        var previous = 0.0
        for start in stride(from: beat / 4, to: percussion ? count : 0, by: beat / 2) {  // hi-hat: differenced noise, 30 ms
            for i in 0..<min(2400, count - start) {
                let white = Double(Int64(bitPattern: random.next() >> 11) - (1 << 52)) / Double(1 << 52)
                out[start + i] += 0.2 * exp(-Double(i) / fs / 0.03) * (white - previous)
                previous = white
            }
        }
        return out.map { Float($0) }
    }

    // MARK: Through the engine

    /// The scene through the engine (linear bands, 0 dB): one SceneFrame per 100 ms.
    static func frames(_ signal: [Float]) throws -> [SceneFrame] {
        let settings = CompressorSettings(
            bands: centres.map { CompressorBand.linear(centreHz: $0, gainDB: 0) }, attackMs: 5, releaseMs: 70)
        let config = CompressorConfig(
            settings: [settings], amplitude: [{ _ in 1 }], calibration: .uncalibrated, taps: geometry.filterLength,
            fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate)
        let filters = FilterSet.delay(geometry.filterDelayFrames, channelCount: 1, fftLength: geometry.fftLength, ceilingDBFS: 0)
        let engine = try OverlapSaveEngine(geometry: geometry, sampleRate: sampleRate, filters: filters, blockSize: 64)
        try engine.publish(config)
        let hop = geometry.hopSize
        var frames: [SceneFrame] = []
        var sums = [Double](repeating: 0, count: centres.count)
        var hops = 0
        for start in stride(from: 0, to: signal.count - hop + 1, by: hop) {
            _ = engine.process([Array(signal[start..<start + hop])], blockSize: hop)
            for (b, level) in engine.compressorLevels(channel: 0).enumerated() { sums[b] += pow(10, Double(level) / 10) }
            hops += 1
            if hops * hop % frameSamples == 0 {
                // Broadband: the input's own level over the same 100 ms (the bands' power sum
                // counts the low frequencies the shared bands read twice; see SceneFrame).
                let chunk = signal[(start + hop - frameSamples)..<(start + hop)]
                let meanSquare = chunk.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frameSamples)
                let broadband = 100 + 10 * log10(max(2 * meanSquare, 1e-20))
                frames.append(
                    SceneFrame(bandLevelsDBSPL: sums.map { Float(10 * log10($0 / Double(hops))) }, broadbandDBSPL: Float(broadband)))
                sums = [Double](repeating: 0, count: centres.count)
                hops = 0
            }
        }
        return frames
    }

    struct Run {
        var scenes: [Scene] = []
        var candidates: [Scene?] = []
        var features: [SceneFeatures?] = []
        var reasons: [String] = []
    }

    static func classify(_ frames: [SceneFrame]) -> (SceneClassifier, Run) {
        var classifier = SceneClassifier(bandCentresHz: centres)
        var run = Run()
        for frame in frames {
            classifier.add(frame)
            run.scenes.append(classifier.scene)
            run.candidates.append(classifier.candidate)
            run.features.append(classifier.features)
            run.reasons.append(classifier.reason)
        }
        return (classifier, run)
    }

    /// Changes of the scene in force within frames `range`.
    static func changes(_ scenes: [Scene], in range: Range<Int>) -> Int {
        range.dropFirst().filter { scenes[$0] != scenes[$0 - 1] }.count
    }

    static func summary(_ name: String, _ run: Run) -> String {
        let last = run.features.suffix(100).compactMap { $0 }
        func span(_ key: KeyPath<SceneFeatures, Double>) -> String {
            let v = last.map { $0[keyPath: key] }
            return String(format: "%.1f..%.1f", v.min() ?? .nan, v.max() ?? .nan)
        }
        let ratios = last.map { $0.spectralFluxDB / $0.modulationDB }
        let ratio = String(format: "flux/modulation %.2f..%.2f; ", ratios.min() ?? .nan, ratios.max() ?? .nan)
        var counts: [String] = []
        for scene in Scene.allCases {
            counts.append("\(scene.rawValue) \(run.candidates.suffix(100).filter { $0 == scene }.count)")
        }
        return "\(name): level \(span(\.levelDBSPL)) dB SPL, snr \(span(\.snrDB)) dB, dips \(span(\.dipFraction)), "
            + "flux \(span(\.spectralFluxDB)) dB, modulation \(span(\.modulationDB)) dB, pulse \(span(\.pulse)), " + ratio
            + "candidates in the last 10 s: "
            + counts.joined(separator: ", ") + "; in the whole 15 s: "
            + Scene.allCases.map { scene in
                "\(scene.rawValue) \(run.candidates.filter { $0 == scene }.count)"
            }.joined(separator: ", ") + ", none \(run.candidates.filter { $0 == nil }.count); switches at "
            + run.scenes.indices.dropFirst().filter { run.scenes[$0] != run.scenes[$0 - 1] }.map {
                "\(Double($0 + 1) / 10) s to \(run.scenes[$0].rawValue)"
            }.joined(separator: ", ") + "; final: \(run.reasons.last ?? "")"
    }

    // MARK: Scenes

    static let count = 15 * 48000

    static func quietScene(_ speech: [Float], speechDBSPL: Double = 63) -> [Float] {
        mix(
            scaled(looped(speech, count: count, offset: 0), toDBSPL: speechDBSPL),
            scaled(babble(speech, talkers: 32, count: count, seed: 11), toDBSPL: 30))
    }

    static func noisyScene(_ speech: [Float], talkers: Int, snrDB: Double) -> [Float] {
        mix(
            scaled(looped(speech, count: count, offset: 0), toDBSPL: 70),
            scaled(babble(speech, talkers: talkers, count: count, seed: 12), toDBSPL: 70 - snrDB))
    }

    @Test func steadyScenesEndRightAndDoNotFlap() throws {
        let speech = try Self.speech()
        let scenes: [(String, [Float], Scene)] = [
            ("quiet: speech 63 dB SPL, room noise 30 dB SPL", Self.quietScene(speech), .quiet),
            ("quiet: speech 60 dB SPL, room noise 30 dB SPL", Self.quietScene(speech, speechDBSPL: 60), .quiet),
            ("quiet: speech 65 dB SPL, room noise 30 dB SPL", Self.quietScene(speech, speechDBSPL: 65), .quiet),
            (
                "noisy: speech-shaped noise alone, 70 dB SPL",
                Self.scaled(Self.babble(speech, talkers: 32, count: Self.count, seed: 13), toDBSPL: 70), .noisy
            ),
            (
                "noisy: 6-talker babble alone, 70 dB SPL",
                Self.scaled(Self.babble(speech, talkers: 6, count: Self.count, seed: 14), toDBSPL: 70), .noisy
            ),
            ("noisy: speech 70 dB SPL, 6-talker babble at 0 dB SNR", Self.noisyScene(speech, talkers: 6, snrDB: 0), .noisy),
            ("noisy: speech 70 dB SPL, 6-talker babble at 5 dB SNR", Self.noisyScene(speech, talkers: 6, snrDB: 5), .noisy),
            ("noisy: speech 70 dB SPL, speech-shaped noise at 0 dB SNR", Self.noisyScene(speech, talkers: 32, snrDB: 0), .noisy),
            ("noisy: speech 70 dB SPL, speech-shaped noise at 5 dB SNR", Self.noisyScene(speech, talkers: 32, snrDB: 5), .noisy),
            ("music: generated piece at 75 dB SPL", Self.scaled(Self.music(count: Self.count, seed: 5), toDBSPL: 75), .music),
            ("music: generated piece at 70 dB SPL", Self.scaled(Self.music(count: Self.count, seed: 6), toDBSPL: 70), .music),
            ("music: generated piece at 80 dB SPL", Self.scaled(Self.music(count: Self.count, seed: 7), toDBSPL: 80), .music),
            (
                "music: the piece without drums at 75 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 8, percussion: false), toDBSPL: 75), .music
            ),
            (
                "music: 139 bpm (beat 0.43 s) at 75 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 9, beatSeconds: 0.43), toDBSPL: 75), .music
            ),
            (
                "music: free melody (notes 200-500 ms) over bass, chords and drums at 75 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 10, freeMelody: true), toDBSPL: 75), .music
            ),
            (
                "music: free melody, no drums, 139 bpm at 75 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 11, beatSeconds: 0.43, percussion: false, freeMelody: true), toDBSPL: 75),
                .music
            ),
        ]
        for (name, signal, expected) in scenes {
            let frames = try Self.frames(signal)
            #expect(frames.count == 150)
            let (classifier, run) = Self.classify(frames)
            print(Self.summary(name, run))
            #expect(classifier.scene == expected, "\(name)")
            // In the last 10 s at most the initial switch.
            #expect(Self.changes(run.scenes, in: 50..<150) <= 1, "\(name): \(run.scenes)")
        }
    }

    /// Scenes added after the thresholds were set (none of them was used to choose them).
    @Test func heldOutScenes() throws {
        let speech = try Self.speech()
        let scenes: [(String, [Float], Scene)] = [
            (
                "held out quiet: speech 62 dB SPL, room noise 35 dB SPL",
                Self.mix(
                    Self.scaled(Self.looped(speech, count: Self.count, offset: 30_000), toDBSPL: 62),
                    Self.scaled(Self.babble(speech, talkers: 24, count: Self.count, seed: 21), toDBSPL: 35)), .quiet
            ),
            (
                "held out noisy: speech 68 dB SPL, 4-talker babble at 2 dB SNR",
                Self.mix(
                    Self.scaled(Self.looped(speech, count: Self.count, offset: 30_000), toDBSPL: 68),
                    Self.scaled(Self.babble(speech, talkers: 4, count: Self.count, seed: 22), toDBSPL: 66)), .noisy
            ),
            (
                "held out music: beat 0.6 s, free melody, no drums, 72 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 23, beatSeconds: 0.6, percussion: false, freeMelody: true), toDBSPL: 72),
                .music
            ),
            (
                "held out music: beat 0.37 s with drums, 78 dB SPL",
                Self.scaled(Self.music(count: Self.count, seed: 24, beatSeconds: 0.37), toDBSPL: 78), .music
            ),
        ]
        for (name, signal, expected) in scenes {
            let (classifier, run) = Self.classify(try Self.frames(signal))
            print(Self.summary(name, run))
            #expect(classifier.scene == expected, "\(name)")
            #expect(Self.changes(run.scenes, in: 50..<150) <= 1, "\(name): \(run.scenes)")
        }
    }

    /// One minute of each steady scene: after the initial switch the choice never changes.
    @Test func aMinuteOfEachSceneHoldsOneChoice() throws {
        let speech = try Self.speech()
        let minute = 60 * 48000
        let scenes: [(String, [Float], Scene)] = [
            (
                "60 s quiet: speech 63 dB SPL, room noise 30 dB SPL",
                Self.mix(
                    Self.scaled(Self.looped(speech, count: minute, offset: 0), toDBSPL: 63),
                    Self.scaled(Self.babble(speech, talkers: 32, count: minute, seed: 31), toDBSPL: 30)), .quiet
            ),
            (
                "60 s noisy: speech 70 dB SPL, 6-talker babble at 0 dB SNR",
                Self.mix(
                    Self.scaled(Self.looped(speech, count: minute, offset: 0), toDBSPL: 70),
                    Self.scaled(Self.babble(speech, talkers: 6, count: minute, seed: 32), toDBSPL: 70)), .noisy
            ),
            ("60 s music: the piece at 75 dB SPL", Self.scaled(Self.music(count: minute, seed: 33), toDBSPL: 75), .music),
            (
                "60 s music: free melody, no drums, 139 bpm at 75 dB SPL",
                Self.scaled(Self.music(count: minute, seed: 34, beatSeconds: 0.43, percussion: false, freeMelody: true), toDBSPL: 75),
                .music
            ),
        ]
        for (name, signal, expected) in scenes {
            let frames = try Self.frames(signal)
            let (classifier, run) = Self.classify(frames)
            let wrong = run.candidates.compactMap { $0 }.filter { $0 != expected }.count
            print(
                "\(name): \(wrong) of \(run.candidates.compactMap { $0 }.count) candidates wrong; "
                    + "scene changes \(Self.changes(run.scenes, in: 0..<frames.count)); final: \(classifier.reason)")
            #expect(classifier.scene == expected, "\(name)")
            #expect(Self.changes(run.scenes, in: 0..<frames.count) <= 1, "\(name)")
        }
    }

    /// quiet -> noisy -> music -> quiet, 15 s each: every change is followed once, after at
    /// least the hold time and within the hold time plus the window that must fill with the
    /// new scene (the rhythm window for music) plus 1 s.
    @Test func aSceneChangeIsFollowedWithinTheHoldTimeAndTheWindow() throws {
        let speech = try Self.speech()
        let music = Self.scaled(Self.music(count: Self.count, seed: 41), toDBSPL: 75)
        let signal = Self.quietScene(speech) + Self.noisyScene(speech, talkers: 6, snrDB: 0) + music + Self.quietScene(speech)
        let frames = try Self.frames(signal)
        #expect(frames.count == 600)
        let (classifier, run) = Self.classify(frames)
        let p = classifier.parameters
        #expect(run.scenes[149] == .quiet)
        var report: [String] = []
        for (segment, (from, to)) in [(Scene.quiet, Scene.noisy), (.noisy, .music), (.music, .quiet)].enumerated() {
            let boundary = 150 * (segment + 1)
            let switchFrame = (boundary..<(boundary + 150)).first { run.scenes[$0] == to }
            let seconds = switchFrame.map { Double($0 + 1 - boundary) / p.framesPerSecond }
            let bound = p.holdSeconds + (to == .music ? p.rhythmSeconds : p.windowSeconds) + 1
            report.append("\(from.rawValue) -> \(to.rawValue) after \(seconds.map { "\($0) s" } ?? "never") (bound \(bound) s)")
            #expect(run.scenes[boundary - 1] == from)
            #expect(seconds != nil && seconds! <= bound, "\(from) -> \(to)")
            #expect(seconds != nil && seconds! >= p.holdSeconds, "\(from) -> \(to)")
            #expect(Self.changes(run.scenes, in: (boundary - 1)..<(boundary + 150)) == 1, "\(from) -> \(to)")
        }
        print("scene changes: " + report.joined(separator: ", "))
    }

    /// The hysteresis on hand-made frames: a candidate replaces the scene after exactly
    /// holdSeconds of consecutive wins, and a candidate that loses before starts the count again.
    @Test func hysteresisCountsConsecutiveFrames() {
        var parameters = SceneClassifier.Parameters()
        parameters.rhythmSeconds = 4
        var classifier = SceneClassifier(bandCentresHz: Self.centres, parameters: parameters)
        let hold = Int(parameters.holdSeconds * parameters.framesPerSecond)
        // Steady, loud and flat: sustained, no rhythm, no speech peaks: noisy.
        let loud = SceneFrame(bandLevelsDBSPL: Self.centres.map { _ in 70 })
        // Soft: quiet whatever the rest.
        let soft = SceneFrame(bandLevelsDBSPL: Self.centres.map { _ in 35 })
        for _ in 0..<40 { classifier.add(soft) }
        #expect(classifier.scene == .quiet && classifier.candidate == .quiet)
        // The window must first lose the soft frames (else they are dips and a 35 dB range).
        for _ in 0..<(40 + hold) { classifier.add(loud) }
        #expect(classifier.scene == .noisy)
        var fresh = SceneClassifier(bandCentresHz: Self.centres, parameters: parameters)
        var history: [Scene] = []
        var candidates: [Scene?] = []
        for _ in 0..<(40 + hold + 5) {
            fresh.add(loud)
            history.append(fresh.scene)
            candidates.append(fresh.candidate)
        }
        // Candidates start once minimumSeconds (20 frames) are in; the switch comes hold frames later.
        let firstCandidate = candidates.firstIndex { $0 != nil }!
        #expect(firstCandidate == Int(parameters.minimumSeconds * parameters.framesPerSecond) - 1)
        let switched = history.firstIndex { $0 == .noisy }!
        #expect(switched == firstCandidate + hold - 1)
        // A challenger that stops winning before the hold time leaves the scene and its count.
        var interrupted = SceneClassifier(bandCentresHz: Self.centres, parameters: parameters)
        for _ in 0..<40 { interrupted.add(soft) }
        for _ in 0..<(40 + hold / 2) { interrupted.add(loud) }  // hold / 2 frames as noisy, about
        #expect(interrupted.scene == .quiet && interrupted.candidate == .noisy && interrupted.challengerFrames > 0)
        while interrupted.candidate == .noisy { interrupted.add(soft) }
        #expect(interrupted.scene == .quiet && interrupted.challengerFrames == 0)
        // 11 bands at 70 dB SPL: 70 + 10 log10(11) = 80.4 dB SPL broadband; no range, 0 dB.
        #expect(fresh.reason == "noisy: 80 dB SPL, steady noise (levels within 0.0 dB)")
    }
}
