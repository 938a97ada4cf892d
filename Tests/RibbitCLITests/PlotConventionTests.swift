import Foundation
import RibbitAudioFile
import RibbitImage
import RibbitSignals
import RibbitTestSupport
import Testing

/// The dump's SVG follows clinical plot conventions, checked on the file `process --dump` writes:
/// the right ear on the left in red with O, the left ear on the right in blue with X, the square
/// audiogram form with round ticks and "dB HL", no-response arrows, the header, and nothing
/// drawn outside the canvas when rsvg-convert renders it.
@Suite struct PlotConventionTests {
    /// Thresholds of the test prescription, by ear; "nr" marks a no response at that level.
    static let right = "125=5 250=10 500=20 1000=30 2000=50 3000=60 4000=75nr 6000=90nr 8000=100"
    static let left = "250=10 500=15 1000=20 2000=35 4000=50 8000=60"
    static let longName = "Steeply sloping loss, no response at 4 and 6 kHz, with a name far too long for one line of any header"
    static let patient = "Maximilian Alexander Wolfgang Example-Musterpersonname, 71, record WWWWWWWWWWWWWWWWWWWWWWWWWW"

    /// A dump of 0.5 s of noise through a prescription with these fields: stereo, or mono for `ear`.
    static func dump(_ text: String, ear: String? = nil, in folder: URL) throws -> String {
        let channels = ear == nil ? 2 : 1
        let input = folder.appendingPathComponent("noise-\(channels).wav").path
        if !FileManager.default.fileExists(atPath: input) {
            let writer = try AudioFileWriter(path: input, format: .wav(sampleRate: 48000, channelCount: channels))
            let noise = Signals.whiteNoise(count: 24000, rms: 0.02, seed: 3)
            try writer.write(channels: Array(repeating: noise, count: channels))
            try writer.close()
        }
        let rx = folder.appendingPathComponent("test.rx").path
        try text.write(toFile: rx, atomically: true, encoding: .utf8)
        let dump = folder.appendingPathComponent("dump-\(UUID().uuidString)").path
        let result = try Ribbitd.run(
            ["process", input, folder.appendingPathComponent("out.wav").path, "--rx", rx, "--dump", dump]
                + (ear.map { ["--ear", $0] } ?? []))
        guard result.status == 0 else { throw TestSetupError("process --dump failed: \(result.stderr)") }
        return dump + "/dump.svg"
    }

    static let prescription = """
        RIBBIT-RX 1
        name: \(longName)
        env: quiet
        audiologist: Dr. A. Example, Aud.
        patient: \(patient)
        date: 2026-11-02
        rule: half-gain
        left: \(left)
        right: \(right)

        """

    @Test func theRightEarIsOnTheLeftInRedWithCirclesAndTheLeftOnTheRightInBlueWithCrosses() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = try SVGContents(try Self.dump(Self.prescription, in: folder))
        func minimumX(_ id: String) throws -> Double {
            let points = try #require(svg.element(id: id)?.attributes["points"], "\(id)")
            return try #require(points.split(separator: " ").compactMap { Double($0.split(separator: ",")[0]) }.min())
        }
        for series in ["input-spectrum", "output-spectrum", "target-gain", "applied-gain", "measured-gain"] {
            let (right, left) = (try minimumX("right-\(series)"), try minimumX("left-\(series)"))
            #expect(right + 300 < left, "\(series): the right ear's is on the left")
        }
        let titles = svg.elements.filter { $0.attributes["class"] == "ear-title" }
        #expect(titles.map(\.text) == ["Right ear", "Left ear"])
        #expect(titles.map { $0.attributes["fill"] } == ["#d00000", "#0050d0"])
        let (rightX, leftX) = (try #require(titles.first?.number("x")), try #require(titles.last?.number("x")))
        #expect(rightX < leftX)
        #expect(svg.element(id: "right-output-spectrum")?.attributes["stroke"] == "#d00000")
        #expect(svg.element(id: "left-output-spectrum")?.attributes["stroke"] == "#0050d0")
        #expect(svg.element(id: "audiogram-right")?.attributes["stroke"] == "#d00000")
        #expect(svg.element(id: "audiogram-left")?.attributes["stroke"] == "#0050d0")
        #expect(svg.marks == ["O": 9, "X": 6])
        // O is a circle, X two strokes, each in the ear's colour.
        for mark in svg.elements where mark.attributes["class"] == "audiogram-right-mark" {
            let circle = try #require(svg.children(of: mark).first)
            #expect(circle.name == "circle" && circle.attributes["stroke"] == "#d00000")
        }
        for mark in svg.elements where mark.attributes["class"] == "audiogram-left-mark" {
            let cross = try #require(svg.children(of: mark).first)
            #expect(
                cross.name == "path" && cross.attributes["stroke"] == "#0050d0" && cross.attributes["d"]?.filter { $0 == "M" }.count == 2)
        }
    }

    /// Symbols where the form's own grid says the threshold is; the grid square (an octave as
    /// wide as 20 dB is tall), -10 dB HL at the top, 120 at the bottom, round ticks, "dB HL".
    @Test func theAudiogramIsOnASquareFormWithItsSymbolsAtTheThresholds() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = try SVGContents(try Self.dump(Self.prescription, in: folder))
        for (ear, thresholds) in [("right", Self.right), ("left", Self.left)] {
            let chart = "audiogram-\(ear)-chart"
            var xOf = [Int: Double](), yOf = [Int: Double]()
            for line in svg.elements(inside: chart, where: { $0.attributes["class"] == "audiogram-grid-hz" }) {
                xOf[Int(try #require(line.attributes["data-hz"]))!] = line.number("x1")
            }
            for line in svg.elements(inside: chart, where: { $0.attributes["class"] == "audiogram-grid-db" }) {
                yOf[Int(try #require(line.attributes["data-db-hl"]))!] = line.number("y1")
            }
            #expect(xOf.keys.sorted() == [125, 250, 500, 1000, 2000, 4000, 8000])
            #expect(yOf.keys.sorted() == Array(stride(from: -10, through: 120, by: 10)))
            let minor = svg.elements(inside: chart, where: { $0.attributes["class"] == "audiogram-grid-hz-minor" })
            #expect(minor.compactMap { $0.attributes["data-hz"] }.sorted() == ["1500", "3000", "6000", "750"])
            let x125 = try #require(xOf[125]), x8000 = try #require(xOf[8000])
            let yTop = try #require(yOf[-10]), yBottom = try #require(yOf[120])
            #expect(yTop < yBottom, "dB HL grows downward")
            let octave = (x8000 - x125) / 6, twentyDB = (yBottom - yTop) / 6.5
            #expect(abs(octave - twentyDB) < 0.1, "square grid: \(octave) px per octave, \(twentyDB) px per 20 dB")
            for (hz, x) in xOf { #expect(abs(x - (x125 + octave * log2(Double(hz) / 125))) < 0.15, "\(hz) Hz on a log axis") }
            for (db, y) in yOf { #expect(abs(y - (yTop + twentyDB * Double(db + 10) / 20)) < 0.15, "\(db) dB HL") }
            // Each threshold's symbol where the grid puts it.
            let marks = svg.elements(inside: chart, where: { $0.attributes["class"] == "audiogram-\(ear)-mark" })
            #expect(marks.count == thresholds.split(separator: " ").count)
            for pair in thresholds.split(separator: " ") {
                let parts = pair.split(separator: "=")
                let (hz, level) = (Int(parts[0])!, String(parts[1]))
                let db = Int(level.replacingOccurrences(of: "nr", with: ""))!
                let mark = try #require(marks.first { $0.attributes["data-hz"] == String(hz) }, "\(ear) \(hz) Hz")
                #expect(mark.attributes["data-db-hl"] == String(db) && mark.attributes["data-no-response"] == String(level.hasSuffix("nr")))
                let (x, y) = (x125 + octave * log2(Double(hz) / 125), yTop + twentyDB * Double(db + 10) / 20)
                let shape = try #require(svg.children(of: mark).first)
                if shape.name == "circle" {
                    let (cx, cy) = (try #require(shape.number("cx")), try #require(shape.number("cy")))
                    #expect(abs(cx - x) < 0.15 && abs(cy - y) < 0.15, "\(pair)")
                } else {
                    // The cross's strokes cross at the threshold: the midpoint of the first one.
                    let numbers = try #require(shape.attributes["d"]).split(whereSeparator: { " ML".contains($0) }).compactMap {
                        Double($0)
                    }
                    #expect(abs((numbers[0] + numbers[2]) / 2 - x) < 0.15 && abs((numbers[1] + numbers[3]) / 2 - y) < 0.15, "\(pair)")
                }
                // A no response has its arrow, pointing down and away from the middle.
                let arrows = svg.children(of: mark).dropFirst()
                #expect(arrows.count == (level.hasSuffix("nr") ? 1 : 0), "\(pair)")
                if let arrow = arrows.first?.attributes["d"] {
                    let n = arrow.split(whereSeparator: { " ML".contains($0) }).compactMap { Double($0) }
                    #expect(n[3] > n[1] && (ear == "right" ? n[2] < n[0] : n[2] > n[0]), "\(arrow)")
                }
                // ... and the line does not join it.
                let line = try #require(svg.element(id: "audiogram-\(ear)")?.attributes["d"])
                let vertices = line.split(whereSeparator: { "ML".contains($0) }).map { $0.split(separator: " ").compactMap { Double($0) } }
                let joined = vertices.contains { $0.count == 2 && abs($0[0] - x) < 0.3 && abs($0[1] - y) < 0.3 }
                #expect(joined != level.hasSuffix("nr"), "\(pair) in \(line)")
            }
            let texts = svg.elements(inside: chart, where: { $0.name == "text" }).map(\.text)
            #expect(texts.contains("Hearing level (dB HL)") && texts.contains("Frequency (Hz)"))
        }
        // Every number on every axis is round: dB ticks multiples of 10, frequencies octaves.
        for text in svg.elements.filter({ $0.name == "text" }).map(\.text) {
            if let number = Double(text) { #expect(number.truncatingRemainder(dividingBy: 10) == 0 || number == 125, "tick \(text)") }
            if text.hasSuffix("k"), let k = Double(text.dropLast()) { #expect([1.0, 2, 4, 8].contains(k), "tick \(text)") }
        }
    }

    @Test func theHeaderNamesThePrescriptionPatientDateAndAudiologist() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = try SVGContents(try Self.dump(Self.prescription, in: folder))
        let header = svg.elements(inside: "header", where: { $0.name == "text" }).map(\.text)
        // Too long for the width: shortened with an ellipsis, the date kept whole.
        #expect(header[0].hasPrefix("ribbit dump: Steeply sloping loss") && header[0].hasSuffix("…"), "\(header)")
        #expect(header[1].hasPrefix("Patient: Maximilian Alexander") && header[1].hasSuffix("…  ·  Date: 2026-11-02"), "\(header)")
        #expect(header[2] == "Audiologist: Dr. A. Example, Aud.", "\(header)")
        // Short ones whole.
        let short = try SVGContents(try Self.dump(Self.prescription.replacingOccurrences(of: Self.longName, with: "Short"), in: folder))
        let title = try #require(short.elements(inside: "header", where: { $0.name == "text" }).first?.text)
        #expect(title == "ribbit dump: Short (quiet, half-gain)")
    }

    /// Rendered by rsvg-convert onto a canvas 40 px bigger on every side: the margin stays
    /// white, so no text or line runs past the picture's edge. Long names, one ear, and no
    /// audiogram (explicit gains). A label moved past the edge must fail the same check.
    @Test func nothingIsDrawnOutsideTheCanvas() throws {
        let folder = try TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let explicit = "RIBBIT-RX 1\nname: Flat\nenv: quiet\nrule: explicit\ngain-right: 500=0 1000=0 2000=0 4000=0\n"
        for (text, ear) in [(Self.prescription, nil), (Self.prescription, "left"), (explicit, nil)] {
            let path = try Self.dump(text, ear: ear, in: folder)
            let drawn = try Self.marginPixels(svg: try String(contentsOfFile: path, encoding: .utf8), folder: folder)
            #expect(drawn == 0, "\(drawn) pixels drawn outside the canvas (ear \(ear ?? "both"))")
        }
        let clipped = try String(contentsOfFile: try Self.dump(explicit, in: folder), encoding: .utf8)
            .replacingOccurrences(of: "</svg>", with: "<text x=\"-12\" y=\"300\">cut</text></svg>")
        #expect(try Self.marginPixels(svg: clipped, folder: folder) > 0, "the check sees a label past the edge")
    }

    /// Non-white pixels outside the canvas when the SVG is rendered with a 40 px margin.
    static func marginPixels(svg: String, folder: URL) throws -> Int {
        let margin = 40
        let viewBox = try #require(svg.firstMatch(of: /viewBox="0 0 (\d+) (\d+)"/))
        let (width, height) = (Int(viewBox.1)!, Int(viewBox.2)!)
        let widened =
            svg
            .replacingOccurrences(
                of: "width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\"",
                with:
                    "width=\"\(width + 2 * margin)\" height=\"\(height + 2 * margin)\" viewBox=\"\(-margin) \(-margin) \(width + 2 * margin) \(height + 2 * margin)\""
            )
        #expect(widened != svg)
        let source = folder.appendingPathComponent("widened.svg"), png = folder.appendingPathComponent("widened.png")
        try widened.write(to: source, atomically: true, encoding: .utf8)
        let rsvg = try #require(Built.tool("rsvg-convert"), "rsvg-convert is missing: apt-get install librsvg2-bin (make deps does)")
        let result = try Built.run(rsvg, ["--background-color", "white", "-o", png.path, source.path])
        guard result.status == 0 else { throw TestSetupError("rsvg-convert failed: \(result.stderr)") }
        let image = try ImageFile.decode(try Data(contentsOf: png))
        #expect(image.width == width + 2 * margin && image.height == height + 2 * margin)
        var drawn = 0
        for y in 0..<image.height {
            for x in 0..<image.width where x < margin || x >= margin + width || y < margin || y >= margin + height {
                if image[x, y] < 255 { drawn += 1 }
            }
        }
        return drawn
    }
}
