import Testing

@testable import RibbitPrescription

/// Rule values worked out by hand from the formulas in docs/prescription-format.md.
@Suite struct FittingRuleTests {
    let mild = [250: 10, 500: 15, 1000: 20, 2000: 35, 4000: 50]

    @Test func nalRFollowsByrneAndDillon() throws {
        // X = 0.05 (15 + 20 + 35) = 3.5
        let g = try #require(FittingRule.nalR.insertionGains(thresholds: mild))
        #expect(g[250] == 0)  // 3.5 + 3.1 - 17 < 0 -> 0
        #expect(abs(g[500]! - (3.5 + 4.65 - 8)) < 1e-12)  // 0.15
        #expect(abs(g[1000]! - (3.5 + 6.2 + 1)) < 1e-12)  // 10.7
        #expect(abs(g[2000]! - (3.5 + 10.85 - 1)) < 1e-12)  // 13.35
        #expect(abs(g[4000]! - (3.5 + 15.5 - 2)) < 1e-12)  // 17
    }

    @Test func nalRUsesTheProfoundXAboveASumOf180() throws {
        // Sum = 70 + 80 + 90 = 240: X = 9 + 0.116 * 60 = 15.96
        let g = try #require(FittingRule.nalR.insertionGains(thresholds: [500: 70, 1000: 80, 2000: 90, 4000: 100]))
        #expect(abs(g[1000]! - (15.96 + 24.8 + 1)) < 1e-9)
        #expect(abs(g[4000]! - (15.96 + 31 - 2)) < 1e-9)
    }

    @Test func halfGainIsHalfTheThresholdAndNeverNegative() throws {
        let g = try #require(FittingRule.halfGain.insertionGains(thresholds: [500: -10, 1000: 30, 2000: 45, 4000: 60]))
        #expect(g == [500: 0, 1000: 15, 2000: 22.5, 4000: 30])
    }

    @Test func pogo2CutsTheLowsAndAddsHalfTheExcessOver65() throws {
        let g = try #require(FittingRule.pogo2.insertionGains(thresholds: [250: 40, 500: 50, 1000: 60, 2000: 70, 4000: 80]))
        #expect(g == [250: 10, 500: 20, 1000: 30, 2000: 37.5, 4000: 47.5])
    }

    @Test func explicitHasNoFormula() {
        #expect(FittingRule.explicit.insertionGains(thresholds: mild) == nil)
    }
}
