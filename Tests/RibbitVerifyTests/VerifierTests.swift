import Glibc
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitSignals
import Testing

@testable import RibbitVerify

/// `ribbitd verify`'s measurements against closed forms.
@Suite struct VerifierTests {
    static let info = VerifyReport.CalibrationInfo(
        label: "uncalibrated, +-20 dB", inputDBSPLAtFullScale: 100, outputLeftDBSPLAtFullScale: 100, outputRightDBSPLAtFullScale: 100,
        uncertaintyDB: 20)

    /// Rule explicit, 20 dB at every frequency, no low-pass, linear.
    static func flat(_ gainDB: Double, limit: Double? = nil) -> Prescription {
        let gains = Dictionary(uniqueKeysWithValues: Prescription.audiometricFrequencies.map { ($0, gainDB) })
        var rx = Prescription(
            name: "flat \(gainDB)", environment: "quiet", rule: .explicit, explicitGains: [.left: gains, .right: gains], lowpassHz: nil,
            maxOutputDBFS: 0)
        rx.limitDBSPL = limit
        return rx
    }

    @Test func flatLinearFitting() throws {
        let verifier = Verifier(prescription: Self.flat(20), trusted: false, calibration: .uncalibrated, toneSeconds: 0.25, speechSeconds: 2)
        let report = try verifier.report(calibrationInfo: Self.info, date: "2026-11-23", prescriptionText: "")
        for ear in report.ears {
            print(ear.ear, ear.hfaFullOnGainDB ?? .nan, ear.ospl90MaxDBSPL ?? .nan, ear.referenceTestGainDB ?? .nan, ear.referenceVolumeDB,
                ear.distortion.map { $0.thdPercent ?? .nan }, ear.noise, ear.attackMs ?? .nan, ear.releaseMs ?? .nan)
            print(ear.targetMatch.map { ($0.levelDBSPL, $0.worstDeviationDB, $0.worstHz) })
        }
        print(report.latency)
    }
}
