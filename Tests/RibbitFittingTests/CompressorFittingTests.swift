import Foundation
import RibbitDSP
import RibbitFitting
import RibbitPrescription
import Testing

@Suite struct CompressorFittingTests {
    func rx(_ text: String) throws -> Prescription { try Prescription.parse(Array(text.utf8)) }

    let camfit = """
        RIBBIT-RX 2
        name: Sloping
        env: quiet
        rule: camfit
        left: 250=20 500=30 1000=40 2000=50 4000=55 8000=40
        right: 250=20 500=30 1000=40 2000=50 4000=55 8000=40
        ucl-right: 500=100 1000=105 2000=110 4000=95

        """

    /// The static curve passes through the prescribed g50 and g80 at the LTASS band levels of
    /// 50 and 80 dB SPL speech, and through camfit's g65 wherever camfit did not clip to 0.
    @Test func camfitBandsReproduceTheGainsAt50And80DBSPLSpeech() throws {
        let p = try rx(camfit)
        let s = try #require(CompressorFitting.settings(p, ear: .left, trusted: true))
        let levels = p.levelGains(for: .left)!
        let l65 = Camfit.speechBandLevelsDBSPL(centresHz: Camfit.defaultCentresHz, overallDBSPL: 65)
        #expect(s.bands.map(\.centreHz) == Camfit.defaultCentresHz)
        for (i, band) in s.bands.enumerated() {
            let f = Int(band.centreHz)
            #expect(abs(band.gainDB(inputDBSPL: l65[i] - 15) - levels.g50[f]!) < 0.01, "\(f) Hz at 50")
            #expect(abs(band.gainDB(inputDBSPL: l65[i] + 15) - levels.g80[f]!) < 0.01, "\(f) Hz at 80")
            #expect(band.ratio >= 1)
            // Where camfit clipped g80 to 0 the line is steeper than its own ratio (at most 38:13).
            if levels.g80[f]! > 0 {
                #expect(abs(band.gainDB(inputDBSPL: l65[i]) - levels.g65[f]!) <= 1, "\(f) Hz at 65")
                #expect(band.ratio <= 38.0 / 13 + 1e-9)
            }
        }
        #expect(s.bands.contains { $0.ratio > 1.5 })
        #expect(s.attackMs == 5 && s.releaseMs == 70)  // CompressorSettings.speechTimes
        #expect(s.bands.allSatisfy { $0.expansionRatio == 1 })
    }

    /// No `ucl-transducer`: ISO 389-7's free-field thresholds. UCL 105 dB HL at 1000 Hz + 2.4 dB
    /// - 5 dB margin = 102.4 dB SPL; 95 dB HL at 4000 Hz - 5.4 - 5 = 84.6; 500 Hz: 100 + 4.4 - 5
    /// = 99.4. Named TDH-39 earphones (ANSI S3.6 RETSPL 11.5, 7.0, 9.5, 13.0 dB SPL at 0.5, 1, 4,
    /// 8 kHz in the NBS 9-A coupler): 106.5, 107.0, 99.5, 103.0.
    @Test func uclSetsTheOutputLimitBelowDiscomfort() throws {
        let s = try #require(CompressorFitting.settings(try rx(camfit), ear: .right, trusted: true))
        let limits = Dictionary(uniqueKeysWithValues: s.bands.map { (Int($0.centreHz), $0.limitDBSPL) })
        #expect(abs(limits[1000]! - 102.4) < 1e-9)
        #expect(abs(limits[4000]! - 84.6) < 1e-9)
        #expect(abs(limits[500]! - 99.4) < 1e-9)
        #expect(abs(limits[8000]! - (95 + 12.6 - 5)) < 1e-9)  // held flat above 4000 Hz
        var named = try rx(camfit)
        named.uclTransducer = .tdh39
        let tdh = try #require(CompressorFitting.settings(named, ear: .right, trusted: true))
        let tdhLimits = Dictionary(uniqueKeysWithValues: tdh.bands.map { (Int($0.centreHz), $0.limitDBSPL) })
        for (hz, limit) in [500: 106.5, 1000: 107.0, 4000: 99.5, 8000: 103.0] { #expect(abs(tdhLimits[hz]! - limit) < 1e-9, "\(hz) Hz") }
        // Unsaid lies under the supra-aural and circumaural tables everywhere: the key, not its
        // absence, raises a limit.
        for hz in Prescription.audiometricFrequencies {
            for transducer in [Transducer.tdh39, .hda200] {
                #expect(Camfit.retsplDB(atHz: Double(hz)) <= RETSPLTable.standard(transducer).dBSPLAtZeroHL[hz]!, "\(hz) Hz \(transducer)")
            }
        }
        // Untrusted, the OTC cap of 117 dB SPL still applies where the UCL is higher.
        let untrusted = try #require(CompressorFitting.settings(try rx(camfit), ear: .right, trusted: false))
        #expect(untrusted.bands.allSatisfy { $0.limitDBSPL <= 117 })
    }

    @Test func withoutUCLTheOTCRuleCapsUntrustedOutput() throws {
        let p = try rx(camfit)
        #expect(CompressorFitting.settings(p, ear: .left, trusted: false)!.bands.allSatisfy { $0.limitDBSPL == 117 })
        // A trusted signature alone raises nothing: only a `limit:` it signs does, at most to 132.
        #expect(CompressorFitting.settings(p, ear: .left, trusted: true)!.bands.allSatisfy { $0.limitDBSPL == 117 })
        let raised = try rx(camfit + "limit: 125\n")
        #expect(CompressorFitting.settings(raised, ear: .left, trusted: true)!.bands.allSatisfy { $0.limitDBSPL == 125 })
        #expect(CompressorFitting.settings(raised, ear: .left, trusted: false)!.bands.allSatisfy { $0.limitDBSPL == 117 })
        #expect(CompressorFitting.passThrough(raised, trusted: true).bands.allSatisfy { $0.limitDBSPL == 125 })
        #expect(CompressorFitting.passThrough(p, trusted: true).bands.allSatisfy { $0.limitDBSPL == 111 })
        let linear = try rx("RIBBIT-RX 1\nname: a\nenv: quiet\nleft: 500=20 1000=30 2000=40 4000=50\n")
        let s = try #require(CompressorFitting.settings(linear, ear: .left, trusted: false))
        #expect(s.bands.allSatisfy { $0.limitDBSPL == 111 && $0.ratio == 1 && $0.kneeDBSPL == 200 })
        // NAL-R at 1000 Hz: X = 0.05 * 90 = 4.5; 4.5 + 0.31 * 30 + 1 = 14.8.
        #expect(abs(s.bands.first { $0.centreHz == 1000 }!.gainDB - 14.8) < 1e-9)
        #expect(CompressorFitting.settings(linear, ear: .right, trusted: false) == nil)
        let limited = try rx(camfit + "limit: 100\n")
        #expect(CompressorFitting.settings(limited, ear: .left, trusted: true)!.bands.allSatisfy { $0.limitDBSPL == 100 })
    }

    @Test func explicitGainsExpansionAndTimes() throws {
        let p = try rx(
            """
            RIBBIT-RX 2
            name: a
            env: quiet
            rule: explicit
            g50-left: 500=20 1000=20 2000=30 4000=30
            g80-left: 500=20 1000=10 2000=15 4000=15
            attack: 10
            release: 200
            expansion: on

            """)
        let s = try #require(CompressorFitting.settings(p, ear: .left, trusted: false, centresHz: [1000, 2000]))
        #expect(s.bands.count == 2 && s.attackMs == 10 && s.releaseMs == 200)
        #expect(abs(s.bands[0].ratio - 1.5) < 1e-9)  // 30 / (30 + 10 - 20)
        #expect(abs(s.bands[1].ratio - 2) < 1e-9)  // 30 / (30 + 15 - 30)
        for band in s.bands {
            #expect(band.expansionRatio == 2 && band.expansionKneeDBSPL == min(38, band.kneeDBSPL))
        }
    }
}
