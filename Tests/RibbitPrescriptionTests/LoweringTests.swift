import Testing

@testable import RibbitPrescription

@Suite struct FrequencyLoweringParserTests {
    @Test func loweringParsesPrintsAndRoundTrips() throws {
        let text = """
            RIBBIT-RX 2
            name: Steep
            env: quiet
            rule: camfit
            left: 500=20 1000=25 2000=55 4000=95
            right: 500=20 1000=25 2000=55 4000=95
            lowering-left: 2000 2
            lowering-right: 1500 2.5
            lowpass: 8000
            max-output: -1

            """
        let rx = try parse(text)
        #expect(rx.lowering == [.left: FrequencyLowering(cutoffHz: 2000, ratio: 2), .right: FrequencyLowering(cutoffHz: 1500, ratio: 2.5)])
        #expect(rx.text == text)
        #expect(try parse(rx.text) == rx)
        // Extra spaces are fine, the canonical text has one.
        let spaced = try parse(variant2(adding: "lowering-left:   3000    1.5"))
        #expect(spaced.lowering[.left] == FrequencyLowering(cutoffHz: 3000, ratio: 1.5))
        #expect(spaced.text.contains("\nlowering-left: 3000 1.5\n"))
    }

    @Test func loweringIsOffByDefaultAndTheTextIsUnchanged() throws {
        let rx = try parse(minimal2)
        #expect(rx.lowering.isEmpty)
        #expect(!rx.text.contains("lowering"))
        var lowered = rx
        lowered.lowering[.left] = FrequencyLowering(cutoffHz: 2000, ratio: 2)
        #expect(lowered != rx, "lowering is part of a prescription's identity")
    }

    /// fc (f / fc)^(1 / CR) above the cut-off, f itself below.
    @Test func theMappingIsTheClosedForm() {
        let lowering = FrequencyLowering(cutoffHz: 2000, ratio: 2)
        #expect(lowering.mappedHz(1000) == 1000)
        #expect(lowering.mappedHz(2000) == 2000)
        #expect(abs(lowering.mappedHz(8000) - 4000) < 1e-9, "two octaves above become one")
        #expect(abs(lowering.mappedHz(4000) - 2000 * 2.0.squareRoot()) < 1e-9)
        let steep = FrequencyLowering(cutoffHz: 1500, ratio: 3)
        #expect(abs(steep.mappedHz(1500 * 8) - 3000) < 1e-9, "three octaves above become one")
    }

    static let failures: [(String, PrescriptionError)] = [
        (
            variant(adding: "lowering-left: 2000 2"),
            PrescriptionError(line: 5, "'lowering-left' needs format version 2; start the file with 'RIBBIT-RX 2'")
        ),
        (
            variant2(adding: "lowering-left: 1000 2"),
            PrescriptionError(
                line: 6,
                "'lowering-left': '1000 2' must be a cut-off in Hz from 1500 to 6000 and a ratio from 1.5 to 4, e.g. 'lowering-left: 2000 2'"
            )
        ),
        (
            variant2(adding: "lowering-left: 2000 5"),
            PrescriptionError(
                line: 6,
                "'lowering-left': '2000 5' must be a cut-off in Hz from 1500 to 6000 and a ratio from 1.5 to 4, e.g. 'lowering-left: 2000 2'"
            )
        ),
        (
            variant2(adding: "lowering-left: 2000"),
            PrescriptionError(
                line: 6,
                "'lowering-left': '2000' must be a cut-off in Hz from 1500 to 6000 and a ratio from 1.5 to 4, e.g. 'lowering-left: 2000 2'")
        ),
        (
            variant2(adding: "lowering-left: 2000 2 3"),
            PrescriptionError(
                line: 6,
                "'lowering-left': '2000 2 3' must be a cut-off in Hz from 1500 to 6000 and a ratio from 1.5 to 4, e.g. 'lowering-left: 2000 2'"
            )
        ),
        (
            variant2(adding: "lowering-left: nan 2"),
            PrescriptionError(
                line: 6,
                "'lowering-left': 'nan 2' must be a cut-off in Hz from 1500 to 6000 and a ratio from 1.5 to 4, e.g. 'lowering-left: 2000 2'"
            )
        ),
        (
            variant2(adding: "lowering-right: 2000 2"),
            PrescriptionError(
                line: 6, "'lowering-right' lowers the right ear, which this prescription does not fit; fit that ear or remove it")
        ),
        (
            variant2(adding: "lowpass: 2000\nlowering-left: 2000 2"),
            PrescriptionError(
                line: 7,
                "'lowering-left': the cut-off 2000 Hz is not below 'lowpass: 2000'; nothing above the low-pass plays, so lower the cut-off")
        ),
        (
            variant2(adding: "lowering-left: 2000 2\nlowering-left: 3000 2"),
            PrescriptionError(line: 7, "'lowering-left' is given twice (first on line 6)")
        ),
    ]

    @Test(arguments: failures.indices)
    func loweringErrorsNameTheLineAndTheRule(index: Int) {
        let (text, expected) = Self.failures[index]
        #expect(throws: expected) { try parse(text) }
    }
}
