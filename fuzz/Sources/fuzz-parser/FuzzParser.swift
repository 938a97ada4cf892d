import RibbitPrescription

/// Any bytes: the parser returns a prescription or throws; it must never crash or hang, and
/// what it accepts must survive its own canonical text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let prescription = try? Prescription.parse(bytes) {
        guard let again = try? Prescription.parse(Array(prescription.text.utf8)), again == prescription else {
            fatalError("accepted a prescription whose canonical text does not parse back to it")
        }
    }
    return 0
}

/// SwiftPM links an executable's entry point as fuzz_parser_main; hand control to libFuzzer's driver.
@_cdecl("fuzz_parser_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzParser)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32
