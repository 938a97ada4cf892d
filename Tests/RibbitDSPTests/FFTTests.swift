import Foundation
import RibbitSignals
import Testing

@testable import RibbitDSP

/// FFTW's contract as RealFFT states it: unnormalised r2c, bins 0...N/2 interleaved.
@Suite struct FFTTests {
    let n = 64

    func transform(_ x: [Float]) -> [(re: Double, im: Double)] {
        let fft = RealFFT(length: n)
        let input = RealFFT.allocateReal(n)
        let output = RealFFT.allocateComplex(fft.complexCount)
        defer {
            RealFFT.free(input)
            RealFFT.free(output)
        }
        for i in 0..<n { input[i] = x[i] }
        fft.forward(input, output)
        return (0..<fft.complexCount).map { (Double(output[2 * $0]), Double(output[2 * $0 + 1])) }
    }

    @Test func dcLandsInBinZeroOnly() {
        let x = transform([Float](repeating: 1, count: n))
        #expect(abs(x[0].re - Double(n)) < 1e-5)
        for k in 1...n / 2 { #expect(hypot(x[k].re, x[k].im) < 1e-5) }
    }

    @Test func nyquistLandsInTheLastBin() {
        let x = transform((0..<n).map { $0 % 2 == 0 ? 1 : -1 })
        #expect(abs(x[n / 2].re - Double(n)) < 1e-5)
        for k in 0..<n / 2 { #expect(hypot(x[k].re, x[k].im) < 1e-5) }
    }

    @Test func diracIsFlatWithLinearPhase() {
        let x = transform(Signals.impulse(count: n, at: 3))
        for k in 0...n / 2 {
            let angle = -2 * Double.pi * Double(3 * k) / Double(n)
            #expect(abs(x[k].re - cos(angle)) < 1e-6 && abs(x[k].im - sin(angle)) < 1e-6)
        }
    }

    @Test func matchesAPlainDFTOnSeededNoise() {
        let signal = Signals.uniformNoise(count: n, peak: 1, seed: 7)
        let x = transform(signal)
        for k in 0...n / 2 {
            var re = 0.0, im = 0.0
            for (i, v) in signal.enumerated() {
                re += Double(v) * cos(2 * .pi * Double(k * i) / Double(n))
                im -= Double(v) * sin(2 * .pi * Double(k * i) / Double(n))
            }
            #expect(abs(x[k].re - re) < 1e-4 && abs(x[k].im - im) < 1e-4)
        }
    }

    @Test func inverseOfForwardIsNTimesTheInput() {
        let fft = RealFFT(length: n)
        let input = RealFFT.allocateReal(n)
        let spectrum = RealFFT.allocateComplex(fft.complexCount)
        let back = RealFFT.allocateReal(n)
        defer { [input, spectrum, back].forEach(RealFFT.free) }
        let signal = Signals.uniformNoise(count: n, peak: 1, seed: 8)
        for i in 0..<n { input[i] = signal[i] }
        fft.forward(input, spectrum)
        fft.inverse(spectrum, back)
        for i in 0..<n { #expect(abs(back[i] / Float(n) - signal[i]) < 1e-5) }
    }
}
