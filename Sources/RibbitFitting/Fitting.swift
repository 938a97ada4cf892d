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

    /// The combination curve of one ear. An ear the prescription does not give is unprocessed:
    /// unity gain and no low-pass (a pure delay, so both ears stay in sync), ceiling still on.
    public func curve(for ear: Ear) -> CombinationCurve {
        guard let gains = prescription.targetGains(for: ear) else { return .unity }
        let points = gains.map { GainCurve.Point(frequencyHz: Double($0.key), gainDB: $0.value) }
        return CombinationCurve(gain: GainCurve(points: points), lowpass: LowpassCurve(passHz: prescription.lowpassHz.map(Double.init)))
    }

    /// The target gain in dB at a frequency for one ear, low-pass included (what a measurement
    /// of the output should show). -inf in the stop band.
    public func targetGainDB(for ear: Ear, atHz frequencyHz: Double) -> Double {
        20 * log10(curve(for: ear).amplitude(atHz: frequencyHz))
    }

    /// Filters for the given ears, in channel order (stereo: [.left, .right]).
    public func filterSet(ears: [Ear]) -> FilterSet {
        let taps = ears.map { ear in
            LinearPhaseFIR.design(taps: geometry.filterLength, sampleRate: sampleRate, amplitude: curve(for: ear).amplitude)
        }
        return FilterSet(taps: taps, fftLength: geometry.fftLength, ceilingDBFS: prescription.maxOutputDBFS)
    }
}
