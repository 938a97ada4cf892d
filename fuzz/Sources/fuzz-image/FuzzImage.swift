import Foundation
import RibbitImage
import RibbitQR

/// Any bytes as an image file: decoding (PNG, JPEG, the size cap) and QR scanning must never
/// crash, whatever the file holds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(bytes: data, count: size)
    if let image = try? ImageFile.decode(bytes), image.width * image.height <= 1_000_000 {
        _ = QRDecoder.payloads(in: image)
    }
    return 0
}

/// SwiftPM links an executable's entry point as fuzz_image_main; hand control to libFuzzer's driver.
@_cdecl("fuzz_image_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzImage)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32
