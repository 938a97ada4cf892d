import Glibc

/// The surroundings `program auto` tells apart.
public enum Scene: String, Sendable, CaseIterable {
    /// Speech or silence in a quiet room: the wearer's everyday program.
    case quiet
    /// Speech in loud noise (a restaurant, a street): noise reduction, faster compression.
    case noisy
    /// Music: slow compression, no noise reduction.
    case music
}

/// What the classifier is fed about 10 times a second: the input level per band in dB SPL as
/// the compressor's level detector reads it, averaged (in power) over the last 100 ms.
public struct SceneFrame: Sendable, Equatable {
    /// Per band of the classifier's `bandCentresHz`, dB SPL.
    public var bandLevelsDBSPL: [Float]
    /// The broadband input level (dB SPL); nil: the power sum of the bands. That sum reads
    /// high where bands share their centres (below 1.5 kHz with 193 taps each band is
    /// calibrated to read a tone at its centre in full, so its neighbours count it again):
    /// measured 4-5 dB high for speech, babble and music. Pass the input's level where known.
    public var broadbandDBSPL: Float?

    public init(bandLevelsDBSPL: [Float], broadbandDBSPL: Float? = nil) {
        self.bandLevelsDBSPL = bandLevelsDBSPL
        self.broadbandDBSPL = broadbandDBSPL
    }
}

/// The features one decision used, over the classifier's sliding window.
public struct SceneFeatures: Sendable, Equatable {
    /// The equivalent continuous level over the window (power mean of the broadband level), dB SPL.
    public var levelDBSPL: Double
    /// Speech peaks against the noise floor: per band the 95th minus the 10th percentile of
    /// the band level over the window, averaged over the speech bands (500-4000 Hz), dB.
    public var snrDB: Double
    /// The share of frames whose broadband level lies more than `dipDepthDB` below the
    /// window's 90th percentile: the pauses of speech (about a third of the time in a
    /// conversation), nearly none in music or steady noise. 0...1.
    public var dipFraction: Double
    /// How much the spectrum's shape moves: per band, the mean absolute change from frame to
    /// frame of the band level relative to the broadband level (dB per 100 ms), averaged over
    /// all bands. Notes and chords that change every few hundred milliseconds move energy
    /// between bands while the total stays up; noise keeps its shape.
    public var spectralFluxDB: Double
    /// The broadband level's mean absolute change from frame to frame (dB per 100 ms): the
    /// 2-5 Hz envelope modulation the 10 frames a second resolve (speech: syllables).
    public var modulationDB: Double
    /// Rhythm (the "pulse metric" of Scheirer & Slaney 1997): the onset strength (per frame,
    /// the mean over bands of each band level's rise since the previous frame) correlated with
    /// itself at lags of 0.2-1 s; the highest normalised autocorrelation. Music with a beat or
    /// regular notes: 0.5 and more; speech and babble, whose syllables come irregularly: lower.
    public var pulse: Double

    public init(levelDBSPL: Double, snrDB: Double, dipFraction: Double, spectralFluxDB: Double, modulationDB: Double, pulse: Double) {
        self.levelDBSPL = levelDBSPL
        self.snrDB = snrDB
        self.dipFraction = dipFraction
        self.spectralFluxDB = spectralFluxDB
        self.modulationDB = modulationDB
        self.pulse = pulse
    }
}

/// The automatic program choice: quiet, noisy or music from the input's band levels.
///
/// The idea is the classic hearing-aid sound classification by level, modulation and spectral
/// features (Büchler, Allegro, Launer & Dillier 2005, "Sound classification in hearing aids
/// inspired by auditory scene analysis", EURASIP J. Appl. Signal Process.: speech has deep
/// ~4 Hz modulation and pauses, noise is steady, music is sustained with a changing, tonal
/// spectrum), reduced to what the compressor's band levels at 10 frames a second carry, and the
/// speech/music discriminator of Scheirer & Slaney 1997 ("Construction and evaluation of a
/// robust multifeature speech/music discriminator", ICASSP: 4 Hz modulation, low-energy
/// frames, spectral flux, pulse metric). The band levels cannot show tonality (11 bands,
/// shared below 1.5 kHz), so music is told from noisy speech by its rhythm. Over
/// a sliding window of `windowSeconds` it computes `SceneFeatures` and names a candidate:
///
/// ```
/// music   sustained (dipFraction <= maxMusicDipFraction), loud enough
///         (level >= minMusicDBSPL), and rhythmic (pulse >= minMusicPulse) or with notes
///         moving energy between bands at a steady total (spectralFlux >= minMusicFluxDB and
///         spectralFlux / modulation >= minMusicFluxPerModulation)
/// noisy   loud (level >= minNoisyDBSPL) and the speech peaks close to the noise floor
///         (snr <= maxNoisySNRDB), or loud and sustained without a rhythm (steady noise)
/// quiet   everything else (soft surroundings, or speech well above the noise)
/// ```
///
/// Why these two music cues: on the test scenes the level features overlapped between music
/// and speech in noise at 0-5 dB SNR (flux 2.6-7.2 against 2.1-3.9 dB, modulation 1.4-2.6
/// against 2.1-4.9 dB), but the pulse did not (0.4-0.8 on pieces with a beat, 0.0-0.3 on
/// speech, babble and noise), and a piece without drums and with a free melody (pulse 0.1-0.3)
/// still showed its notes as energy moving between bands while the total stayed
/// (flux / modulation 1.9-3.4, against at most 1.45 for speech in noise and babble with
/// flux >= 3 dB; speech's syllables move all bands together). Stationary noise alone has a
/// high ratio too (up to 1.7) but little flux (1.2-1.4 dB), hence the flux floor.

/// Hysteresis: the candidate replaces `scene` only after winning `holdSeconds` of consecutive
/// frames, so a steady scene never flaps and a real change takes effect after about
/// `holdSeconds` plus the time the window needs to fill with the new scene (at most
/// `windowSeconds`; for music, whose rhythm needs several beats, up to `rhythmSeconds`). Before the window holds `minimumSeconds` of input there is no candidate
/// and `scene` stays `initial`.
///
/// Control side only (it allocates); the audio thread never runs it.
public struct SceneClassifier: Sendable {
    public struct Parameters: Sendable, Equatable {
        public var framesPerSecond = 10.0
        public var windowSeconds = 4.0
        /// The rhythm feature's longer window (lags up to 1 s need several beats).
        public var rhythmSeconds = 6.0
        public var minimumSeconds = 2.0
        public var holdSeconds = 3.0
        /// A dip: a frame this far below the window's 90th percentile broadband level.
        public var dipDepthDB = 10.0
        public var maxMusicDipFraction = 0.1
        public var minMusicDBSPL = 55.0
        /// Music needs a rhythm: measured 0.5-0.8 on the generated pieces, 0.0-0.3 on speech,
        /// babble and speech-shaped noise (SceneClassifierTests).
        public var minMusicPulse = 0.4
        public var minMusicFluxDB = 3.0
        public var minMusicFluxPerModulation = 1.7
        public var minNoisyDBSPL = 63.0
        public var maxNoisySNRDB = 15.0
        public var speechBandsHz: ClosedRange<Double> = 500...4000

        public init() {}
    }

    public let bandCentresHz: [Double]
    public let parameters: Parameters
    /// The scene in force (what the program follows).
    public private(set) var scene: Scene
    /// What the latest window says, before the hysteresis (nil until enough input).
    public private(set) var candidate: Scene?
    /// The features of the latest decision (nil until enough input).
    public private(set) var features: SceneFeatures?
    /// Consecutive frames the candidate has differed from `scene`.
    public private(set) var challengerFrames = 0

    /// The window: per frame, the band levels and the broadband level (oldest first).
    private var bands: [[Double]] = []
    private var broadband: [Double] = []
    private let speechBands: [Int]
    private let windowFrames: Int
    private let historyFrames: Int
    private let minimumFrames: Int
    private let holdFrames: Int

    public init(bandCentresHz: [Double], parameters: Parameters = Parameters(), initial: Scene = .quiet) {
        precondition(!bandCentresHz.isEmpty)
        self.bandCentresHz = bandCentresHz
        self.parameters = parameters
        scene = initial
        let inSpeech = bandCentresHz.indices.filter { parameters.speechBandsHz.contains(bandCentresHz[$0]) }
        speechBands = inSpeech.isEmpty ? Array(bandCentresHz.indices) : inSpeech
        windowFrames = max(Int((parameters.windowSeconds * parameters.framesPerSecond).rounded()), 2)
        historyFrames = max(Int((parameters.rhythmSeconds * parameters.framesPerSecond).rounded()), windowFrames)
        minimumFrames = min(max(Int((parameters.minimumSeconds * parameters.framesPerSecond).rounded()), 2), windowFrames)
        holdFrames = max(Int((parameters.holdSeconds * parameters.framesPerSecond).rounded()), 1)
    }

    /// Takes the next frame (every 1 / framesPerSecond seconds) and updates the decision.
    public mutating func add(_ frame: SceneFrame) {
        precondition(frame.bandLevelsDBSPL.count == bandCentresHz.count, "one level per band")
        let levels = frame.bandLevelsDBSPL.map { Double($0) }
        let total = frame.broadbandDBSPL.map { Double($0) } ?? Self.powerSumDB(levels)
        bands.append(levels)
        broadband.append(total)
        if bands.count > historyFrames {
            bands.removeFirst()
            broadband.removeFirst()
        }
        guard bands.count >= minimumFrames else { return }
        let f = computeFeatures()
        features = f
        let next = decide(f)
        candidate = next
        if next == scene {
            challengerFrames = 0
        } else {
            challengerFrames += 1
            if challengerFrames >= holdFrames {
                scene = next
                challengerFrames = 0
            }
        }
    }

    /// One line for `ribbitd status`: the scene in force and the figures behind it.
    /// Below this spread between speech peaks and the floor the reason calls it steady noise.
    static let speechSpreadDB = 6.0

    public var reason: String {
        guard let f = features else { return "\(scene.rawValue): listening (needs \(Self.format(parameters.minimumSeconds)) s of input)" }
        let level = "\(Self.format(f.levelDBSPL)) dB SPL"
        var line: String
        switch scene {
        case .quiet: line = "quiet: \(level), speech \(Self.format(f.snrDB)) dB above the noise floor"
        case .noisy:
            // Under 6 dB of spread there is no speech to speak of: say what it is.
            line =
                f.snrDB < Self.speechSpreadDB
                ? "noisy: \(level), steady noise (levels within \(Self.format(f.snrDB)) dB)"
                : "noisy: \(level), speech \(Self.format(f.snrDB)) dB above the noise floor"
        case .music:
            line = "music: \(level), sustained (\(Self.format(f.dipFraction * 100)) % dips), "
            line +=
                f.pulse >= parameters.minMusicPulse
                ? "rhythm \(Self.format(f.pulse))"
                : "spectrum moving \(Self.format(f.spectralFluxDB)) dB, level \(Self.format(f.modulationDB)) dB per 100 ms"
        }
        if let c = candidate, c != scene {
            line += "; \(c.rawValue) for \(Self.format(Double(challengerFrames) / parameters.framesPerSecond)) s"
        }
        return line
    }

    // MARK: Features and the rule

    func decide(_ f: SceneFeatures) -> Scene {
        let p = parameters
        let sustained = f.dipFraction <= p.maxMusicDipFraction
        if sustained && f.levelDBSPL >= p.minMusicDBSPL && (f.pulse >= p.minMusicPulse || Self.notesMove(f, p)) { return .music }
        if f.levelDBSPL >= p.minNoisyDBSPL && (f.snrDB <= p.maxNoisySNRDB || sustained) { return .noisy }
        return .quiet
    }

    /// The second music cue: the spectrum moves much more than the total level.
    static func notesMove(_ f: SceneFeatures, _ p: Parameters) -> Bool {
        f.spectralFluxDB >= p.minMusicFluxDB && f.spectralFluxDB >= p.minMusicFluxPerModulation * f.modulationDB
    }

    func computeFeatures() -> SceneFeatures {
        let bands = Array(self.bands.suffix(windowFrames))
        let broadband = Array(self.broadband.suffix(windowFrames))
        let n = broadband.count
        let bandCount = bandCentresHz.count
        let meanPower = broadband.reduce(0.0) { $0 + Self.power($1) } / Double(n)
        let level = Self.decibels(meanPower)

        var snr = 0.0
        for b in speechBands {
            let series = bands.map { $0[b] }
            snr += Self.percentile(series, 0.95) - Self.percentile(series, 0.10)
        }
        snr /= Double(speechBands.count)

        let top = Self.percentile(broadband, 0.90)
        let dips = broadband.filter { $0 < top - parameters.dipDepthDB }.count

        var flux = 0.0
        var modulation = 0.0
        for t in 1..<n {
            modulation += abs(broadband[t] - broadband[t - 1])
            for b in 0..<bandCount {
                flux += abs((bands[t][b] - broadband[t]) - (bands[t - 1][b] - broadband[t - 1]))
            }
        }
        flux /= Double((n - 1) * bandCount)
        modulation /= Double(n - 1)
        return SceneFeatures(
            levelDBSPL: level, snrDB: snr, dipFraction: Double(dips) / Double(n), spectralFluxDB: flux, modulationDB: modulation,
            pulse: pulse())
    }

    /// See `SceneFeatures.pulse`: over the whole stored history (`rhythmSeconds`), each
    /// band's onset series (its level's rise per frame, mean removed) correlated with itself,
    /// summed over bands, so a kick in the lowest band and a hi-hat in the highest each count
    /// with their own regularity.
    func pulse() -> Double {
        let n = bands.count
        let bandCount = bandCentresHz.count
        guard n > 4 else { return 0 }
        var onsets = [[Double]](repeating: [], count: bandCount)
        var energy = 0.0
        for b in 0..<bandCount {
            var series = (1..<n).map { max(bands[$0][b] - bands[$0 - 1][b], 0) }
            let mean = series.reduce(0, +) / Double(series.count)
            series = series.map { $0 - mean }
            energy += series.reduce(0) { $0 + $1 * $1 }
            onsets[b] = series
        }
        guard energy > 1e-12 else { return 0 }
        let count = n - 1
        let lowest = max(Int((0.2 * parameters.framesPerSecond).rounded()), 1)
        let highest = min(Int((1.0 * parameters.framesPerSecond).rounded()), count / 2)
        guard highest >= lowest else { return 0 }
        var best = 0.0
        for lag in lowest...highest {
            var sum = 0.0
            for series in onsets { for t in 0..<(count - lag) { sum += series[t] * series[t + lag] } }
            // Normalised for the overlap, so long lags are not penalised for fewer terms.
            best = max(best, sum / energy * Double(count) / Double(count - lag))
        }
        return best
    }

    // MARK: Helpers (no Foundation in RibbitDSP)

    static func power(_ db: Double) -> Double { exp(db * 0.230258509299404568) }  // 10^(db/10)
    static func decibels(_ power: Double) -> Double { 4.342944819032518 * log(max(power, 1e-30)) }  // 10 log10
    static func powerSumDB(_ levels: [Double]) -> Double { decibels(levels.reduce(0) { $0 + power($1) }) }

    /// The q-quantile by linear interpolation between order statistics (q in 0...1).
    static func percentile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let i = Int(position)
        guard i + 1 < sorted.count else { return sorted[sorted.count - 1] }
        return sorted[i] + (position - Double(i)) * (sorted[i + 1] - sorted[i])
    }

    /// A figure for the wearer: whole numbers (one decimal below 10 in magnitude).
    static func format(_ value: Double) -> String {
        if abs(value) < 9.95 {
            let tenths = Int((value * 10).rounded())
            let sign = tenths < 0 ? "-" : ""
            return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
        }
        return "\(Int(value.rounded()))"
    }
}
