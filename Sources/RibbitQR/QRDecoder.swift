import CZbar
import Foundation
import RibbitImage

/// Finds QR codes in an image with zbar, raw bytes as encoded (no charset guessing).
///
/// Photos are hard: the raw image and its negative are scanned first (a code shown on a dark
/// screen is inverted); when no code is found, a few cleaned-up versions are tried: a 3 x 3
/// median (sensor noise, JPEG ringing), a local-mean threshold (uneven light, low contrast),
/// and a 2x enlargement (small pictures of a small code). Each is made only when needed.
public enum QRDecoder {
    /// Every distinct QR payload found, in the order found.
    public static func payloads(in image: GreyImage, wanted: (Data) -> Bool = { _ in true }) -> [Data] {
        var found = [Data]()
        func add(_ from: GreyImage) {
            for payload in scan(from) where !found.contains(payload) { found.append(payload) }
        }
        add(image)
        add(ImageFilters.inverted(image))
        if found.contains(where: wanted) { return found }
        // Enlarging helps small pictures only (a large photo has the pixels already).
        let enlarge = image.width * image.height <= 2_000_000
        let variants: [() -> GreyImage] = [
            { ImageFilters.median3(image) }, { ImageFilters.localThreshold(image) }, { ImageFilters.enlarged2x(image) },
        ]
        for makeVariant in variants.prefix(enlarge ? 3 : 2) {
            let variant = makeVariant()
            add(variant)
            add(ImageFilters.inverted(variant))
            if found.contains(where: wanted) { break }
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

    public static func median3(_ image: GreyImage) -> GreyImage {
        var out = image
        let (w, h) = (image.width, image.height)
        guard w >= 3, h >= 3 else { return image }
        image.pixels.withUnsafeBufferPointer { p in
            var window = [UInt8](repeating: 0, count: 9)
            for y in 1..<(h - 1) {
                for x in 1..<(w - 1) {
                    var k = 0
                    for dy in -1...1 {
                        for dx in -1...1 {
                            window[k] = p[(y + dy) * w + x + dx]
                            k += 1
                        }
                    }
                    window.sort()
                    out.pixels[y * w + x] = window[4]
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
        var integral = [Int](repeating: 0, count: (w + 1) * (h + 1))
        for y in 0..<h {
            var row = 0
            for x in 0..<w {
                row += Int(image.pixels[y * w + x])
                integral[(y + 1) * (w + 1) + x + 1] = integral[y * (w + 1) + x + 1] + row
            }
        }
        var out = GreyImage(width: w, height: h, fill: 255)
        for y in 0..<h {
            let (y0, y1) = (max(0, y - radius), min(h, y + radius + 1))
            for x in 0..<w {
                let (x0, x1) = (max(0, x - radius), min(w, x + radius + 1))
                let sum = integral[y1 * (w + 1) + x1] - integral[y0 * (w + 1) + x1] - integral[y1 * (w + 1) + x0] + integral[y0 * (w + 1) + x0]
                let mean = sum / ((x1 - x0) * (y1 - y0))
                if Int(image.pixels[y * w + x]) * 100 < mean * 95 { out.pixels[y * w + x] = 0 }
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
