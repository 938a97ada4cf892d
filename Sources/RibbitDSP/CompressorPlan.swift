import Glibc

/// The compressor as the daemon designs it and the audio process runs it: per channel the
/// settings and the band filters, and the calibration. Plain values, so it crosses the link
/// to `ribbit-audio`, where `CompressorConfig(plan:...)` only builds the tables.
public struct CompressorPlan: Sendable, Equatable {
    /// Per channel, the bands (the same centres in every channel) and the detector's times.
    public var settings: [CompressorSettings]
    /// [channel][band]: symmetric FIRs of the engine's filter length; per channel they sum to
    /// the channel's linear filter.
    public var bandTaps: [[[Double]]]
    public var calibration: Calibration
    /// The narrowest crossover the band filters were designed with (the detector uses it too).
    public var transitionHz: Double
    /// Per-band noise reduction on top of the bands' gains (the program's strength).
    public var noiseReduction: NoiseReductionSettings
    /// Per channel, frequency lowering or nil (empty: no channel is lowered, as before lowering
    /// existed). A lowered channel's `bandTaps` carry only what stays in place.
    public var lowering: [LoweringPlan?]
    /// The wearer's volume the plan plays at: the engine's trim on every band (`start`, or
    /// `OverlapSaveEngine.setTrim`), held under each band's `maximumGainDB`. Not part of the
    /// design, so not on the link: the daemon sends a volume step alone (`AudioMessage.trim`).
    public var trimDB: Double

    public init(
        settings: [CompressorSettings], bandTaps: [[[Double]]], calibration: Calibration, transitionHz: Double,
        noiseReduction: NoiseReductionSettings = .off, lowering: [LoweringPlan?] = [], trimDB: Double = 0
    ) {
        self.settings = settings
        self.bandTaps = bandTaps
        self.calibration = calibration
        self.transitionHz = transitionHz
        self.noiseReduction = noiseReduction
        self.lowering = lowering
        self.trimDB = trimDB
    }

    /// The highest output limit (dB SPL) of any band of `channel`: no steady output of that ear
    /// is meant to exceed it.
    public func loudestLimitDBSPL(channel: Int) -> Double { settings[channel].bands.map(\.limitDBSPL).max() ?? 200 }
}

extension OverlapSaveEngine {
    /// Runs `plan` at its trim from the first hop: for an engine that has not processed yet
    /// (a file, a test box).
    public func start(_ plan: CompressorPlan) throws(EngineError) {
        try publish(CompressorConfig(plan: plan, fftLength: geometry.fftLength, hopSize: geometry.hopSize, sampleRate: sampleRate))
        startAtTrim(dB: plan.trimDB)
    }
}

extension CompressorConfig {
    /// The tables for a plan designed elsewhere (the daemon's `Fitting`), at the engine's geometry.
    public convenience init(plan: CompressorPlan, fftLength: Int, hopSize: Int, sampleRate: Double) {
        self.init(
            settings: plan.settings, bandTaps: plan.bandTaps, calibration: plan.calibration, fftLength: fftLength, hopSize: hopSize,
            sampleRate: sampleRate, transitionHz: plan.transitionHz, noiseReduction: plan.noiseReduction, lowering: plan.lowering)
    }

    /// What this config runs, as a plan (for the link and for tests).
    public var plan: CompressorPlan {
        CompressorPlan(
            settings: settings, bandTaps: bandTaps, calibration: calibration, transitionHz: transitionHz, noiseReduction: noiseReduction,
            lowering: lowering)
    }
}

/// What the compressor's detectors heard, as running totals the audio thread adds to every hop
/// and the control side reads through a seqlock (`OverlapSaveEngine.inputLevelTotals`): per
/// channel and band the detector's calibrated power (level = inputDBSPLAtFullScale + 10 log10
/// of its mean), and the broadband power the same way. Differences of two readings give the
/// mean over the time between them (the automatic program's 100 ms frames).
public struct InputLevelTotals: BitwiseCopyable, Sendable {
    public static let channels = 2
    /// Hops added per channel (the second channel's count in `hops[1]`).
    public var hops: InlineArray<2, Int> = .init(repeating: 0)
    /// [channel * CompressorStage.maxBands + band].
    public var bandPower: InlineArray<64, Double> = .init(repeating: 0)
    public var broadbandPower: InlineArray<2, Double> = .init(repeating: 0)

    public init() {}

    /// Mean levels (dB SPL through `inputDBSPLAtFullScale`) between `earlier` and these totals,
    /// of the power mean over `channels`; nil when no hop was added in between.
    public func meanLevels(since earlier: InputLevelTotals, bands: Int, channels: Int, inputDBSPLAtFullScale: Double)
        -> (bands: [Double], broadband: Double)?
    {
        let used = min(channels, Self.channels)
        let hopCount = (0..<used).reduce(0) { $0 + hops[$1] - earlier.hops[$1] }
        guard hopCount > 0, bands <= CompressorStage.maxBands else { return nil }
        func level(_ power: Double) -> Double { inputDBSPLAtFullScale + 10 * log10(max(power / Double(hopCount), 1e-30)) }
        let bandLevels = (0..<bands).map { b in
            level(
                (0..<used).reduce(0.0) {
                    $0 + bandPower[$1 * CompressorStage.maxBands + b] - earlier.bandPower[$1 * CompressorStage.maxBands + b]
                })
        }
        let broadband = level((0..<used).reduce(0.0) { $0 + broadbandPower[$1] - earlier.broadbandPower[$1] })
        return (bandLevels, broadband)
    }
}
