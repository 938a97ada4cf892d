import CPNG
import CTurboJPEG
import Foundation

/// An 8-bit grey image, row-major, no padding (what zbar reads and qrencode output becomes).
public struct GreyImage: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public init(width: Int, height: Int, fill: UInt8) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: fill, count: width * height))
    }

    public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }
}

public struct ImageError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reading PNG and JPEG files into grey images, with a size cap checked from the header before
/// any pixel is decoded. PNG through libpng's simplified API and JPEG through TurboJPEG: both
/// report errors as return values (libjpeg's classic API needs setjmp, which Swift cannot use).
public enum ImageFile {
    /// The largest image accepted: 64 megapixels (a 48 MP phone photo fits).
    public static let maxPixels = 64_000_000
    /// Files larger than this are refused before reading (a 64 MP PNG of noise is ~200 MB).
    public static let maxFileBytes = 256 * 1024 * 1024

    public enum Format: String, Sendable { case png = "PNG", jpeg = "JPEG" }

    /// The format by magic bytes, or nil.
    public static func format(of data: Data) -> Format? {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        return nil
    }

    public static func decode(_ data: Data) throws(ImageError) -> GreyImage {
        switch format(of: data) {
        case .png: return try decodePNG(data)
        case .jpeg: return try decodeJPEG(data)
        case nil: throw ImageError("not a PNG or JPEG image")
        }
    }

    static func checkSize(width: Int, height: Int, format: Format) throws(ImageError) {
        guard width > 0, height > 0 else { throw ImageError("the \(format.rawValue) header gives an empty image (\(width) x \(height))") }
        // Each side first: two 32-bit sides can overflow the product (found by the fuzzer).
        guard width <= maxPixels, height <= maxPixels, width * height <= maxPixels else {
            throw ImageError(
                "the image is \(width) x \(height) pixels, over the limit of \(maxPixels / 1_000_000) megapixels; crop or scale it down")
        }
    }

    static func decodePNG(_ data: Data) throws(ImageError) -> GreyImage {
        // The size from the IHDR chunk (always first, at byte 16), before libpng reads anything.
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { throw ImageError("a damaged PNG (no IHDR header)") }
        let be32 = { (at: Int) in bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        try checkSize(width: be32(16), height: be32(20), format: .png)
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        let begun = data.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        defer { png_image_free(&image) }
        guard begun != 0 else { throw ImageError("a damaged PNG (\(message(of: image)))") }
        try checkSize(width: Int(image.width), height: Int(image.height), format: .png)
        image.format = UInt32(PNG_FORMAT_GRAY)
        let width = Int(image.width)
        let height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height)
        // Transparent pixels are laid over white, as a viewer shows them.
        var white = png_color(red: 255, green: 255, blue: 255)
        let finished = pixels.withUnsafeMutableBytes { buffer in
            png_image_finish_read(&image, &white, buffer.baseAddress, Int32(width), nil)
        }
        guard finished != 0 else { throw ImageError("a damaged or truncated PNG (\(message(of: image)))") }
        return GreyImage(width: width, height: height, pixels: pixels)
    }

    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    static func decodeJPEG(_ data: Data) throws(ImageError) -> GreyImage {
        guard let handle = tjInitDecompress() else { throw ImageError("cannot start the JPEG decoder") }
        defer { tjDestroy(handle) }
        var bytes = [UInt8](data)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, &bytes, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw ImageError("a damaged JPEG (\(String(cString: tjGetErrorStr2(handle))))")
        }
        try checkSize(width: Int(width), height: Int(height), format: .jpeg)
        var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height))
        let result = tjDecompress2(handle, &bytes, UInt(bytes.count), &pixels, width, width, height, Int32(TJPF_GRAY.rawValue), 0)
        // Warnings (a truncated file decodes partly) still give an image; errors do not.
        if result != 0 && tjGetErrorCode(handle) == Int32(TJERR_FATAL.rawValue) {
            throw ImageError("a damaged or truncated JPEG (\(String(cString: tjGetErrorStr2(handle))))")
        }
        return GreyImage(width: Int(width), height: Int(height), pixels: pixels)
    }

    /// Writes an 8-bit grey PNG.
    public static func writePNG(_ image: GreyImage, to path: String) throws(ImageError) {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = UInt32(PNG_FORMAT_GRAY)
        let ok = image.pixels.withUnsafeBytes { png_image_write_to_file(&png, path, 0, $0.baseAddress, Int32(image.width), nil) }
        defer { png_image_free(&png) }
        guard ok != 0 else { throw ImageError("cannot write \(path) (\(message(of: png)))") }
    }
}
