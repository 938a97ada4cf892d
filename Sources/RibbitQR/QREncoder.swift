import CQRencode
import Foundation
import Glibc
import RibbitImage

/// Makes QR codes with libqrencode: 8-bit byte mode, the smallest version that fits.
public struct QRCode: Sendable, Equatable {
    /// Modules per side.
    public let size: Int
    /// size x size, true for a dark module.
    public let modules: [Bool]

    public enum Correction: String, Sendable, CaseIterable {
        case m = "M", q = "Q", h = "H"
        var level: QRecLevel {
            switch self {
            case .m: QR_ECLEVEL_M
            case .q: QR_ECLEVEL_Q
            case .h: QR_ECLEVEL_H
            }
        }
    }

    public static let quietZoneModules = 4

    public init(_ payload: Data, correction: Correction = .m) throws(ImageError) {
        let bytes = [UInt8](payload)
        guard let code = QRcode_encodeData(Int32(bytes.count), bytes, 0, correction.level) else {
            throw ImageError(
                errno == ERANGE
                    ? "the prescription is \(bytes.count) bytes, too long for one QR code at correction \(correction.rawValue); shorten the note"
                    : "libqrencode could not encode the prescription")
        }
        defer { QRcode_free(code) }
        size = Int(code.pointee.width)
        modules = (0..<(size * size)).map { code.pointee.data[$0] & 1 == 1 }
    }

    /// A prescription's code as PNG bytes, decoded again before they are returned: what
    /// `ribbitd rx make`, `export` and `audiogram fit --qr` write and the web app's Fitting and
    /// Prescriptions screens serve decodes to exactly `payload`, or nothing is handed out.
    public static func checkedPNG(_ payload: Data, correction: Correction = .m, scale: Int = 8) throws(ImageError) -> (
        code: QRCode, png: Data
    ) {
        let code = try QRCode(payload, correction: correction)
        let png = try ImageFile.pngData(code.image(scale: scale))
        guard QRDecoder.scan(try ImageFile.decode(png)) == [payload] else {
            throw ImageError("the code does not read back as the prescription; try a larger scale")
        }
        return (code, png)
    }

    /// Black modules of `scale` pixels on white, with a quiet zone of four modules.
    public func image(scale: Int) -> GreyImage {
        let side = (size + 2 * Self.quietZoneModules) * scale
        var image = GreyImage(width: side, height: side, fill: 255)
        for my in 0..<size {
            for mx in 0..<size where modules[my * size + mx] {
                let (x0, y0) = ((mx + Self.quietZoneModules) * scale, (my + Self.quietZoneModules) * scale)
                for y in y0..<(y0 + scale) {
                    for x in x0..<(x0 + scale) { image[x, y] = 0 }
                }
            }
        }
        return image
    }

    /// The code as text, two modules per character (Unicode half blocks), black on white forced
    /// with ANSI colours so it scans from dark and light terminals alike.
    public var terminalText: String {
        let quiet = Self.quietZoneModules
        let side = size + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            return mx >= 0 && my >= 0 && mx < size && my < size && modules[my * size + mx]
        }
        var lines = [String]()
        for y in stride(from: 0, to: side, by: 2) {
            var line = "\u{1B}[30;47m"
            for x in 0..<side {
                switch (dark(x, y), dark(x, y + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines.joined(separator: "\n")
    }
}
