/// What the voice analysis says about one hop (10 ms) of the microphone: the numbers every
/// game, the terminal meter and the progress record are built from.
public struct VoiceFrame: Codable, Sendable, Equatable {
    /// Seconds from the analysis' first sample to the end of this hop.
    public var time: Double
    /// The hop's level: dB SPL when `calibrated`, otherwise dB re full scale (dBFS). Silence
    /// reads `VoiceFrame.floorDB`, never -inf (JSON carries only numbers).
    public var levelDB: Double
    /// True when `levelDB` is in dB SPL through the calibration's microphone level.
    public var calibrated: Bool
    /// Periodicity, 0 (noise, a clap) to 1 (a clean periodic voice).
    public var clarity: Double
    /// A voice sounds: periodic enough, loud enough, in the voice's pitch range.
    public var voiced: Bool
    /// The fundamental frequency when voiced (after the octave-error guard and the median).
    public var f0Hz: Double?

    public static let floorDB = -120.0

    public init(time: Double, levelDB: Double, calibrated: Bool, clarity: Double, voiced: Bool, f0Hz: Double?) {
        self.time = time
        self.levelDB = levelDB
        self.calibrated = calibrated
        self.clarity = clarity
        self.voiced = voiced
        self.f0Hz = f0Hz
    }
}
