import CZbar
import Foundation
import RibbitImage

/// Finds QR codes in an image with zbar, raw bytes as encoded (no charset guessing).
///
/// Photos are hard: the raw image and its negative are scanned first (a code shown on a dark
/// screen is inverted); when no code is found, a few cleaned-up versions are tried: a 3 x 3
/// median (sensor noise, JPEG ringing), a local-mean threshold (uneven light, low contrast),
/// and a 2x enlargement (small pictures of a small code). Each is made only when needed.
///
/// The work is bounded whatever the image (a 76 KB PNG can hold 64 megapixels of white): a
/// large image is first scanned, with its clean-ups, reduced to `cleanupPixels`, and only then
/// reduced to `maxScanPixels`, raw and negative only; no clean-up ever runs on more than
/// `cleanupPixels`. zbar needs about 2-3 pixels a module: a code filling a good part of the
/// picture reads at the small size, and one covering 1 % of a 12 MP photo (about 4 pixels a
/// module there) at the larger.
public enum QRDecoder {
    /// The size the clean-ups run at (about 1600 x 1600 or 1800 x 1370 pixels): larger images
    /// are reduced to it (area average) and tried first.
    public static let cleanupPixels = 2_500_000
    /// The largest image scanned at all: larger ones are reduced to it. A phone's usual 12 MP
    /// photo is scanned at full size (at 6 MP, 20 of 32 hard photos with a code covering 0.7-1 %
    /// of the area still read; at 12 MP, 28).
    public static let maxScanPixels = 12_000_000

    /// Every distinct QR payload found, in the order found.
    public static func payloads(in image: GreyImage, wanted: (Data) -> Bool = { _ in true }) -> [Data] {
        var found = [Data]()
        func add(_ from: GreyImage) {
            for payload in scan(from) where !found.contains(payload) { found.append(payload) }
        }
        // The larger level is made first and the smaller from it: one pass over a huge image.
        let large = image.downscaled(toAtMost: maxScanPixels)
        let small = large.downscaled(toAtMost: cleanupPixels)
        add(small)
        add(ImageFilters.inverted(small))
        if found.contains(where: wanted) { return found }
        // Enlarging helps small pictures only (a large photo has the pixels already).
        let enlarge = small.width * small.height <= 2_000_000
        let variants: [() -> GreyImage] = [
            { ImageFilters.median3(small) }, { ImageFilters.localThreshold(small) }, { ImageFilters.enlarged2x(small) },
        ]
        for makeVariant in variants.prefix(enlarge ? 3 : 2) {
            let variant = makeVariant()
            add(variant)
            add(ImageFilters.inverted(variant))
            if found.contains(where: wanted) { return found }
        }
        if large.width * large.height > small.width * small.height {
            add(large)
            add(ImageFilters.inverted(large))
        }
        return found
    }

    /// One zbar pass over an image (zbar needs exactly width x height bytes, alive during the scan).
    public static func scan(_ image: GreyImage) -> [Data] {
        guard image.width > 0, image.height > 0, let scanner = zbar_image_scanner_create() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        guard let zimage = zbar_image_create() else { return [] }
        defer { zbar_image_destroy(zimage) }
        zbar_image_set_format(zimage, zbar_fourcc_parse("Y800"))
        zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))
        return image.pixels.withUnsafeBytes { raw -> [Data] in
            zbar_image_set_data(zimage, raw.baseAddress, UInt(raw.count), nil)
            defer { zbar_image_set_data(zimage, nil, 0, nil) }
            guard zbar_scan_image(scanner, zimage) > 0 else { return [] }
            var result = [Data]()
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE, let bytes = zbar_symbol_get_data(current) {
                    result.append(Data(bytes: bytes, count: Int(zbar_symbol_get_data_length(current))))
                }
                symbol = zbar_symbol_next(current)
            }
            return result
        }
    }
}

/// The image clean-ups the decoder tries.
public enum ImageFilters {
    public static func inverted(_ image: GreyImage) -> GreyImage {
        GreyImage(width: image.width, height: image.height, pixels: image.pixels.map { 255 - $0 })
    }

    /// The median of each 3 x 3 neighbourhood (the border kept), by a 19-exchange sorting network.
    public static func median3(_ image: GreyImage) -> GreyImage {
        let (w, h) = (image.width, image.height)
        guard w >= 3, h >= 3 else { return image }
        var out = image
        image.pixels.withUnsafeBufferPointer { p in
            out.pixels.withUnsafeMutableBufferPointer { out in
                for y in 1..<(h - 1) {
                    for x in 1..<(w - 1) {
                        let (above, here, below) = ((y - 1) * w + x, y * w + x, (y + 1) * w + x)
                        var (p0, p1, p2) = (p[above - 1], p[above], p[above + 1])
                        var (p3, p4, p5) = (p[here - 1], p[here], p[here + 1])
                        var (p6, p7, p8) = (p[below - 1], p[below], p[below + 1])
                        @inline(__always) func order(_ a: inout UInt8, _ b: inout UInt8) { (a, b) = (min(a, b), max(a, b)) }
                        order(&p1, &p2); order(&p4, &p5); order(&p7, &p8)
                        order(&p0, &p1); order(&p3, &p4); order(&p6, &p7)
                        order(&p1, &p2); order(&p4, &p5); order(&p7, &p8)
                        order(&p0, &p3); order(&p5, &p8); order(&p4, &p7)
                        order(&p3, &p6); order(&p1, &p4); order(&p2, &p5)
                        order(&p4, &p7); order(&p4, &p2); order(&p6, &p4)
                        order(&p4, &p2)
                        out[here] = p4
                    }
                }
            }
        }
        return out
    }

    /// Black where a pixel is darker than the mean of its neighbourhood (about 1/16 of the
    /// shorter side), by an integral image: robust to uneven lighting and low contrast.
    public static func localThreshold(_ image: GreyImage) -> GreyImage {
        let (w, h) = (image.width, image.height)
        let radius = max(4, min(w, h) / 32)
        // UInt32 sums, 4 bytes a pixel: exact up to 2^32 / 255 = 16.8 megapixels. Wrapping
        // arithmetic keeps every window's sum exact beyond that too (modulo 2^32, and a window's
        // true sum is below 2^32 when it covers under 16.8 MP), so no image size can trap.
        var integral = [UInt32](repeating: 0, count: (w + 1) * (h + 1))
        var out = GreyImage(width: w, height: h, fill: 255)
        image.pixels.withUnsafeBufferPointer { p in
            integral.withUnsafeMutableBufferPointer { integral in
                for y in 0..<h {
                    var row: UInt32 = 0
                    for x in 0..<w {
                        row &+= UInt32(p[y * w + x])
                        integral[(y + 1) * (w + 1) + x + 1] = integral[y * (w + 1) + x + 1] &+ row
                    }
                }
            }
            integral.withUnsafeBufferPointer { integral in
                out.pixels.withUnsafeMutableBufferPointer { out in
                    for y in 0..<h {
                        let (y0, y1) = (max(0, y - radius), min(h, y + radius + 1))
                        let (top, bottom) = (y0 * (w + 1), y1 * (w + 1))
                        for x in 0..<w {
                            let (x0, x1) = (max(0, x - radius), min(w, x + radius + 1))
                            let sum = integral[bottom + x1] &- integral[top + x1] &- integral[bottom + x0] &+ integral[top + x0]
                            let mean = Int(sum) / ((x1 - x0) * (y1 - y0))
                            if Int(p[y * w + x]) * 100 < mean * 95 { out[y * w + x] = 0 }
                        }
                    }
                }
            }
        }
        return out
    }

    /// Twice the size, bilinear; only for images that stay under the pixel cap.
    public static func enlarged2x(_ image: GreyImage) -> GreyImage {
        let (w, h) = (image.width, image.height)
        guard 4 * w * h <= ImageFile.maxPixels else { return image }
        var out = GreyImage(width: 2 * w, height: 2 * h, fill: 255)
        for y in 0..<(2 * h) {
            let sy = min(Double(h - 1), max(0, (Double(y) + 0.5) / 2 - 0.5))
            let (y0, fy) = (Int(sy), sy - Double(Int(sy)))
            let y1 = min(h - 1, y0 + 1)
            for x in 0..<(2 * w) {
                let sx = min(Double(w - 1), max(0, (Double(x) + 0.5) / 2 - 0.5))
                let (x0, fx) = (Int(sx), sx - Double(Int(sx)))
                let x1 = min(w - 1, x0 + 1)
                let top = Double(image[x0, y0]) * (1 - fx) + Double(image[x1, y0]) * fx
                let bottom = Double(image[x0, y1]) * (1 - fx) + Double(image[x1, y1]) * fx
                out[x, y] = UInt8((top * (1 - fy) + bottom * fy).rounded())
            }
        }
        return out
    }
}
