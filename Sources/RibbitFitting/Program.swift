import RibbitDSP
import RibbitPrescription

/// What a listening program (`Program`, named in RibbitPrescription) does to the sound. It changes how the
/// prescription is played, never what it prescribes: the gains for speech at 50-80 dB SPL and
/// the output limits stay the audiologist's, so target matching holds in every program.
///
/// | program | noise reduction | compression speed    | expansion                      |
/// |---------|-----------------|----------------------|--------------------------------|
/// | quiet   | off             | as prescribed; follows speech in steady noise | as prescribed |
/// | noisy   | full            | as prescribed; follows speech in steady noise | as prescribed |
/// | outdoor | half            | as prescribed; follows speech in steady noise | below soft speech (or as prescribed) |
/// | music   | off             | slow (50 / 1000 ms)  | off                            |
///
/// Why: in quiet there is nothing to remove and noise reduction could only cost speech; in noise
/// the noise reduction keeps the floor down between words. Outdoors, with half of it, the
/// expander helps, its knee at each band's level of 40 dB SPL speech (`softSpeechDBSPL - 10`).
/// Program noisy does not expand: its noise reduction already takes steady noise down, noise
/// at speech levels stands far above those knees, and the fast detectors took the soft
/// parts of 65 dB SPL speech under them (bench/speech-in-noise.py, a flat fitting: PESQ of
/// clean speech 3.94 with the expander, 4.14 without, before the noise floor followed the end
/// of a sound (now 4.45); STOI and SNR in noise the same); music needs
/// slow detectors so its dynamics survive, and no expansion, so quiet passages are not cut.
/// In steady noise a fast detector would give the gaps between words the gain of soft sounds
/// and so lift the noise: `SteadyNoiseDetector` keeps the gain where the speech set it, in
/// every program whose detectors are fast, once a band's noise floor stands above its level
/// of 30 dB SPL speech (10 dB under where program outdoor's expander starts). A test box measures with it off (`adaptive`).
/// No program offsets the volume: an env label must not move the prescribed gains (the wearer's
/// volume does that, `Listening`).
extension Program {
    /// The noise reduction strength (0 off ... 1 full; `NoiseReductionSettings`).
    public var noiseReductionStrength: Double {
        switch self {
        case .quiet, .music: 0
        case .noisy: 1
        case .outdoor: 0.5
        }
    }

    /// Whether it expands below soft speech where the prescription does not say otherwise.
    public var expandsBelowSoftSpeech: Bool { self == .outdoor }

    /// Overall speech level (dB SPL) called soft; the program expander's knees sit 10 dB below
    /// its band levels.
    public static let softSpeechDBSPL = 50.0

    /// Overall speech level (dB SPL) at whose band levels a band's noise floor starts to matter
    /// (`followingSpeechInNoise`): 30, 10 dB under where program outdoor's expander starts, so
    /// babble at 10 dB SNR counts in more bands (`SteadyNoiseDetector.standard` says what it
    /// wins, measured with bench/speech-in-noise.py).
    public static let steadyNoiseSpeechDBSPL = 30.0

    /// How the detectors follow speech in steady noise (`SteadyNoiseDetector`): every
    /// program but music, whose detectors are slow already.
    public var steadyNoiseDetector: SteadyNoiseDetector? { self == .music ? nil : .standard }

    /// `settings` (placed: `DetectorSpeechLevels`) with this program's `steadyNoiseDetector`:
    /// a band's noise floor matters above its level of `steadyNoiseSpeechDBSPL` speech, read as the
    /// detector reads speech (`detectorOffsetsDB`). Only an ear that compresses: a linear
    /// band's gain does not move with level, so neither does the noise it lets through.
    public func followingSpeechInNoise(_ settings: CompressorSettings, detectorOffsetsDB: [Double]) -> CompressorSettings {
        guard let detector = steadyNoiseDetector, settings.bands.contains(where: { $0.ratio > 1 }) else { return settings }
        var following = settings
        following.steadyNoise = detector
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: settings.bands.map(\.centreHz), overallDBSPL: Self.steadyNoiseSpeechDBSPL)
        for b in following.bands.indices { following.bands[b].steadyNoiseKneeDBSPL = levels[b] + detectorOffsetsDB[b] }
        return following
    }

    /// The prescription as this program plays it (what `CompressorFitting` then fits).
    public func adjust(_ rx: Prescription) -> Prescription {
        guard self == .music else { return rx }
        var adjusted = rx
        adjusted.attackMs = CompressorSettings.musicTimes.attackMs
        adjusted.releaseMs = CompressorSettings.musicTimes.releaseMs
        adjusted.expansion = .off
        return adjusted
    }

    /// The expander this program adds to fitted settings (`adjust` first): knees at the band
    /// levels of speech 10 dB below soft, never above the compression knee, ratio
    /// `CompressorFitting.expansionRatio`. Unchanged when the prescription sets its own.
    /// `detectorOffsetsDB`: per band, how much louder the detector hears speech than the rule's
    /// band level (`DetectorSpeechLevels`); the knees sit where the detector reads that speech.
    public func expand(_ settings: CompressorSettings, prescription rx: Prescription, detectorOffsetsDB: [Double]? = nil)
        -> CompressorSettings
    {
        guard expandsBelowSoftSpeech, rx.expansion == .off else { return settings }
        var expanded = settings
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: settings.bands.map(\.centreHz), overallDBSPL: Self.softSpeechDBSPL - 10)
        for b in expanded.bands.indices {
            let level = levels[b] + (detectorOffsetsDB?[b] ?? 0)
            expanded.bands[b].expansionKneeDBSPL = min(level, expanded.bands[b].kneeDBSPL)
            expanded.bands[b].expansionRatio = CompressorFitting.expansionRatio
        }
        return expanded
    }
}

/// What the wearer chose: a program (or automatic choice) and a volume trim.
public struct Listening: Sendable, Equatable, Codable {
    /// nil: the prescription's default program (`Program.default(forEnvironment:)`).
    public var program: Program?
    /// Let ribbit pick quiet, noisy or music from the sound (`SceneClassifier`).
    public var automatic: Bool
    /// The wearer's trim in dB, within `volumeRangeDB` and the prescription's own range.
    public var volumeDB: Double
    /// The prescription these choices were made for (`Prescription.fingerprint`): a choice
    /// belongs to its prescription, and another one starts from its own defaults.
    public var prescription: String?

    public init(program: Program? = nil, automatic: Bool = false, volumeDB: Double = 0, prescription: String? = nil) {
        self.program = program
        self.automatic = automatic
        self.volumeDB = volumeDB
        self.prescription = prescription
    }

    /// These choices for `rx`: kept (the volume clamped to its range) when they were made for
    /// it, else its defaults (its own program at 0 dB).
    public func belonging(to rx: Prescription) -> Listening {
        let fingerprint = rx.fingerprint
        guard prescription == fingerprint else { return Listening(prescription: fingerprint) }
        var kept = self
        let range = rx.volumeRange
        kept.volumeDB = volumeDB.isFinite ? min(max(volumeDB, range.lowerBound), range.upperBound) : 0
        return kept
    }

    /// How far the wearer may turn the volume either way, at most: a prescription's
    /// `volume-range:` narrows it (or widens it to 20 dB), `Prescription.volumeRange`.
    public static let volumeRangeDB = -Prescription.volumeRangeLimits.upperBound...Prescription.volumeRangeLimits.upperBound
}
