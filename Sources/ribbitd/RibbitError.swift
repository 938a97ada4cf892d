import ArgumentParser
import Foundation
import RibbitAudioFile
import RibbitControl
import RibbitDSP
import RibbitImage
import RibbitPrescription
import RibbitQR

/// An error for the user: one line that says what is wrong and what to do, and an exit code
/// in the sysexits(3) convention.
struct RibbitError: Error {
    let message: String
    let exitCode: ExitCode

    static func usage(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(64)) }
    static func data(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(65)) }
    static func noInput(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(66)) }
    static func cannotCreate(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(73)) }
}

/// Reads and validates a prescription file; errors name the file.
func loadPrescription(_ path: String) throws(RibbitError) -> Prescription {
    try readPrescription(path).prescription
}

/// A prescription and the exact bytes it came from (the text file, or the QR code's payload).
struct PrescriptionSource {
    let prescription: Prescription
    let payload: String
    /// "a QR code" or "a text file", for messages.
    let kind: String
}

/// Reads a prescription from a text file (.rx) or a PNG/JPEG image holding its QR code.
func readPrescription(_ path: String) throws(RibbitError) -> PrescriptionSource {
    let data: Data
    do { data = try BoundedFile.read(path, maxBytes: ImageFile.maxFileBytes) } catch {
        if case .tooLarge = error.problem {
            throw .data("\(error) for a prescription or its picture; crop the picture to the code; the prescription was not used")
        }
        throw .noInput("\(error); give the path of a .rx file or a PNG/JPEG of its QR code")
    }
    let payload: Data
    let kind: String
    if ImageFile.format(of: data) != nil {
        payload = try prescriptionCode(in: data, path: path)
        kind = "a QR code"
    } else if ["png", "jpg", "jpeg"].contains((path as NSString).pathExtension.lowercased()) {
        throw .data("\(path): not a PNG or JPEG image (its first bytes are not an image header); the prescription was not used")
    } else {
        payload = data
        kind = "a text file"
    }
    do {
        let prescription = try Prescription.parse(payload)
        return PrescriptionSource(prescription: prescription, payload: String(decoding: payload, as: UTF8.self), kind: kind)
    } catch {
        let what = kind == "a QR code" ? "\(path): the ribbit QR code: " : "\(path): "
        throw .data("\(what)\(error); the prescription was not used")
    }
}

/// How long reading the QR codes in a picture may take (a 12 MP photo takes about 1 s here).
let qrScanLimitSeconds = 10

/// The one ribbit prescription payload in an image; other QR codes are ignored.
private func prescriptionCode(in data: Data, path: String) throws(RibbitError) -> Data {
    let image: GreyImage
    let size: (width: Int, height: Int)
    // Reduced as it is decoded: no more pixels than the decoder will ever scan.
    do { (image, size) = (try ImageFile.decode(data, reducedTo: QRDecoder.maxScanPixels), try ImageFile.size(of: data)) } catch {
        throw .data("\(path): \(error); the prescription was not used")
    }
    let isRibbit: @Sendable (Data) -> Bool = { payload in payload.starts(with: Array("RIBBIT-RX".utf8)) }
    // zbar's matching of finder patterns grows faster than the picture: one tiled with
    // finder-like squares held a single 6 MP scan for 18 s. So the scan runs on its own thread
    // and the command gives up after qrScanLimitSeconds; exiting ends the thread.
    final class Found: @unchecked Sendable { var codes = [Data]() }
    let found = Found()
    let finished = DispatchSemaphore(value: 0)
    Thread {
        found.codes = QRDecoder.payloads(in: image, wanted: isRibbit)
        finished.signal()
    }.start()
    guard finished.wait(timeout: .now() + .seconds(qrScanLimitSeconds)) == .success else {
        throw .data(
            "\(path): looking for QR codes in the picture took over \(qrScanLimitSeconds) s; crop it to the code; the prescription was not used")
    }
    let codes = found.codes
    let ribbit = codes.filter(isRibbit)
    switch ribbit.count {
    case 1: return ribbit[0]
    case 0 where codes.isEmpty:
        throw .data(
            "\(path): no QR code found in the \(size.width) x \(size.height) image; photograph the code straight on, "
                + "filling a good part of the picture, in even light")
    case 0:
        let start = String(decoding: codes[0].prefix(24), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        throw .data("\(path): the QR code there is not a ribbit prescription (it starts '\(start)'); the prescription was not used")
    default:
        throw .data("\(path): the image holds \(ribbit.count) different ribbit prescriptions; crop it to the one you want")
    }
}

func describe(_ error: Error) -> String {
    let ns = error as NSError
    if ns.domain == NSCocoaErrorDomain, let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError,
        underlying.domain == NSPOSIXErrorDomain
    {
        return String(cString: strerror(Int32(underlying.code)))
    }
    if ns.domain == NSCocoaErrorDomain && (ns.code == NSFileReadNoSuchFileError || ns.code == 4) { return "no such file" }
    return ns.localizedDescription
}

func openAudio(_ path: String) throws(RibbitError) -> AudioFileReader {
    do { return try AudioFileReader(path: path) } catch { throw .noInput(error.description) }
}

/// Which ear each channel of a file is for: stereo is left then right; mono needs `--ear`.
func ears(channelCount: Int, ear: Ear?, path: String) throws(RibbitError) -> [Ear] {
    switch (channelCount, ear) {
    case (1, let ear?): return [ear]
    case (1, nil): throw .usage("\(path) is mono; say whose fitting to apply with --ear left or --ear right")
    case (2, nil): return [.left, .right]
    case (2, .some): throw .usage("--ear is for mono files; a stereo file gets the left fitting on channel 1 and the right on channel 2")
    default: throw .data("\(path) has \(channelCount) channels; ribbit processes mono or stereo (one channel per ear)")
    }
}

extension RibbitError {
    /// The daemon or JACK cannot be reached (EX_UNAVAILABLE).
    static func unavailable(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(69)) }
}
