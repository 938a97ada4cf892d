import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import RibbitTestSupport
import Testing

/// Where each program's level-dependent features start, in dB SPL of speech: program outdoor's
/// expander at the band levels of 40 dB SPL speech (10 dB under soft), the steady-noise
/// detector's floor at those of 30 dB SPL speech. Pinned apart, since one constant once moved
/// both (the expander's knees fell 10 dB with the detector's).
@Suite struct ProgramKneeTests {
    @Test func theExpanderAndTheSteadyNoiseKneeSitAtTheirOwnSpeechLevels() throws {
        let rx = try Prescription.parse(Array(try Data(contentsOf: TestPaths.prescription("camfit-sloping.rx"))))
        let settings = try #require(CompressorFitting.settings(rx, ear: .left, trusted: false))
        let centres = settings.bands.map(\.centreHz)
        let forty = Camfit.speechBandLevelsDBSPL(centresHz: centres, overallDBSPL: 40)
        let thirty = Camfit.speechBandLevelsDBSPL(centresHz: centres, overallDBSPL: 30)
        let expanded = Program.outdoor.expand(settings, prescription: rx)
        for (b, band) in expanded.bands.enumerated() {
            #expect(abs(band.expansionKneeDBSPL - min(forty[b], settings.bands[b].kneeDBSPL)) < 1e-9, "\(band.centreHz) Hz")
        }
        let following = Program.quiet.followingSpeechInNoise(settings, detectorOffsetsDB: centres.map { _ in 0 })
        for (b, band) in following.bands.enumerated() {
            #expect(abs(band.steadyNoiseKneeDBSPL - thirty[b]) < 1e-9, "\(band.centreHz) Hz")
        }
        #expect(zip(forty, thirty).allSatisfy { abs($0 - $1 - 10) < 1e-9 })
    }
}
