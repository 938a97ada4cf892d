import Foundation
import RibbitImage
import RibbitQR
import RibbitTestSupport
import Testing

/// Prescriptions from images through the CLI: good ones read, every bad one refused in one line.
@Suite struct QRInputTests {
    let directory: URL

    init() throws { directory = try TestPaths.temporaryDirectory() }

    func code(_ payload: String, name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try ImageFile.writePNG(try QRCode(Data(payload.utf8)).image(scale: 4), to: path)
        return path
    }

    func convert(_ arguments: [String]) throws {
        let tool = try #require(Built.tool("convert-im6.q16") ?? Built.tool("convert"))
        let result = try Built.run(tool, arguments)
        #expect(result.status == 0, "\(result.stderr)")
    }

    static let valid = """
        RIBBIT-RX 1
        name: From a photo
        env: noisy
        rule: nal-r
        left: 500=30 1000=35 2000=45 4000=55

        """

    @Test func makeThenShowRoundTripsAndAPhotoReads() throws {
        let png = directory.appendingPathComponent("rx.png").path
        let made = try Ribbitd.run(["rx", "make", rx("ski-slope.rx"), "-o", png, "--scale", "5"])
        #expect(made.status == 0, "\(made.stderr)")
        let fromText = try Ribbitd.run(["rx", "show", "--json", rx("ski-slope.rx")])
        let fromCode = try Ribbitd.run(["rx", "show", "--json", png])
        #expect(fromCode.status == 0)
        #expect(fromCode.stdout == fromText.stdout)
        // A photo of it: rotated, blurred, JPEG.
        let photo = directory.appendingPathComponent("photo.jpg").path
        try convert([png, "-background", "white", "-rotate", "21", "-blur", "0x1", "-quality", "55", photo])
        #expect(try Ribbitd.run(["rx", "show", "--json", photo]).stdout == fromText.stdout)
        // A code among others: a URL code beside it is ignored.
        let both = directory.appendingPathComponent("both.png").path
        try convert([png, try code("https://example.org/not-a-prescription", name: "url.png"), "+append", both])
        #expect(try Ribbitd.run(["rx", "show", "--json", both]).stdout == fromText.stdout)
    }

    @Test func rxMakeFromOptionsAndAsText() throws {
        let png = directory.appendingPathComponent("opts.png").path
        let made = try Ribbitd.run([
            "rx", "make", "--name", "From options", "--env", "music", "--rule", "half-gain", "--audiologist", "Dr. B",
            "--left", "250=20,500=25,1000=30,2000=40,4000=50", "--right", "500=20,1000=20,2000=30,4000=35", "-o", png,
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let shown = try Ribbitd.run(["rx", "show", png])
        #expect(shown.stdout.contains("From options"))
        #expect(shown.stdout.contains("Dr. B"))
        let text = try Ribbitd.run(["rx", "make", rx("flat.rx"), "--text"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("█") && text.stdout.contains("▀"))
        let bad = try Ribbitd.run([
            "rx", "make", "--name", "x", "--env", "q", "--rule", "nal-r", "--left", "500=20,1000=130,2000=30,4000=40", "--text",
        ])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("130"))
    }

    /// Every way an image can be wrong: one line naming the problem, exit 65.
    @Test func badImagesAreRefusedInOneLine() throws {
        let notImage = directory.appendingPathComponent("notes.png")
        try Data("just some text".utf8).write(to: notImage)
        let good = try code(Self.valid, name: "good.png")
        let goodData = try Data(contentsOf: URL(fileURLWithPath: good))
        let truncated = directory.appendingPathComponent("truncated.png")
        try goodData.prefix(goodData.count / 2).write(to: truncated)
        let corruptJPEG = directory.appendingPathComponent("corrupt.jpg")
        let jpeg = directory.appendingPathComponent("good.jpg").path
        try convert([good, jpeg])
        var jpegData = try Data(contentsOf: URL(fileURLWithPath: jpeg))
        for i in stride(from: 20, to: min(jpegData.count, 400), by: 3) { jpegData[i] = 0xFF }
        try jpegData.write(to: corruptJPEG)
        let huge = directory.appendingPathComponent("huge.png")
        try pngHeaderOnly(width: 20000, height: 20000).write(to: huge)
        let blank = directory.appendingPathComponent("blank.png").path
        try convert(["-size", "400x300", "gradient:white-gray60", blank])
        let two = directory.appendingPathComponent("two.png").path
        try convert([
            good, try code(Self.valid.replacingOccurrences(of: "From a photo", with: "Another"), name: "other.png"), "+append", two,
        ])

        let cases: [(String, String)] = [
            (notImage.path, "not a PNG or JPEG image"),
            (truncated.path, "damaged or truncated PNG"),
            (corruptJPEG.path, "JPEG"),
            (huge.path, "20000 x 20000 pixels, over the limit of 64 megapixels"),
            (blank, "no QR code found"),
            (try code("https://example.org/hello", name: "url.png"), "not a ribbit prescription (it starts 'https://example.org/hell"),
            (
                try code(Self.valid.replacingOccurrences(of: "RIBBIT-RX 1", with: "RIBBIT-RX 3"), name: "v3.png"),
                "unsupported version 'RIBBIT-RX 3'"
            ),
            (try code(Self.valid.replacingOccurrences(of: "1000=35", with: "1000=135"), name: "range.png"), "135"),
            (try code(Self.valid.replacingOccurrences(of: "rule: nal-r", with: "rule: magic"), name: "field.png"), "magic"),
            (two, "2 different ribbit prescriptions"),
        ]
        for (path, words) in cases {
            let result = try Ribbitd.run(["rx", "show", path])
            #expect(result.status == 65, "\(path): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(words), "\(result.stderr)")
        }
    }

    /// A PNG whose header claims `width` x `height` but that has no pixel data: the cap must
    /// refuse it from the header alone.
    func pngHeaderOnly(width: UInt32, height: UInt32) -> Data {
        func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let ihdr = Array("IHDR".utf8) + bigEndian(width) + bigEndian(height) + [8, 0, 0, 0, 0]
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in ihdr {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bigEndian(13) + ihdr + bigEndian(~crc))
    }
}
