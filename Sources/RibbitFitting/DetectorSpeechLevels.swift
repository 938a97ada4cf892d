import Glibc
import RibbitDSP
import RibbitPrescription
import Synchronization

/// How much louder the compressor's detectors hear speech than the fitting rule's band levels
/// say, per band: the rules put each knee at a band level of speech (third-octave LTASS summed
/// in rectangular bands, `Camfit.speechBandLevelsDBSPL`), but a detector with a 5 ms attack
/// rides the peaks of a band power that fluctuates from hop to hop (most in the narrow low
/// bands: few FFT bins) and from syllable to syllable, and the top band, open above its centre,
/// hears speech up to 16 kHz. Uncorrected, speech was compressed as if 2-8 dB louder and
/// `ribbitd verify` read the camfit sample 1-3 dB under its targets (5 dB at 8 kHz).
///
/// Read off the real detector: `SpeechLikeSignal` at 65 dB SPL through a compressor with the
/// ear's own bands and times (the detector's time constants follow each band's curve) at the
/// engine's geometry, the detector's smoothed level after every hop from the second half second on; the offset is the power-weighted mean of that level (loud moments
/// carry the output's power, and they set its gain) less the rule's band level. `Fitting` adds
/// it to every speech-derived knee (`placed`), moving the rule's curves onto the scale the
/// detector reads. Tones are not speech: a tone at a band centre now gets the gain of speech
/// whose band level is that much lower (`verify` shows it in the input/output curves).
public enum DetectorSpeechLevels {
    public static let seed: UInt64 = 65
    public static let seconds = 3.0
    /// Offsets outside this range mean the measurement went wrong: they are held to it.
    public static let plausibleDB = -3.0...12.0

    struct Key: Hashable {
        var settings: CompressorSettings
        var geometry: [Int]
        var sampleRate: Double
    }

    /// A daemon refits on every program change and prescription switch: read each detector once.
    static let cache = Mutex<[Key: [Double]]>([:])

    /// The settings the engine runs for `settings` (one ear, from `CompressorFitting`) in
    /// `program`: the compression knees, which the rules set at band levels of speech, and the
    /// program's expansion knees (speech 10 dB below soft) moved to what the detector reads of
    /// speech. A prescription's own expansion knee is an absolute level for room noise, not
    /// speech: it stays, never above the compression knee. The program's steady-noise knees
    /// (`Program.followingSpeechInNoise`) sit 10 dB lower, at `Program.steadyNoiseSpeechDBSPL`
    /// speech, moved by the same offsets.
    public static func placed(
        _ settings: CompressorSettings, program: Program, prescription rx: Prescription, geometry: EngineGeometry, sampleRate: Double
    ) -> CompressorSettings {
        let unplaced = program.expand(settings, prescription: rx)
        guard unplaced.bands.contains(where: { $0.ratio > 1 || $0.expansionRatio > 1 }) else { return unplaced }
        // The detector's time constants follow each band's curve (`CompressorStage.detectorTau`):
        // read it with the ear's own bands.
        let offsets = offsetsDB(unplaced, geometry: geometry, sampleRate: sampleRate)
        var shifted = settings
        for b in shifted.bands.indices where shifted.bands[b].ratio > 1 {
            shifted.bands[b].kneeDBSPL += offsets[b]
            shifted.bands[b].expansionKneeDBSPL = min(shifted.bands[b].expansionKneeDBSPL, shifted.bands[b].kneeDBSPL)
        }
        return program.followingSpeechInNoise(
            program.expand(shifted, prescription: rx, detectorOffsetsDB: offsets), detectorOffsetsDB: offsets)
    }

    /// The offsets (dB) for these bands and times, at this geometry.
    public static func offsetsDB(_ settings: CompressorSettings, geometry: EngineGeometry, sampleRate: Double) -> [Double] {
        let key = Key(settings: settings, geometry: [geometry.fftLength, geometry.hopSize, geometry.filterLength], sampleRate: sampleRate)
        if let known = cache.withLock({ $0[key] }) { return known }
        let offsets = measure(settings, geometry: geometry, sampleRate: sampleRate).map {
            min(max($0, plausibleDB.lowerBound), plausibleDB.upperBound)
        }
        cache.withLock { cache in
            if cache.count > 256 { cache.removeAll() }  // bounded: a wearer has few settings
            cache[key] = offsets
        }
        return offsets
    }

    /// What the detectors are fed, hop by hop ([hop][band], dB SPL), for one band layout: it
    /// depends on the centres, the geometry and the rate, not on a band's curve or times, so
    /// every fitting and program with the same bands reads the same targets.
    struct LayoutKey: Hashable {
        var centresHz: [Double]
        var geometry: [Int]
        var sampleRate: Double

        /// One line that names the layout and the signal, for a store between runs.
        var text: String {
            "centres \(centresHz.map(\.description).joined(separator: " ")); fft \(geometry[0]) hop \(geometry[1]) taps \(geometry[2]);"
                + " rate \(sampleRate); speech seed \(seed), \(seconds) s at \(speechDBSPL) dB SPL"
        }
    }
    static let targetsCache = Mutex<[LayoutKey: [[Float]]]>([:])

    /// Where the targets are kept between runs (ribbitd keeps them beside FFTW's wisdom,
    /// `DetectorTargetsFile`); none until a process says.
    static let store = Mutex<(any DetectorTargetsStore)?>(nil)

    /// Keeps what the detectors read in `store` from now on, and reads it from there.
    public static func keep(in store: some DetectorTargetsStore) { Self.store.withLock { $0 = store } }

    static func measure(_ settings: CompressorSettings, geometry: EngineGeometry, sampleRate: Double) -> [Double] {
        let centresHz = settings.bands.map(\.centreHz)
        let coefficients = CompressorConfig.detectorCoefficients(
            settings, taps: geometry.filterLength, hopSize: geometry.hopSize, sampleRate: sampleRate)
        let key = LayoutKey(
            centresHz: centresHz, geometry: [geometry.fftLength, geometry.hopSize, geometry.filterLength], sampleRate: sampleRate)
        let targets: [[Float]]
        if let known = targetsCache.withLock({ $0[key] }) {
            targets = known
        } else {
            let store = Self.store.withLock { $0 }
            targets = kept(key, geometry: geometry, in: store) ?? read(settings, key: key, geometry: geometry, into: store)
            targetsCache.withLock { cache in
                if cache.count > 16 { cache.removeAll() }  // bounded: a wearer has one or two layouts
                cache[key] = targets
            }
        }
        // The detector's recursion (`CompressorStage`), primed with its first target, and the
        // power-weighted mean of its level after every hop that ends past the first half second.
        let rule = Camfit.speechBandLevelsDBSPL(centresHz: centresHz, overallDBSPL: speechDBSPL)
        let settle = Int(sampleRate / 2)
        return centresHz.indices.map { b in
            guard let first = targets.first?[b] else { return 0 }
            let (attack, release) = coefficients[b]
            var level = first
            var weighted = 0.0, power = 0.0
            for (h, hop) in targets.enumerated() {
                let target = hop[b]
                let a = target > level ? attack : release
                level = target + a * (level - target)
                guard (h + 1) * geometry.hopSize > settle, level.isFinite else { continue }
                let p = pow(10, Double(level) / 10)
                weighted += p * Double(level)
                power += p
            }
            return power > 0 ? weighted / power - rule[b] : 0
        }
    }

    static let speechDBSPL = 65.0

    /// The targets the store holds for this layout, when it holds all of them.
    static func kept(_ key: LayoutKey, geometry: EngineGeometry, in store: (any DetectorTargetsStore)?) -> [[Float]]? {
        guard let store else { return nil }
        let (bands, hops) = (key.centresHz.count, Int(key.sampleRate * seconds) / geometry.hopSize)
        guard bands > 0, let flat = store.load(key.text, count: hops * bands) else { return nil }
        return (0..<hops).map { Array(flat[($0 * bands)..<(($0 + 1) * bands)]) }
    }

    /// The targets read off an engine with instant detectors, and kept in the store.
    static func read(
        _ settings: CompressorSettings, key: LayoutKey, geometry: EngineGeometry, into store: (any DetectorTargetsStore)?
    ) -> [[Float]] {
        let config = CompressorConfig(
            settings: [settings], amplitude: [{ _ in 1 }], calibration: Calibration.uncalibrated, taps: geometry.filterLength,
            fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: key.sampleRate)
        config.makeDetectorsInstant()
        let targets = detectorTargets(config, bandCount: key.centresHz.count, geometry: geometry, sampleRate: key.sampleRate)
        if !targets.isEmpty, let store { _ = store.save(key.text, targets.flatMap { $0 }) }
        return targets
    }

    /// Runs the speech-like signal through an engine whose detectors are instant and reads each
    /// band's level after every hop: the detectors' input.
    static func detectorTargets(_ config: CompressorConfig, bandCount: Int, geometry: EngineGeometry, sampleRate: Double) -> [[Float]] {
        var unity = [Double](repeating: 0, count: geometry.filterLength)
        unity[geometry.filterLength / 2] = 1
        guard
            let engine = try? OverlapSaveEngine(
                geometry: geometry, sampleRate: sampleRate,
                filters: FilterSet(taps: [unity], fftLength: geometry.fftLength, ceilingDBFS: 0), blockSize: geometry.hopSize,
                fftPlanning: .wisdomOrEstimate),
            (try? engine.publish(config)) != nil
        else { return [] }
        let hop = geometry.hopSize
        let signal = SpeechLikeSignal.generate(
            count: Int(sampleRate * seconds), sampleRate: sampleRate,
            levelDBFS: speechDBSPL - Calibration.uncalibrated.inputDBSPLAtFullScale, seed: seed)
        var targets: [[Float]] = []
        targets.reserveCapacity(signal.count / hop)
        var start = 0
        while start + hop <= signal.count {
            _ = engine.process([Array(signal[start..<(start + hop)])], blockSize: hop)
            start += hop
            targets.append(engine.compressorLevels(channel: 0))
        }
        return targets
    }
}

/// Keeps the detector targets of a band layout between runs (`DetectorSpeechLevels.keep`).
public protocol DetectorTargetsStore: Sendable {
    /// The `count` values kept under `key`, or nil.
    func load(_ key: String, count: Int) -> [Float]?
    /// Keeps `values` under `key` (a failure only costs the next run the reading).
    func save(_ key: String, _ values: [Float]) -> String?
}
