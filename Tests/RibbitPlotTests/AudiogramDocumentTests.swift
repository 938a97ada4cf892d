import RibbitPlot
import RibbitPrescription
import Testing

/// The standalone audiogram the web app serves: the square form, both ears with their symbols
/// and colours, a legend, and a text alternative that reads every threshold out.
@Suite struct AudiogramDocumentTests {
    let right = [
        AudiogramPoint(frequencyHz: 250, dBHL: 20), AudiogramPoint(frequencyHz: 1000, dBHL: 40),
        AudiogramPoint(frequencyHz: 8000, dBHL: 90, noResponse: true),
    ]
    let left = [AudiogramPoint(frequencyHz: 500, dBHL: 35), AudiogramPoint(frequencyHz: 4000, dBHL: 60)]

    @Test func theChartIsOneAccessibleSVGWithALegend() throws {
        let svg = AudiogramSVG.chart(right: right, left: left, title: "Audiogram: Mild <loss>")
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("viewBox=\"0 0 440 476\"") && !svg.contains(" width=\"440\" height=\"476\" viewBox"))
        #expect(svg.contains("role=\"img\" aria-labelledby=\"audiogram-title audiogram-desc\""))
        #expect(svg.contains("<title id=\"audiogram-title\">Audiogram: Mild &lt;loss&gt;</title>"), "escaped")
        let desc = try #require(svg.slice(after: "<desc id=\"audiogram-desc\">", before: "</desc>"))
        #expect(desc.contains("Right ear (O): 250 Hz 20 dB HL, 1000 Hz 40 dB HL, 8000 Hz 90 dB HL no response"), "\(desc)")
        #expect(desc.contains("Left ear (X): 500 Hz 35 dB HL, 4000 Hz 60 dB HL"))
        let legend = try #require(svg.slice(after: "<g class=\"audiogram-legend\">", before: "</g>"))
        #expect(legend.contains(">Right ear (O)</text>") && legend.contains(">Left ear (X)</text>"))
        #expect(legend.contains("<circle") && legend.contains("stroke=\"#d00000\"") && legend.contains("stroke=\"#0050d0\""))
        // The form's axis titles with units, and the marks of both ears.
        #expect(svg.contains(">Frequency (Hz)</text>") && svg.contains(">Hearing level (dB HL)</text>"))
        #expect(svg.components("class=\"audiogram-right-mark\"") == 3 && svg.components("class=\"audiogram-left-mark\"") == 2)
        #expect(svg.contains("id=\"audiogram-right\"") && svg.contains("id=\"audiogram-left\""))
    }

    /// 125 Hz to 8 kHz left to right, -10 to 120 dB HL top to bottom, one octave as wide as 20 dB.
    @Test func theFormIsSquareAndFillsTheChart() throws {
        let svg = AudiogramSVG.chart(right: right, left: left)
        func x(_ hz: Int) throws -> Double {
            let line = try #require(svg.slice(after: "class=\"audiogram-grid-hz\" data-hz=\"\(hz)\" x1=\"", before: "\""))
            return try #require(Double(line))
        }
        func y(_ db: Int) throws -> Double {
            let line = try #require(svg.slice(after: "data-db-hl=\"\(db)\" x1=", before: "/>"))
            let y1 = try #require(String(line).slice(after: "y1=\"", before: "\""))
            return try #require(Double(y1))
        }
        #expect(try x(1000) - x(500) == y(20) - y(0), "an octave is as wide as 20 dB is tall")
        #expect(try y(120) > y(-10) && x(8000) > x(125))
        let (width, height) = AudiogramSVG.chartSize
        #expect(try x(125) >= 50 && x(8000) <= width - 10 && y(-10) >= 30 && y(120) <= height - 40)
    }

    @Test func anEarNotTestedIsSaidAndNotDrawn() throws {
        let svg = AudiogramSVG.chart(right: right, left: [])
        #expect(svg.contains("Left ear (X): not tested.") && !svg.contains("id=\"audiogram-left\""))
        #expect(!svg.contains("class=\"audiogram-left-mark\""))
    }
}
