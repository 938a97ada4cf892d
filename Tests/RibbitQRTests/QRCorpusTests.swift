import Foundation
import RibbitImage
import RibbitPrescription
import RibbitQR
import RibbitTestSupport
import Testing

/// Codes as they arrive in practice: every sample prescription made into a QR code, then
/// photographed-like with ImageMagick, read back with the decoder `load` uses.
@Suite struct QRCorpusTests {
    static let samples = [
        "normal-hearing.rx", "mild-presbycusis.rx", "moderate-flat.rx", "moderate-flat-music.rx", "ski-slope.rx",
        "asymmetric.rx", "flat.rx",
    ]

    /// The distortions (ImageMagick arguments, output extension).
    static let distortions: [(name: String, arguments: [String], ext: String)] = [
        ("clean", [], "png"),
        ("rotated 17 deg", ["-background", "white", "-rotate", "17"], "png"),
        ("rotated 45 deg", ["-background", "white", "-rotate", "45"], "png"),
        ("rotated 128 deg", ["-background", "white", "-rotate", "128"], "png"),
        (
            "perspective tilt",
            [
                "-virtual-pixel", "white", "-distort", "Perspective",
                "0,0 40,30  %w,0 %[fx:w-20],0  0,%h 0,%h  %w,%h %[fx:w-50],%[fx:h-40]",
            ], "png"
        ),
        ("gaussian blur", ["-blur", "0x1.5"], "png"),
        ("noise", ["-attenuate", "0.7", "+noise", "Gaussian"], "png"),
        ("low contrast", ["+level", "35%,65%"], "png"),
        ("JPEG quality 50", ["-quality", "50"], "jpg"),
        ("10 % of a large photo", ["-gravity", "center", "-background", "gray70", "-extent", "316%x316%"], "jpg"),
        ("inverted", ["-negate"], "png"),
        (
            "tilted, blurred, noisy JPEG",
            [
                "-background", "white", "-rotate", "9", "-blur", "0x1", "-attenuate", "0.4",
                "+noise", "Gaussian", "-quality", "60",
            ], "jpg"
        ),
    ]

    static func convert() throws -> URL {
        for name in ["convert-im6.q16", "convert"] { if let url = Built.tool(name) { return url } }
        throw TestSetupError("ImageMagick's convert is missing (apt-get install imagemagick)")
    }

    @Test func decodeRateOnThePhotoLikeCorpus() throws {
        let convert = try Self.convert()
        let directory = try TestPaths.temporaryDirectory()
        var decoded = 0, total = 0, rawOnly = 0
        var failures = [String]()
        for sample in Self.samples {
            let text = try Prescription.parse(Data(contentsOf: TestPaths.prescription(sample))).text
            let clean = directory.appendingPathComponent("\(sample).png")
            try ImageFile.writePNG(try QRCode(Data(text.utf8)).image(scale: 6), to: clean.path)
            for (index, distortion) in Self.distortions.enumerated() {
                let out = directory.appendingPathComponent("\(sample)-\(index).\(distortion.ext)")
                let arguments =
                    [clean.path]
                    + distortion.arguments.map {
                        $0.replacingOccurrences(of: "%w", with: "%[fx:w]").replacingOccurrences(of: "%h", with: "%[fx:h]")
                    } + [out.path]
                let result = try Built.run(convert, arguments)
                #expect(result.status == 0, "\(distortion.name): \(result.stderr)")
                total += 1
                let image = try ImageFile.decode(try Data(contentsOf: out))
                if QRDecoder.scan(image).contains(Data(text.utf8)) { rawOnly += 1 }
                if QRDecoder.payloads(in: image).contains(Data(text.utf8)) {
                    decoded += 1
                } else {
                    failures.append("\(sample) \(distortion.name)")
                }
            }
        }
        let rate = Double(decoded) / Double(total)
        print(
            "QR corpus: \(decoded) of \(total) decoded (\(Int((rate * 100).rounded())) %), one plain zbar pass alone \(rawOnly); missed: \(failures)"
        )
        // Every clean code must decode; the corpus as a whole at least 95 % (README gives the figure).
        #expect(!failures.contains { $0.hasSuffix(" clean") })
        #expect(rate >= 0.95, "decoded \(decoded) of \(total); missed: \(failures)")
    }

    /// Make -> read round-trips exactly, at every correction level and the smallest scale.
    @Test(arguments: QRCode.Correction.allCases)
    func makeAndReadRoundTrip(correction: QRCode.Correction) throws {
        for sample in Self.samples {
            let prescription = try Prescription.parse(Data(contentsOf: TestPaths.prescription(sample)))
            let payload = Data(prescription.text.utf8)
            let image = try QRCode(payload, correction: correction).image(scale: 2)
            #expect(QRDecoder.scan(image) == [payload])
            #expect(try Prescription.parse(QRDecoder.scan(image)[0]) == prescription)
        }
    }
}

/// Image files the fuzzer (make fuzz) found crashing the decoder, kept so they stay fixed: each
/// must decode or be refused with an ImageError, and never trap.
@Suite struct ImageFuzzFindingsTests {
    @Test func everyFindingIsDecodedOrRefused() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzFindings")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(!files.isEmpty)
        for file in files {
            if let image = try? ImageFile.decode(try Data(contentsOf: file)) { _ = QRDecoder.payloads(in: image) }
        }
    }
}

/// Prescriptions/*.png are `make codes` output: each must decode to its .rx source's prescription.
@Suite struct SampleCodesTests {
    /// Every sample, the ten IEC 60118-15 standard audiograms included.
    static let samples = ((try? FileManager.default.contentsOfDirectory(atPath: TestPaths.prescription("").path)) ?? [])
        .filter { $0.hasSuffix(".rx") }.sorted()

    @Test func everySampleHasItsCode() {
        #expect(Self.samples.count >= 17 && Self.samples.contains("iec-s3.rx"), "\(Self.samples)")
    }

    @Test(arguments: samples)
    func sampleCodeMatchesItsSource(sample: String) throws {
        let source = try Prescription.parse(Data(contentsOf: TestPaths.prescription(sample)))
        let png = TestPaths.prescription(sample.replacingOccurrences(of: ".rx", with: ".png"))
        let payloads = QRDecoder.payloads(in: try ImageFile.decode(Data(contentsOf: png)))
        #expect(payloads.count == 1)
        #expect(try Prescription.parse(payloads[0]) == source, "run `make codes` after changing \(sample)")
    }
}
