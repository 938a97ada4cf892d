import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSettings

/// What the engine plays: a prescription through the compressor, or a pure delay under a
/// ceiling (bypass, and pass-through with no prescription). Every choice has a ceiling of at
/// most 0 dBFS, and through the calibration no sample plays above the output limit in dB SPL.
enum FilterChoice: Sendable, Equatable {
    case delay(ceilingDBFS: Double)
    /// `trusted`: signed by a trusted audiologist, so its `limit:` may exceed the OTC caps;
    /// played in `program` (the wearer's volume is the engine's trim, not part of the design);
    /// `adaptive` false while a test box measures (`Fitting.compressorPlan`).
    case prescription(Prescription, trusted: Bool, program: Program, adaptive: Bool)

    /// The output ceiling this choice plays under, in dBFS: the prescription's max-output, and
    /// the loudest band output limit through the calibration (a sine peaking at the ceiling
    /// plays at that limit); a delay under the OTC limit. Never above 0.
    func ceilingDBFS(calibration: Calibration) -> Double {
        switch self {
        case .delay(let dBFS): CompressorFitting.unfittedCeilingDBFS(dBFS, calibration: calibration)
        case .prescription(let rx, let trusted, _, _):
            CompressorFitting.ceilingDBFS(rx, ears: [.left, .right], trusted: trusted, calibration: calibration)
        }
    }

    /// Fits and designs the filters and the compressor for a sample rate (off the RT thread;
    /// tens of milliseconds).
    func prepare(sampleRate: Double, calibration: Calibration) throws(EngineError) -> RunningFilters {
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        let ceiling = ceilingDBFS(calibration: calibration)
        switch self {
        case .delay:
            let delay = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: ceiling)
            return RunningFilters(choice: self, filters: delay, ceilingDBFS: ceiling, fitting: nil, compressor: nil)
        case .prescription(let prescription, let trusted, let program, let adaptive):
            let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
            let (filters, compressor) = fitting.processing(
                ears: [.left, .right], trusted: trusted, calibration: calibration, program: program, adaptive: adaptive)
            return RunningFilters(choice: self, filters: filters, ceilingDBFS: ceiling, fitting: fitting, compressor: compressor)
        }
    }
}

extension FilterChoice {
    /// What a new audio process starts on before `prepare`'s compressor comes: a prescription's
    /// linear filters (the 65 dB SPL gains, under the same ceiling), designed in a millisecond
    /// or two rather than the compressor's tens; nil for a delay, which `prepare` makes as fast.
    func prepareLinear(sampleRate: Double, calibration: Calibration) throws(EngineError) -> FilterSet? {
        guard case .prescription(let prescription, let trusted, _, _) = self else { return nil }
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        return try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
            .linearFilters(ears: [.left, .right], trusted: trusted, calibration: calibration)
    }
}

/// What the engine runs: the filters (the ceiling always, the sound when there is no
/// compressor), the fitting they were designed from (nil: a pure delay, in bypass or without a
/// prescription; the dump reads the gains from it) and the compressor that replaces them.
struct RunningFilters {
    /// What they were designed for (a prepared design is reused only for the same choice).
    let choice: FilterChoice
    let filters: FilterSet
    let ceilingDBFS: Double
    let fitting: Fitting?
    let compressor: CompressorPlan?
}
