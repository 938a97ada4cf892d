import Foundation
import RibbitPlot
import RibbitPrescription
import Testing

/// The clinical conventions every plot shares, checked on the numbers and on the SVG they make.
@Suite struct ConventionTests {
    @Test func theRightEarComesFirstInRedWithACircle() {
        #expect(Ear.plotOrder == [.right, .left])
        #expect(Ear.right.plotColor == "#d00000" && Ear.left.plotColor == "#0050d0")
        #expect(Ear.right.audiogramSymbol == .circle && Ear.left.audiogramSymbol == .cross)
        #expect(Ear.right.plotTitle == "Right ear" && Ear.left.plotTitle == "Left ear")
    }

    /// ASHA/ANSI: one octave as wide as 20 dB is tall, for any size.
    @Test(arguments: [30.0, 52.5, 59.45])
    func theAudiogramGridIsSquare(_ pixelsPerOctave: Double) {
        let scale = AudiogramScale(left: 10, top: 20, pixelsPerOctave: pixelsPerOctave)
        let octave = scale.x(1000) - scale.x(500)
        let twentyDB = scale.y(40) - scale.y(20)
        #expect(abs(octave - twentyDB) < 1e-9 && abs(octave - pixelsPerOctave) < 1e-9)
        #expect(scale.x(125) == 10 && abs(scale.x(8000) - (10 + 6 * pixelsPerOctave)) < 1e-9)
        #expect(scale.y(-10) == 20 && abs(scale.y(120) - (20 + 6.5 * pixelsPerOctave)) < 1e-9, "120 dB HL at the bottom")
        #expect(scale.y(60) > scale.y(0), "hearing level grows downward")
    }

    @Test func ticksAreRound() {
        #expect(AudiogramScale.levelTicksDBHL == stride(from: -10.0, through: 120, by: 10).map { $0 })
        #expect(roundTicks(from: -13.7, to: 61, step: 20) == [0, 20, 40, 60])
        #expect(roundTicks(from: -100, to: 0, step: 20) == [-100, -80, -60, -40, -20, 0])
        #expect(roundTicks(from: -90, to: 0, step: 30).map { "\($0)" } == ["-90.0", "-60.0", "-30.0", "0.0"], "no -0")
        #expect(AudiogramScale.octaveTicksHz.map(frequencyLabel) == ["125", "250", "500", "1k", "2k", "4k", "8k"])
        #expect(AudiogramScale.halfOctaveTicksHz.map(frequencyLabel) == ["750", "1.5k", "3k", "6k"])
    }

    @Test func svgNumbersHaveOneDecimalAndNoNegativeZero() {
        #expect([0.04, -0.04, 12.25, -3.5, 100, 7.96].map(svgNumber) == ["0", "0", "12.3", "-3.5", "100", "8"])
    }

    /// Responses are joined, a no response is not, and gets an arrow away from the middle.
    @Test func noResponseBreaksTheLineAndPointsDownAndOut() throws {
        let scale = AudiogramScale(left: 0, top: 0, pixelsPerOctave: 40)
        let points = [
            AudiogramPoint(frequencyHz: 500, dBHL: 20), AudiogramPoint(frequencyHz: 1000, dBHL: 30),
            AudiogramPoint(frequencyHz: 2000, dBHL: 90, noResponse: true), AudiogramPoint(frequencyHz: 4000, dBHL: 60),
            AudiogramPoint(frequencyHz: 8000, dBHL: 70),
        ]
        let right = AudiogramSVG.ear(.right, points, on: scale)
        // 500 -> 1000 joined; a new segment 4000 -> 8000; nothing to or from 2000 Hz.
        #expect(right.contains("d=\"M80 60 L120 80 M200 140 L240 160\""), "\(right)")
        #expect(right.components("data-symbol=\"O\"") == 5 && right.components("<circle") == 5)
        #expect(right.components("data-no-response=\"true\"") == 1)
        // The arrow starts at the lower left of the O at (160, 200) and ends further down-left.
        let arrow = try #require(right.slice(after: "data-hz=\"2000\"", before: "</g>"))
        #expect(arrow.contains("M155.9 204.1 L144.9 215.1"), "\(arrow)")
        let left = AudiogramSVG.ear(.left, points, on: scale)
        #expect(left.components("data-symbol=\"X\"") == 5 && !left.contains("<circle"))
        #expect(try #require(left.slice(after: "data-hz=\"2000\"", before: "</g>")).contains("M164.1 204.1 L175.1 215.1"))
    }

    /// Masked thresholds: the right ear's red triangle, the left ear's blue square (ASHA 1990),
    /// named in the legend and read out as masked; unmasked ones keep O and X.
    @Test func maskedThresholdsGetTheMaskedSymbols() throws {
        let right = [AudiogramPoint(frequencyHz: 1000, dBHL: 70, masked: true), AudiogramPoint(frequencyHz: 2000, dBHL: 40)]
        let left = [
            AudiogramPoint(frequencyHz: 1000, dBHL: 10), AudiogramPoint(frequencyHz: 2000, dBHL: 90, noResponse: true, masked: true),
        ]
        let svg = AudiogramSVG.chart(right: right, left: left)
        let rightMasked = try #require(svg.slice(after: "audiogram-right-mark\" data-symbol=\"△\" data-hz=\"1000\"", before: "</g>"))
        #expect(rightMasked.contains("Z\" fill=\"white\" stroke=\"\(Ear.right.plotColor)\""), "\(rightMasked)")
        let leftMasked = try #require(svg.slice(after: "audiogram-left-mark\" data-symbol=\"□\" data-hz=\"2000\"", before: "</g>"))
        #expect(leftMasked.contains("<rect") && leftMasked.contains(Ear.left.plotColor), "\(leftMasked)")
        #expect(svg.contains("data-symbol=\"O\" data-hz=\"2000\"") && svg.contains("data-symbol=\"X\" data-hz=\"1000\""))
        #expect(svg.contains(">masked</text>") && svg.contains("1000 Hz 70 dB HL masked"))
        #expect(!AudiogramSVG.chart(right: [right[1]], left: [left[0]]).contains(">masked</text>"))
        if let directory = ProcessInfo.processInfo.environment["RIBBIT_PLOT_SVG"] {
            try Data(svg.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent("masked-audiogram.svg"))
        }
    }

    @Test func pointsComeFromThePrescription() throws {
        let rx = try Prescription.parse(
            Array("RIBBIT-RX 1\nname: a\nenv: quiet\nright: 500=20 1000=30 2000=40 4000=50 8000=90nr\n".utf8))
        #expect(
            AudiogramPoint.of(rx, ear: .right).map { "\($0.frequencyHz)=\($0.dBHL)\($0.noResponse ? "nr" : "")" } == [
                "500=20", "1000=30", "2000=40", "4000=50", "8000=90nr",
            ])
        #expect(AudiogramPoint.of(rx, ear: .left).isEmpty)
    }

    @Test func longTextIsShortenedToFit() {
        let name = String(repeating: "Wide Name ", count: 30)
        let shortened = fitted(name, width: 300, fontSize: 12)
        #expect(shortened.hasSuffix("…") && estimatedTextWidth(shortened, fontSize: 12) <= 300)
        #expect(fitted("short", width: 300, fontSize: 12) == "short")
        #expect(xmlEscaped("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;")
    }
}

extension String {
    func components(_ part: String) -> Int { split(separator: part, omittingEmptySubsequences: false).count - 1 }

    func slice(after start: String, before end: String) -> Substring? {
        guard let a = firstRange(of: start)?.upperBound, let b = self[a...].firstRange(of: end)?.lowerBound else { return nil }
        return self[a..<b]
    }
}
