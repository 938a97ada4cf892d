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

    /// This image reduced by area averaging (each output pixel the mean of the source area it
    /// covers, fractions at the edges weighted) to at most `pixelLimit` pixels, the aspect ratio
    /// kept; itself when it is no larger. One pass over the source, two rows of scratch.
    public func downscaled(toAtMost pixelLimit: Int) -> GreyImage {
        guard width * height > pixelLimit, pixelLimit > 0 else { return self }
        let factor = (Double(width) * Double(height) / Double(pixelLimit)).squareRoot()
        var outWidth = min(width, max(1, Int(Double(width) / factor)))
        var outHeight = min(height, max(1, Int(Double(height) / factor)))
        // A very thin image: the short side stopped at 1 px, so the long side takes the rest.
        if outWidth * outHeight > pixelLimit {
            if outWidth >= outHeight { outWidth = pixelLimit / outHeight } else { outHeight = pixelLimit / outWidth }
        }
        let stepX = Double(width) / Double(outWidth), stepY = Double(height) / Double(outHeight)
        // Per output column: the source columns it covers and the weights of the first and last.
        struct Span { var first: Int, last: Int, firstWeight: Float, lastWeight: Float }
        func spans(count: Int, step: Double, limit: Int) -> [Span] {
            (0..<count).map { index in
                let (start, end) = (Double(index) * step, min(Double(limit), Double(index + 1) * step))
                let first = min(limit - 1, Int(start)), last = max(first, min(limit - 1, Int(end.rounded(.up)) - 1))
                if first == last { return Span(first: first, last: last, firstWeight: Float(end - start), lastWeight: 0) }
                return Span(first: first, last: last, firstWeight: Float(Double(first + 1) - start), lastWeight: Float(end - Double(last)))
            }
        }
        let columns = spans(count: outWidth, step: stepX, limit: width)
        let rows = spans(count: outHeight, step: stepY, limit: height)
        let scale = Float(1 / (stepX * stepY))
        var out = [UInt8](repeating: 0, count: outWidth * outHeight)
        // Raw scratch rows: no copy-on-write or exclusivity checks in the inner loops.
        let rowSums = UnsafeMutableBufferPointer<Float>.allocate(capacity: outWidth)
        let total = UnsafeMutableBufferPointer<Float>.allocate(capacity: outWidth)
        defer { rowSums.deallocate(); total.deallocate() }
        var summedRow = -1
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { out in
                columns.withUnsafeBufferPointer { columns in
                    for (outY, span) in rows.enumerated() {
                        total.update(repeating: 0)
                        for y in span.first...span.last {
                            // A boundary row serves two output rows: summed once.
                            if y != summedRow {
                                summedRow = y
                                let row = source.baseAddress! + y * width
                                for index in 0..<outWidth {
                                    let column = columns[index]
                                    var sum = Float(row[column.first]) * column.firstWeight
                                    if column.last > column.first {
                                        var inner: UInt32 = 0
                                        for x in (column.first + 1)..<column.last { inner &+= UInt32(row[x]) }
                                        sum += Float(inner) + Float(row[column.last]) * column.lastWeight
                                    }
                                    rowSums[index] = sum
                                }
                            }
                            let weight = y == span.first ? span.firstWeight : y == span.last ? span.lastWeight : 1
                            for index in 0..<outWidth { total[index] += rowSums[index] * weight }
                        }
                        for index in 0..<outWidth { out[outY * outWidth + index] = UInt8(min(255, (total[index] * scale).rounded())) }
                    }
                }
            }
        }
        return GreyImage(width: outWidth, height: outHeight, pixels: out)
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
    /// Files larger than this are refused before reading. A phone's 48 MP JPEG is 10-25 MB.
    /// Reading a PNG holds the file and all its pixels at once (libpng's simplified API cannot
    /// scale), so this keeps the worst case, a 64 MP PNG, near 130 MB of memory (measured: a 32 MB
    /// 8000 x 8000 PNG took 127 MB and 1.7 s to refuse; a 61 MB one 158 MB).
    public static let maxFileBytes = 32 * 1024 * 1024

    public enum Format: String, Sendable { case png = "PNG", jpeg = "JPEG" }

    /// The format by magic bytes, or nil.
    public static func format(of data: Data) -> Format? {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        return nil
    }

    /// The whole image, at full size.
    public static func decode(_ data: Data) throws(ImageError) -> GreyImage {
        try decode(data, reducedTo: maxPixels)
    }

    /// The image reduced by area averaging to at most `pixelLimit` pixels when it is larger. A
    /// JPEG is decoded at a smaller scale directly (TurboJPEG's DCT scaling), so a 64 MP photo
    /// never becomes a 64 MB buffer; a PNG is decoded whole (libpng's simplified API cannot
    /// scale) and reduced before it is returned.
    public static func decode(_ data: Data, reducedTo pixelLimit: Int) throws(ImageError) -> GreyImage {
        switch format(of: data) {
        case .png: return try decodePNG(data).downscaled(toAtMost: pixelLimit)
        case .jpeg: return try decodeJPEG(data, pixelLimit: pixelLimit)
        case nil: throw ImageError("not a PNG or JPEG image")
        }
    }

    /// Width and height from the header, nothing decoded (for messages about the file).
    public static func size(of data: Data) throws(ImageError) -> (width: Int, height: Int) {
        switch format(of: data) {
        case .png: return try pngSize(data)
        case .jpeg:
            guard let handle = tjInitDecompress() else { throw ImageError("cannot start the JPEG decoder") }
            defer { tjDestroy(handle) }
            return try jpegSize(data, handle: handle)
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

    /// The size from the IHDR chunk (always first, at byte 16), before libpng reads anything.
    static func pngSize(_ data: Data) throws(ImageError) -> (width: Int, height: Int) {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { throw ImageError("a damaged PNG (no IHDR header)") }
        let be32 = { (at: Int) in bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }

    static func decodePNG(_ data: Data) throws(ImageError) -> GreyImage {
        let (headerWidth, headerHeight) = try pngSize(data)
        try checkSize(width: headerWidth, height: headerHeight, format: .png)
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

    static func jpegSize(_ data: Data, handle: tjhandle) throws(ImageError) -> (width: Int, height: Int) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let status = data.withUnsafeBytes { raw in
            tjDecompressHeader3(
                handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &width, &height, &subsampling, &colorspace)
        }
        guard status == 0 else { throw ImageError("a damaged JPEG (\(String(cString: tjGetErrorStr2(handle))))") }
        return (Int(width), Int(height))
    }

    /// Decodes at the smallest TurboJPEG scale (1/8, 1/4, 3/8 ... 1) that still gives at least
    /// `pixelLimit` pixels, then reduces the rest of the way by area averaging.
    static func decodeJPEG(_ data: Data, pixelLimit: Int) throws(ImageError) -> GreyImage {
        guard let handle = tjInitDecompress() else { throw ImageError("cannot start the JPEG decoder") }
        defer { tjDestroy(handle) }
        let (fullWidth, fullHeight) = try jpegSize(data, handle: handle)
        try checkSize(width: fullWidth, height: fullHeight, format: .jpeg)
        var (width, height) = (fullWidth, fullHeight)
        var count: Int32 = 0
        if fullWidth * fullHeight > pixelLimit, let factors = tjGetScalingFactors(&count) {
            for factor in UnsafeBufferPointer(start: factors, count: Int(count)) where factor.num < factor.denom {
                let (num, denom) = (Int(factor.num), Int(factor.denom))
                // TJSCALED, a macro Swift does not import.
                let scaled = ((fullWidth * num + denom - 1) / denom, (fullHeight * num + denom - 1) / denom)
                if scaled.0 * scaled.1 >= pixelLimit && scaled.0 * scaled.1 < width * height { (width, height) = scaled }
            }
        }
        var pixels = [UInt8](repeating: 0, count: width * height)
        let result = data.withUnsafeBytes { raw in
            tjDecompress2(
                handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(raw.count), &pixels, Int32(width), Int32(width), Int32(height),
                Int32(TJPF_GRAY.rawValue), 0)
        }
        // Warnings (a truncated file decodes partly) still give an image; errors do not.
        if result != 0 && tjGetErrorCode(handle) == Int32(TJERR_FATAL.rawValue) {
            throw ImageError("a damaged or truncated JPEG (\(String(cString: tjGetErrorStr2(handle))))")
        }
        return GreyImage(width: width, height: height, pixels: pixels).downscaled(toAtMost: pixelLimit)
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

    /// An 8-bit grey PNG's bytes, as `writePNG` writes them to a file.
    public static func pngData(_ image: GreyImage) throws(ImageError) -> Data {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = UInt32(PNG_FORMAT_GRAY)
        defer { png_image_free(&png) }
        var size: png_alloc_size_t = 0
        // The first call measures, the second writes.
        let measured = image.pixels.withUnsafeBytes {
            png_image_write_to_memory(&png, nil, &size, 0, $0.baseAddress, Int32(image.width), nil)
        }
        guard measured != 0, size > 0 else { throw ImageError("cannot make a PNG (\(message(of: png)))") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let written = bytes.withUnsafeMutableBytes { out in
            image.pixels.withUnsafeBytes {
                png_image_write_to_memory(&png, out.baseAddress, &size, 0, $0.baseAddress, Int32(image.width), nil)
            }
        }
        guard written != 0 else { throw ImageError("cannot make a PNG (\(message(of: png)))") }
        return Data(bytes[0..<Int(size)])
    }
}
