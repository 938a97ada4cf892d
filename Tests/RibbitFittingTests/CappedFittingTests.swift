import RibbitAudiometry
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import Testing

/// `Prescription.cappedToMaxGain` through the compressor's fitting: the gains capped, the
/// output limits where camfit put them.
@Suite struct CappedFittingTests {
    @Test func cappingLowersOnlyTheGainsAboveFiftyAndKeepsTheOutputLimits() throws {
        var rx = Prescription(
            name: "deep", environment: "quiet", rule: .camfit,
            thresholds: [
                .right: [250: 20, 500: 25, 1000: 35, 2000: 45, 3000: 55, 4000: 60, 6000: 65, 8000: 70],
                .left: [250: 20, 500: 25, 1000: 30, 2000: 40, 4000: 50, 8000: 90],
            ], noResponse: [.left: [8000]])
        rx.version = 2
        let (capped, caps) = try #require(rx.cappedToMaxGain())
        #expect(try Prescription.parse(Array(capped.text.utf8)) == capped)
        #expect(caps.map(\.ear).contains(.right) && caps.contains { $0.ear == .left && $0.frequencyHz == 8000 && $0.cutDB > 10 })
        for ear in Ear.allCases {
            for trusted in [false, true] {
                let camfit = try #require(CompressorFitting.settings(rx, ear: ear, trusted: trusted))
                let played = try #require(CompressorFitting.settings(capped, ear: ear, trusted: trusted))
                #expect(played.bands.map(\.limitDBSPL) == camfit.bands.map(\.limitDBSPL))
                #expect(played.attackMs == camfit.attackMs && played.releaseMs == camfit.releaseMs)
                for (a, b) in zip(played.bands, camfit.bands) {
                    #expect(a.kneeDBSPL == b.kneeDBSPL)
                    if b.gainDB > 50 {
                        #expect(a.gainDB == 50)
                    } else {
                        #expect(abs(a.gainDB - b.gainDB) <= 0.05 && abs(a.ratio - b.ratio) < 0.05, "\(ear) \(b.centreHz) Hz")
                    }
                }
            }
        }
        // A linear rule is capped as explicit `gain-` values (POGO II: half the loss, more above 65 dB HL).
        var linear = rx
        linear.rule = .pogo2
        linear.version = 1
        linear.thresholds[.left]?[8000] = 110
        let (flat, flatCaps) = try #require(linear.cappedToMaxGain())
        #expect(flat.explicitGains[.left]?[8000] == 50 && flatCaps.contains { $0.frequencyHz == 8000 })
        #expect(try Prescription.parse(Array(flat.text.utf8)) == flat)
    }
}
