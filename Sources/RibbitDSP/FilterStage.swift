import RibbitRealtime

/// The first gain stage: multiplies each channel's spectrum by its filter's (a `FilterSet`,
/// the prescription's linear-phase FIR per ear, pre-scaled by 1 / fftLength). With the engine's
/// synthesis this is exact linear convolution with the filter.
public struct FilterStage: SpectralGainStage, BitwiseCopyable {
    public typealias Config = FilterSet
    public let complexCount: Int

    public init(fftLength: Int) { complexCount = fftLength / 2 + 1 }

    #if RIBBIT_RT_AUDIT
        @_noLocks
    #endif
    public func apply(_ config: Unmanaged<FilterSet>, to spectrum: UnsafeMutablePointer<Float>, channel: Int, advancesState: Bool) {
        let bins = complexCount
        let filter = config._withUnsafeGuaranteedRef { $0.spectra } + channel * 2 * bins
        for k in 0..<bins {
            let (a, b) = (spectrum[2 * k], spectrum[2 * k + 1])
            let (c, d) = (filter[2 * k], filter[2 * k + 1])
            spectrum[2 * k] = a * c - b * d
            spectrum[2 * k + 1] = a * d + b * c
        }
    }
}
