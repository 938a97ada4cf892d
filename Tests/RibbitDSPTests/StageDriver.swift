@testable import RibbitDSP

/// Drives a one-channel CompressorStage directly with the spectra of `signal` as the engine
/// analyses it (r2c of the newest `fftLength` samples every hop), advancing its state; after each
/// hop `look` gets the stage and the processed spectrum (fftLength / 2 + 1 interleaved bins).
///
/// Runs compared bit for bit must pass the same `fft`: FFTW plans even an estimated transform
/// from any wisdom another test has measured meanwhile, and a different plan rounds differently
/// (a loaded run failed `inQuietTheCompressorIsBitForBitWhatItWas` on the last bits so).
func driveHopByHop(
    _ cfg: CompressorConfig, _ signal: [Float], geometry: EngineGeometry, fft: RealFFT? = nil,
    look: (CompressorStage, UnsafeMutablePointer<Float>) -> Void
) {
    let n = geometry.fftLength
    let stage = CompressorStage(fftLength: n, channelCount: 1)
    defer { stage.deallocate() }
    let fft = fft ?? RealFFT(length: n, measure: false)
    let frame = RealFFT.allocateReal(n)
    let spectrum = RealFFT.allocateComplex(n / 2 + 1)
    defer {
        RealFFT.free(frame)
        RealFFT.free(spectrum)
    }
    for start in stride(from: 0, to: signal.count - n, by: geometry.hopSize) {
        for i in 0..<n { frame[i] = signal[start + i] }
        fft.forward(frame, spectrum)
        stage.apply(.passUnretained(cfg), to: spectrum, channel: 0, advancesState: true)
        look(stage, spectrum)
    }
}
