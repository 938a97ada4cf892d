import RibbitAudiometry
import RibbitPrescription
import Testing

@Suite struct RETSPLTests {
    let audiometric = [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]

    @Test(arguments: Transducer.allCases)
    func everyTableCoversTheTestAndRoundTrips(_ transducer: Transducer) {
        let levels = ToneLevels(table: .standard(transducer), calibration: ToneCalibration(dBSPLAtZeroDBFS: 104.5, responseDB: [4000: 2.5]))
        #expect(levels.table.isStandard == (transducer != .consumer))
        for frequencyHz in audiometric {
            for dBHL in stride(from: -10.0, through: 90, by: 5) {
                let dBFS = levels.dBFS(dBHL: dBHL, frequencyHz: frequencyHz)!
                #expect(abs(levels.dBHL(dBFS: dBFS, frequencyHz: frequencyHz)! - dBHL) < 1e-9)
            }
        }
        #expect(levels.dBFS(dBHL: 0, frequencyHz: 1234) == nil, "no RETSPL, no tone")
    }

    @Test func dBHLBecomesdBSPLThenDBFS() {
        let levels = ToneLevels(table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 100, responseDB: [4000: 2.5]))
        #expect(levels.dBSPL(dBHL: 40, frequencyHz: 1000) == 47)
        #expect(levels.dBFS(dBHL: 40, frequencyHz: 1000) == -53)
        // The headphone is 2.5 dB louder at 4 kHz: 2.5 dB less digital level.
        #expect(levels.dBFS(dBHL: 40, frequencyHz: 4000) == 40 + 9.5 - 102.5)
        #expect(RETSPLTable.standard(.hda200).dBSPLAtZeroHL[1000] == 5.5 && RETSPLTable.standard(.er3a).dBSPLAtZeroHL[1000] == 0)
    }

    /// 1 dB below clipping, then the 90 dB HL self-test ceiling, on the 5 dB grid.
    @Test func theMaximumStaysBelowClippingAndTheCeiling() {
        let loud = ToneLevels(table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 110))
        #expect(loud.clipLimitDBHL(frequencyHz: 1000) == 102)
        #expect(loud.maximumDBHL(frequencyHz: 1000) == 90)
        #expect(loud.maximumDBHL(frequencyHz: 1000, ceilingDBHL: 120) == 100)
        let quiet = ToneLevels(table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 95))
        #expect(quiet.clipLimitDBHL(frequencyHz: 250) == 68.5)
        #expect(quiet.maximumDBHL(frequencyHz: 250) == 65)
        for frequencyHz in audiometric {
            let maximum = Double(quiet.maximumDBHL(frequencyHz: frequencyHz)!)
            #expect(quiet.dBFS(dBHL: maximum, frequencyHz: frequencyHz)! <= -1)
        }
    }

    /// The daemon plays tones no louder than its tone limit and 1 dB under the output ceiling:
    /// the test's maximum follows what really plays, never the clip limit alone.
    @Test func theMaximumIsWhatThePlayerReallyPlays() {
        let capped = ToneLevels(
            table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 110), highestPlayedDBFS: -20)
        #expect(capped.clipLimitDBHL(frequencyHz: 1000) == 83)
        #expect(capped.maximumDBHL(frequencyHz: 1000) == 80)
        #expect(capped.dBFS(dBHL: 80, frequencyHz: 1000)! <= -20)
        let above = ToneLevels(table: .standard(.tdh39), calibration: ToneCalibration(dBSPLAtZeroDBFS: 110), highestPlayedDBFS: 3)
        #expect(above.highestPlayedDBFS == -1, "never closer than 1 dB to clipping")
    }

    /// A normal-hearing reference who measures 5 dB HL at 1 kHz on the placeholder makes that level 0 dB HL.
    @Test func biologicalCalibrationMovesZeroToTheReferencesThreshold() {
        let table = RETSPLTable.standard(.consumer).biologicallyCalibrated(referenceThresholdsDBHL: [1000: 5, 4000: -3])
        #expect(table.dBSPLAtZeroHL[1000] == 12 && table.dBSPLAtZeroHL[4000] == 6.5 && table.dBSPLAtZeroHL[250] == 25.5)
        #expect(!table.isStandard)
    }
}
