import ArgumentParser
import RibbitDSP

/// Engine sizes, shared by the commands that run the engine.
struct EngineOptions: ParsableArguments {
    @Option(name: .customLong("fft"), help: ArgumentHelp("FFT length in samples (default: 4 x hop).", valueName: "N"))
    var fftLength: Int?

    @Option(
        name: .customLong("hop"), help: ArgumentHelp("Hop size in samples (default: 64 at 44.1/48 kHz, 128 at 96 kHz).", valueName: "N"))
    var hopSize: Int?

    @Option(
        name: .customLong("taps"), help: ArgumentHelp("Filter length, odd (default: the longest that fits, fft - hop + 1).", valueName: "N")
    )
    var filterLength: Int?

    /// The geometry for a sample rate: defaults filled in, then validated.
    func geometry(sampleRate: Double) throws(RibbitError) -> EngineGeometry {
        let standard = EngineGeometry.standard(sampleRate: sampleRate)
        let hop = hopSize ?? (fftLength.map { $0 / 4 } ?? standard.hopSize)
        let fft = fftLength ?? 4 * hop
        var geometry = EngineGeometry(fftLength: fft, hopSize: hop)
        if let filterLength { geometry.filterLength = filterLength }
        do { try geometry.validate() } catch { throw .usage(error.description) }
        return geometry
    }
}
