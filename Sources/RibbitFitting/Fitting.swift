import Glibc
import RibbitDSP
import RibbitPrescription

/// Turns a prescription into what the engine runs: per ear, the combination curve (gain
/// window times filter window) and the linear-phase filter designed from it.
public struct Fitting: Sendable {
    public let prescription: Prescription
    public let sampleRate: Double
    public let geometry: EngineGeometry

    public init(prescription: Prescription, sampleRate: Double, geometry: EngineGeometry? = nil) throws(EngineError) {
        let geometry = geometry ?? .standard(sampleRate: sampleRate)
        try geometry.validate()
        guard EngineGeometry.supportedSampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        self.prescription = prescription
        self.sampleRate = sampleRate
        self.geometry = geometry
    }

    /// The combination curve of one ear as it plays: the rule's gains, none above
    /// `Prescription.maxGainDB`. An ear the prescription does not give is unprocessed: unity
    /// gain and no low-pass (a pure delay, so both ears stay in sync), ceiling still on.
    public func curve(for ear: Ear, maximumDB: Double = Prescription.maxGainDB) -> CombinationCurve {
        ruleCurve(for: ear, maximumDB: min(maximumDB, Prescription.maxGainDB))
    }

    /// The rule's own curve, with gains up to `maximumDB` (nil: as the rule gives them).
    public func ruleCurve(for ear: Ear, maximumDB: Double? = nil) -> CombinationCurve {
        guard let gains = prescription.targetGains(for: ear) else { return .unity }
        let points = gains.map { GainCurve.Point(frequencyHz: Double($0.key), gainDB: min($0.value, maximumDB ?? .infinity)) }
        return CombinationCurve(gain: GainCurve(points: points), lowpass: LowpassCurve(passHz: prescription.lowpassHz.map(Double.init)))
    }

    /// The gain in dB the linear filter plays at a frequency for one ear, low-pass included
    /// (what a measurement of the output should show). -inf in the stop band.
    public func playedGainDB(for ear: Ear, atHz frequencyHz: Double) -> Double {
        20 * log10(curve(for: ear).amplitude(atHz: frequencyHz))
    }

    /// The rule's target gain in dB at a frequency for one ear, low-pass included, above the
    /// maximum too (`playedGainDB` is what plays). -inf in the stop band.
    public func targetGainDB(for ear: Ear, atHz frequencyHz: Double) -> Double {
        20 * log10(ruleCurve(for: ear).amplitude(atHz: frequencyHz))
    }

    /// Filters for the given ears, in channel order (stereo: [.left, .right]), no gain above
    /// `maximumDB`.
    public func filterSet(ears: [Ear], maximumDB: Double = Prescription.maxGainDB) -> FilterSet {
        let taps = ears.map { ear in
            LinearPhaseFIR.design(
                taps: geometry.filterLength, sampleRate: sampleRate, amplitude: curve(for: ear, maximumDB: maximumDB).amplitude)
        }
        return FilterSet(taps: taps, fftLength: geometry.fftLength, ceilingDBFS: prescription.maxOutputDBFS)
    }
}

extension Fitting {
    /// What the engine runs for `ears` (channel order): the linear filters under the ceiling
    /// `CompressorFitting.ceilingDBFS` (they play while the compressor's tables are built, and
    /// the ceiling holds whatever plays) and the compressor that replaces them. The daemon and
    /// `ribbitd process` both come here, so a file sounds as the hearing aid does.
    public func processing(
        ears: [Ear], trusted: Bool, calibration: Calibration, program: Program? = nil, volumeDB: Double = 0, adaptive: Bool = true
    ) -> (filters: FilterSet, compressor: CompressorPlan) {
        (
            linearFilters(ears: ears, trusted: trusted, calibration: calibration),
            compressorPlan(
                ears: ears, trusted: trusted, calibration: calibration, program: program, volumeDB: volumeDB, adaptive: adaptive)
        )
    }

    /// The linear filters of `processing` alone (two FIR designs: a millisecond or two), under
    /// the same ceiling: what a new audio process starts on while the compressor is designed.
    public func linearFilters(ears: [Ear], trusted: Bool, calibration: Calibration) -> FilterSet {
        let linear = filterSet(ears: ears, maximumDB: GainMaximum.headphonesDB(calibration))
        let ceiling = CompressorFitting.ceilingDBFS(prescription, ears: ears, trusted: trusted, calibration: calibration)
        return FilterSet(taps: linear.taps, fftLength: linear.fftLength, ceilingDBFS: ceiling)
    }

    /// The compressor for the given ears (channel order), which replaces the filter set in the
    /// engine: band filters that split each ear's combination curve (so with every band at
    /// 0 dB they sum to `filterSet`'s filter) and band settings made relative to that curve.
    /// The curve already gives the 65 dB SPL gain at each centre, so a band's gain and output
    /// limit are lowered by it: the insertion gain at the centre is then the static curve's
    /// (`CompressorFitting`), and the ear's FIR between centres keeps the prescription's shape.
    /// An ear the prescription leaves out passes through under the output limit. The program
    /// (default: the one the prescription's `env` selects) adjusts speed and expansion; the
    /// wearer's volume (clamped to the prescription's `volumeRange`) is the plan's trim, which
    /// moves every band's gain at run time, never its output limit. No band gets more than
    /// `GainMaximum` at any level (at most `Prescription.maxGainDB` of insertion gain and
    /// `Calibration.maximumDigitalGainDB` of digital gain), however the prescription, volume and
    /// calibration add up: each band carries it as its `maximumGainDB`. `adaptive` false gives
    /// what a test box measures (ANSI S3.22: adaptive features off): no noise reduction and no
    /// `SteadyNoiseDetector`, the gains and times as prescribed whatever the signal.
    public func compressorPlan(
        ears: [Ear], trusted: Bool, calibration: Calibration, program: Program? = nil, volumeDB: Double = 0, adaptive: Bool = true
    ) -> CompressorPlan {
        let centres = Camfit.defaultCentresHz
        let program = program ?? .default(forEnvironment: prescription.environment)
        let rx = program.adjust(prescription)
        let settings = ears.enumerated().map { channel, ear in
            var relative = DetectorSpeechLevels.placed(
                CompressorFitting.settings(rx, ear: ear, trusted: trusted, centresHz: centres)
                    ?? CompressorFitting.passThrough(rx, trusted: trusted, centresHz: centres), program: program, prescription: rx,
                geometry: geometry, sampleRate: sampleRate)
            if !adaptive { relative.steadyNoise = nil }
            let gain = curve(for: ear).gain
            for b in relative.bands.indices {
                let centre = relative.bands[b].centreHz
                let shape = gain.gainDB(atHz: centre)
                // However far the volume trims the curve, no level gets more than the maximum
                // through this calibration (`CompressorFitting.delivery` reports the same).
                relative.bands[b].maximumGainDB =
                    min(relative.bands[b].maximumGainDB, GainMaximum.db(calibration: calibration, channel: channel, atHz: centre).db)
                    - shape
                relative.bands[b].gainDB -= shape
                relative.bands[b].limitDBSPL -= shape
            }
            return relative
        }
        let transition = BandSplit.minimumTransitionHz(taps: geometry.filterLength, sampleRate: sampleRate)
        let lowering = ears.map { loweringPlan(for: $0, centresHz: centres) }
        let bandTaps = ears.indices.map { channel in
            let amplitude = curve(for: ears[channel]).amplitude
            return BandSplit.bandFilters(
                taps: geometry.filterLength, sampleRate: sampleRate, centres: centres, transitionHz: transition,
                amplitude: lowering[channel].map {
                    LoweringPlan.unmovedAmplitude(
                        cutoffHz: $0.cutoffHz, ratio: $0.ratio, sampleRate: sampleRate, fftLength: geometry.fftLength,
                        amplitude: amplitude)
                } ?? amplitude)
        }
        return CompressorPlan(
            settings: settings, bandTaps: bandTaps, calibration: calibration, transitionHz: transition,
            noiseReduction: adaptive ? NoiseReductionSettings(strength: program.noiseReductionStrength) : .off,
            lowering: lowering.contains { $0 != nil } ? lowering : [], trimDB: trimDB(volumeDB: volumeDB))
    }

    /// The wearer's volume as the engine's trim: clamped to the prescription's `volumeRange`.
    public func trimDB(volumeDB: Double) -> Double {
        let range = prescription.volumeRange
        return volumeDB.isFinite ? min(max(volumeDB, range.lowerBound), range.upperBound) : 0
    }

    /// The ear's frequency lowering (`lowering-left`, `lowering-right`) as the engine runs it,
    /// or nil when the prescription does not lower it: the moved sub-bands carry the ear's
    /// curve at their destinations. Only the compressor lowers; the linear filters that play
    /// while its tables are built do not.
    public func loweringPlan(for ear: Ear, centresHz: [Double] = Camfit.defaultCentresHz) -> LoweringPlan? {
        guard let setting = prescription.lowering[ear] else { return nil }
        return LoweringPlan.design(
            cutoffHz: setting.cutoffHz, ratio: setting.ratio, sampleRate: sampleRate, fftLength: geometry.fftLength,
            taps: geometry.filterLength, centresHz: centresHz, amplitude: curve(for: ear).amplitude)
    }
}
