import RibbitDSP
import RibbitPrescription

/// A listening program: a named preset over the prescription for a kind of surroundings, as
/// commercial hearing aids offer (and the seed design's "pick where you are"). It changes how the
/// prescription is played, never what it prescribes: the gains for speech and the output
/// limits stay the audiologist's.
///
/// | program | noise reduction | compression speed    | expansion          | volume |
/// |---------|-----------------|----------------------|--------------------|--------|
/// | quiet   | off             | as prescribed        | as prescribed      | 0 dB   |
/// | noisy   | full            | as prescribed        | on (or prescribed) | -2 dB  |
/// | outdoor | half            | as prescribed        | on (or prescribed) | 0 dB   |
/// | music   | off             | slow (50 / 1000 ms)  | off                | 0 dB   |
///
/// Why: in quiet there is nothing to remove and noise reduction could only cost speech; in noise
/// the expander keeps the floor down between words and 2 dB less gain is welcome where sound is
/// already loud; music needs slow detectors so its dynamics survive, and no expansion, so
/// quiet passages are not cut.
public enum Program: String, CaseIterable, Sendable, Codable {
    case quiet, noisy, outdoor, music

    /// The noise reduction strength (0 off ... 1 full; `NoiseReductionSettings`).
    public var noiseReductionStrength: Double {
        switch self {
        case .quiet, .music: 0
        case .noisy: 1
        case .outdoor: 0.5
        }
    }

    /// Added to every band's gain, on top of the wearer's volume (output limits still hold).
    public var volumeOffsetDB: Double { self == .noisy ? -2 : 0 }

    /// The program a prescription's `env` selects: its name when it is one, else quiet.
    public static func `default`(forEnvironment environment: String) -> Program {
        Program(rawValue: environment.lowercased()) ?? (environment.lowercased() == "outdoors" ? .outdoor : .quiet)
    }

    /// The prescription as this program plays it (what `CompressorFitting` then fits).
    public func adjust(_ rx: Prescription) -> Prescription {
        var adjusted = rx
        switch self {
        case .quiet: break
        case .noisy, .outdoor:
            if rx.expansion == .off { adjusted.expansion = .on }
        case .music:
            adjusted.attackMs = CompressorSettings.musicTimes.attackMs
            adjusted.releaseMs = CompressorSettings.musicTimes.releaseMs
            adjusted.expansion = .off
        }
        return adjusted
    }
}

/// What the wearer chose: a program (or automatic choice) and a volume trim.
public struct Listening: Sendable, Equatable, Codable {
    /// nil: the prescription's default program (`Program.default(forEnvironment:)`).
    public var program: Program?
    /// Let ribbit pick quiet, noisy or music from the sound (`SceneClassifier`).
    public var automatic: Bool
    /// The wearer's trim in dB, within `volumeRangeDB`.
    public var volumeDB: Double

    public init(program: Program? = nil, automatic: Bool = false, volumeDB: Double = 0) {
        self.program = program
        self.automatic = automatic
        self.volumeDB = volumeDB
    }

    /// How far the wearer may turn the volume either way.
    public static let volumeRangeDB = -10.0...10.0
}
