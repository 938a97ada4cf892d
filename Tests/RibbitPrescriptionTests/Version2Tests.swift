import Foundation
import Testing

@testable import RibbitPrescription

let minimal2 = """
    RIBBIT-RX 2
    name: Test
    env: quiet
    rule: camfit
    left: 500=20 1000=30 2000=40 4000=50

    """

/// `minimal2` with one line added (before the final LF).
func variant2(adding line: String) -> String { minimal2 + line + "\n" }

@Suite struct Version2ParserTests {
    @Test func version1FilesStayVersion1ByteForByte() throws {
        let files = try FileManager.default.contentsOfDirectory(at: samplesFolder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "rx" }
        for file in files {
            let bytes = try Data(contentsOf: file)
            let rx = try Prescription.parse(Array(bytes))
            guard bytes.starts(with: Array("RIBBIT-RX 1\n".utf8)) else { continue }
            #expect(rx.version == 1)
            #expect(rx.text.hasPrefix("RIBBIT-RX 1\n"), "\(file.lastPathComponent)")
        }
        // The canonical text of a v1 prescription is what v1 always wrote.
        #expect(
            try parse(minimal).text
                == "RIBBIT-RX 1\nname: Test\nenv: quiet\nrule: nal-r\nleft: 500=20 1000=30 2000=40 4000=50\nlowpass: 8000\nmax-output: -1\n"
        )
    }

    @Test func everyVersion2KeyParsesAndRoundTrips() throws {
        let text = """
            RIBBIT-RX 2
            name: Compressive
            env: quiet
            rule: explicit
            left: 500=20 1000=30 2000=40 4000=50
            ucl-left: 500=100 1000=105 2000=110 4000=110
            ucl-transducer: er3a
            g50-left: 500=20 1000=25.5 2000=30 4000=35
            g80-left: 500=10 1000=15 2000=20 4000=25
            attack: 10
            release: 150
            expansion: 40
            limit: 105
            volume-range: 6
            lowpass: 8000
            max-output: -1

            """
        let rx = try parse(text)
        #expect(rx.volumeRangeDB == 6 && rx.volumeRange == -6...6)
        #expect(rx.version == 2)
        #expect(rx.gains50[.left] == [500: 20, 1000: 25.5, 2000: 30, 4000: 35])
        #expect(rx.gains80[.left]?[4000] == 25)
        #expect(rx.ucl[.left] == [500: 100, 1000: 105, 2000: 110, 4000: 110])
        #expect(rx.uclTransducer == .er3a && rx.uclReferenceDBSPL(atHz: 1000) == 0)
        let unsaid = try parse(variant2(adding: "ucl-left: 500=100 1000=105 2000=110 4000=110"))
        #expect(unsaid.uclTransducer == nil && unsaid.uclReferenceDBSPL(atHz: 1000) == Camfit.retsplDB(atHz: 1000))
        #expect(rx.attackMs == 10 && rx.releaseMs == 150 && rx.expansion == .knee(40) && rx.limitDBSPL == 105)
        #expect(rx.text == text)
        #expect(try parse(rx.text) == rx)
        // g65 is the mean of g50 and g80 (a straight line in level).
        #expect(rx.targetGains(for: .left)?[1000] == 20.25)
        #expect(try parse(variant2(adding: "expansion: on")).expansion == .on)
        #expect(try parse(variant2(adding: "expansion: off")).expansion == .off)
        let camfit = try parse(minimal2)
        #expect(camfit.rule == .camfit && camfit.version == 2)
        #expect(camfit.volumeRange == -10...10, "the default range")
        #expect(try parse(camfit.text) == camfit)
    }

    static let failures: [(String, PrescriptionError)] = [
        (variant(adding: "attack: 5"), PrescriptionError(line: 5, "'attack' needs format version 2; start the file with 'RIBBIT-RX 2'")),
        (
            variant(adding: "rule: camfit"),
            PrescriptionError(line: 5, "rule 'camfit' needs format version 2; start the file with 'RIBBIT-RX 2'")
        ),
        (
            variant2(adding: "colour: blue"),
            PrescriptionError(
                line: 6,
                "unknown key 'colour' (known: name, env, audiologist, patient, date, note, rule, left, right, gain-left, gain-right, lowpass, max-output, ucl-left, ucl-right, ucl-transducer, g50-left, g80-left, g50-right, g80-right, attack, release, expansion, limit, volume-range, lowering-left, lowering-right; prefix your own keys with 'x-')"
            )
        ),
        (
            variant2(adding: "rule: magic").replacingOccurrences(of: "rule: camfit\n", with: ""),
            PrescriptionError(line: 5, "rule 'magic' is unknown; use one of nal-r, half-gain, pogo2, explicit, camfit")
        ),
        (variant2(adding: "attack: 0.5"), PrescriptionError(line: 6, "attack '0.5' must be a time in ms from 1 to 200")),
        (variant2(adding: "release: fast"), PrescriptionError(line: 6, "release 'fast' must be a time in ms from 10 to 5000")),
        (variant2(adding: "limit: 140"), PrescriptionError(line: 6, "limit '140' must be an output level in dB SPL from 80 to 132")),
        (
            variant2(adding: "expansion: 70"),
            PrescriptionError(line: 6, "expansion '70' must be 'off', 'on' or a knee in dB SPL from 20 to 60")
        ),
        (
            variant2(adding: "ucl-left: 500=100 1000=105 2000=150 4000=110"),
            PrescriptionError(line: 6, "'ucl-left': 150 dB HL at 2000 Hz is outside 50 to 140")
        ),
        (
            variant2(adding: "ucl-left: 500=100 1000=105 2000=110 4000=50"),
            PrescriptionError(line: 6, "'ucl-left': 50 dB HL at 4000 Hz is not above the threshold of 50 dB HL; check the audiogram")
        ),
        (
            variant2(adding: "ucl-transducer: airpods"),
            PrescriptionError(
                line: 6, "ucl-transducer 'airpods' must be the headphones the UCLs were measured with: tdh39, hda200, er3a, consumer")
        ),
        (
            variant2(adding: "ucl-transducer: tdh39"),
            PrescriptionError(line: 6, "ucl-transducer names the headphones of UCLs, and there is no ucl-left or ucl-right")
        ),
        (
            variant2(adding: "g50-left: 500=20 1000=25 2000=30 4000=35"),
            PrescriptionError(line: 6, "'g50-left' is only allowed with 'rule: explicit' (this one is 'camfit')")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\ng50-left: 500=20 1000=25 2000=30 4000=35\n",
            PrescriptionError(line: 5, "'g50-left' and 'g80-left' go together; give both")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\ng50-left: 500=20 1000=25 2000=30 4000=35\ng80-left: 500=20 1000=30 2000=30 4000=35\n",
            PrescriptionError(
                line: 6, "'g80-left': 30 dB at 1000 Hz is more than the 25 dB for 50 dB SPL; louder sound never gets more gain")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\ng50-left: 500=20 1000=25 2000=30 4000=35\ng80-left: 500=20 1000=20 2000=30 4000=35 8000=10\n",
            PrescriptionError(line: 6, "'g80-left' must give the same frequencies as 'g50-left'")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\ngain-left: 500=1 1000=1 2000=1 4000=1\ng50-left: 500=20 1000=25 2000=30 4000=35\ng80-left: 500=20 1000=20 2000=30 4000=35\n",
            PrescriptionError(line: 5, "'gain-left' and 'g50-left'/'g80-left' both give the left ear's gains; keep one")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\ng50-right: 500=20 1000=55 2000=30 4000=35\ng80-right: 500=20 1000=20 2000=30 4000=35\n",
            PrescriptionError(
                line: 5,
                "'g50-right': +55 dB at 1000 Hz is above ribbit's maximum gain of +50 dB (a typo?); a rule's gains above it play at it")
        ),
        (
            "RIBBIT-RX 2\nname: a\nenv: quiet\nrule: explicit\n",
            PrescriptionError(line: 4, "'rule: explicit' needs 'gain-left' and/or 'gain-right', or 'g50-' and 'g80-' gains for an ear")
        ),
        (
            variant2(adding: "volume-range: 25"),
            PrescriptionError(
                line: 6, "volume-range '25' must be how far the wearer may turn the volume, in dB, from 0 to 20")
        ),
        (
            variant(adding: "volume-range: 6"),
            PrescriptionError(line: 5, "'volume-range' needs format version 2; start the file with 'RIBBIT-RX 2'")
        ),
    ]

    @Test(arguments: failures.indices)
    func version2ErrorsNameTheLineAndTheRule(index: Int) {
        let (text, expected) = Self.failures[index]
        #expect(throws: expected) { try parse(text) }
    }
}

/// CAMFIT computed here a second way: band levels by integrating the LTASS third-octave
/// intensity densities 1 Hz at a time, the ISO 389-7 values and intercepts read off at the
/// band centres (all of them table frequencies).
@Suite struct CamfitTests {
    static let centres: [Double] = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    static let retspl: [Double] = [11.4, 4.4, 2.4, 2.4, 2.4, -1.3, -5.8, -5.4, 4.3, 12.6]
    static let intercept: [Double] = [-10, -8, -6, 0, -1, 1, -1, 0, 1, 1]

    /// LTASS band level at 65 dB SPL by numeric integration (1 Hz steps) over the band.
    static func speech65(band: Int) -> Double {
        let c = centres
        let low = band == 0 ? c[0] * c[0] / (c[0] * c[1]).squareRoot() : (c[band - 1] * c[band]).squareRoot()
        let high = band == c.count - 1 ? c[band] * c[band] / (c[band - 1] * c[band]).squareRoot() : (c[band] * c[band + 1]).squareRoot()
        let thirds = Camfit.ltass70.map(\.hz)
        var sum = 0.0
        var f = low + 0.5
        while f < high {
            // The third-octave band f falls in: between the geometric means of its neighbours.
            let i = thirds.indices.last { $0 == 0 || f >= (thirds[$0 - 1] * thirds[$0]).squareRoot() }!
            let lo = i == 0 ? 0 : (thirds[i - 1] * thirds[i]).squareRoot()
            let hi = i == thirds.count - 1 ? 16000 * pow(2, 1.0 / 6) : (thirds[i] * thirds[i + 1]).squareRoot()
            sum += pow(10, Camfit.ltass70[i].db / 10) / (hi - lo)
            f += 1
        }
        return 10 * log10(sum) - 5
    }

    static func htl(_ t: [Int: Int], _ f: Double) -> Double {
        if let h = t[Int(f)] { return Double(h) }
        let below = t.keys.filter { Double($0) < f }.max(), above = t.keys.filter { Double($0) > f }.min()
        guard let b = below else { return Double(t[above!]!) }
        guard let a = above else { return Double(t[b]!) }
        let x = log2(f / Double(b)) / log2(Double(a) / Double(b))
        return Double(t[b]!) + x * Double(t[a]! - t[b]!)
    }

    @Test func bandGainsMatchTheFormulaForEverySampleAudiogram() throws {
        let files = try FileManager.default.contentsOfDirectory(at: samplesFolder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "rx" }
        var checked = 0
        for file in files {
            let rx = try Prescription.parse(Array(try Data(contentsOf: file)))
            for (ear, thresholds) in rx.thresholds {
                for level in [50.0, 65, 80] {
                    let gains = Camfit.gains(thresholds: thresholds, speechDBSPL: level)
                    for (i, f) in Self.centres.enumerated() {
                        let h = Self.htl(thresholds, f)
                        let lMin = Self.speech65(band: i) - 38
                        let gMin = h + Self.retspl[i] - lMin
                        let gMid = max(0, 0.48 * h + Self.intercept[i])
                        let cr = max(1, 38 / max(lMin + 38 + gMid - lMin - gMin, 13))
                        let bandLevel = Self.speech65(band: i) + level - 65
                        let expected = max(0, (bandLevel - lMin) / cr + lMin + gMin - bandLevel)
                        let got = try #require(gains[Int(f)])
                        #expect(abs(got - expected) <= 1, "\(file.lastPathComponent) \(ear) \(f) Hz at \(level): \(got) vs \(expected)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked >= 12 * 30)
    }

    @Test func speechBandLevelsAddUpToTheOverallLevel() {
        // The bands cover 177 Hz to 9.2 kHz: nearly all of the LTASS energy.
        let levels = Camfit.speechBandLevelsDBSPL(centresHz: Self.centres, overallDBSPL: 65)
        let total = 10 * log10(levels.map { pow(10, $0 / 10) }.reduce(0, +))
        #expect(total > 62 && total <= 65, "\(total)")
        for i in levels.indices { #expect(abs(levels[i] - Self.speech65(band: i)) < 0.05, "\(Self.centres[i])") }
    }

    @Test func gainsFallWithLevelAndNeverGoNegative() {
        let t = [250: 30, 500: 40, 1000: 50, 2000: 60, 4000: 70, 8000: 75]
        let g50 = Camfit.gains(thresholds: t, speechDBSPL: 50), g80 = Camfit.gains(thresholds: t, speechDBSPL: 80)
        for f in Self.centres.map({ Int($0) }) { #expect(g50[f]! >= g80[f]! && g80[f]! >= 0) }
        #expect(g50[4000]! > g80[4000]! + 5)  // compression where the loss is moderate to severe
        #expect(Camfit.gains(thresholds: [500: 0, 1000: 0, 2000: 0, 4000: 0], speechDBSPL: 65).values.allSatisfy { $0 < 3 })
    }
}
