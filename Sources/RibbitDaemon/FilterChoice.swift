import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSettings

/// What the engine plays: a prescription's filters, or a pure delay under a ceiling (bypass,
/// and pass-through with no prescription). Every choice has a ceiling of at most 0 dBFS.
enum FilterChoice: Sendable, Equatable {
    case delay(ceilingDBFS: Double)
    case prescription(Prescription)

    /// The output ceiling this choice plays under, in dBFS (the engine never exceeds 0).
    var ceilingDBFS: Double {
        switch self {
        case .delay(let dBFS): min(dBFS, 0)
        case .prescription(let prescription): min(prescription.maxOutputDBFS, 0)
        }
    }

    /// Fits and designs the filters for a sample rate (off the RT thread; milliseconds).
    func prepare(sampleRate: Double) throws(EngineError) -> RunningFilters {
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        switch self {
        case .delay(let ceilingDBFS):
            let delay = FilterSet.delay(
                geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: ceilingDBFS)
            return RunningFilters(filters: delay, fitting: nil)
        case .prescription(let prescription):
            let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
            return RunningFilters(filters: fitting.filterSet(ears: [.left, .right]), fitting: fitting)
        }
    }
}

/// What the engine runs: the filters and the fitting they were designed from (nil: a pure
/// delay, in bypass or without a prescription). The dump reads the gains from it.
struct RunningFilters {
    let filters: FilterSet
    let fitting: Fitting?
}
