import Foundation
import RibbitImage
import RibbitPrescription
import RibbitQR
import RibbitSettings

/// The first step of intake: the exact bytes of a prescription, read from a text file (.rx)
/// or decoded from a PNG/JPEG picture of its QR code. Parsing and judging come next (Intake).
public struct PrescriptionInput: Sendable {
    /// The prescription text (the file, or the QR code's payload).
    public let payload: String
    /// The path it came from, for messages and the history.
    public let path: String
    /// "a QR code" or "a text file", for messages.
    public let kind: String

    public init(payload: String, path: String, kind: String) {
        self.payload = payload
        self.path = path
        self.kind = kind
    }

    /// What a prescription is and how to get one, for a file that is none.
    public static let whatItIs =
        "a ribbit prescription is a text file starting 'RIBBIT-RX 1' or a PNG/JPEG picture of its QR code; "
        + "your audiologist gives you one (`ribbitd rx make` makes them)"

    /// How much processor time reading the QR codes in a picture may take (a 12 MP photo takes
    /// about 1 s here). Processor time, not time on the clock: on a busy machine a picture a
    /// quiet one reads in 2 s took over 10 s of the clock, and was refused.
    public static let qrScanLimitSeconds = 10
    /// However busy the machine, the scan is given up after this long on the clock (the web
    /// app reads uploads one at a time).
    public static let qrScanWallLimitSeconds = 60.0

    /// Reads a .rx file or decodes the one ribbit QR code in a picture; nothing is parsed yet.
    public static func read(_ path: String) throws(IntakeError) -> PrescriptionInput {
        let data: Data
        do { data = try BoundedFile.read(path, maxBytes: ImageFile.maxFileBytes) } catch {
            if case .tooLarge = error.problem {
                throw IntakeError(
                    "\(error): too large to be a ribbit prescription; \(whatItIs) (crop a large photo to the code); the prescription was not used"
                )
            }
            throw IntakeError("\(error); give the path of a .rx file or a PNG/JPEG of its QR code", kind: .unreadable)
        }
        return try read(data, path: path)
    }

    /// The same for bytes already read (the web app's upload); `path` names them in messages.
    public static func read(_ data: Data, path: String) throws(IntakeError) -> PrescriptionInput {
        guard data.count <= ImageFile.maxFileBytes else {
            throw IntakeError(
                "\(path): \(data.count) bytes: too large to be a ribbit prescription; \(whatItIs) (crop a large photo to the code); the prescription was not used"
            )
        }
        if ImageFile.format(of: data) != nil {
            return PrescriptionInput(
                payload: try utf8(try prescriptionCode(in: data, path: path), path: path, what: "the ribbit QR code's text"), path: path,
                kind: "a QR code")
        }
        if ["png", "jpg", "jpeg"].contains((path as NSString).pathExtension.lowercased()) {
            throw IntakeError(
                "\(path): not a PNG or JPEG image (its first bytes are not an image header), so not a ribbit prescription; \(whatItIs); "
                    + "the prescription was not used")
        }
        // Anything else must at least start like a prescription: "not a ribbit prescription" helps
        // where the parser's size limit or first-line rule would not (README.md, a PDF, a WAV).
        guard data.starts(with: Array("RIBBIT-RX".utf8)) else {
            throw IntakeError("\(path): not a ribbit prescription; \(whatItIs); the prescription was not used")
        }
        return PrescriptionInput(payload: try utf8(data, path: path, what: "the prescription"), path: path, kind: "a text file")
    }

    /// The text, when it is UTF-8: a byte that is not is refused (never quietly replaced by
    /// U+FFFD, which would then parse, store and play as if it had been written so).
    static func utf8(_ bytes: Data, path: String, what: String) throws(IntakeError) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let offset = SettingsText.firstInvalidUTF8Offset(bytes) ?? 0
        let line = bytes.prefix(offset).count(where: { $0 == 0x0A }) + 1
        throw IntakeError(
            "\(path): line \(line): \(what) is not UTF-8 text (byte \(offset + 1) is 0x\(String(bytes[bytes.startIndex + offset], radix: 16, uppercase: true))); "
                + "save it as UTF-8; the prescription was not used")
    }

    /// Where a parse error points: the file, or the code inside the picture.
    var errorPrefix: String { kind == "a QR code" ? "\(path): the ribbit QR code: " : "\(path): " }

    /// The one ribbit prescription payload in an image; other QR codes are ignored.
    private static func prescriptionCode(in data: Data, path: String) throws(IntakeError) -> Data {
        let image: GreyImage
        let size: (width: Int, height: Int)
        // Reduced as it is decoded: no more pixels than the decoder will ever scan.
        do { (image, size) = (try ImageFile.decode(data, reducedTo: QRDecoder.maxScanPixels), try ImageFile.size(of: data)) } catch {
            throw IntakeError("\(path): \(error); the prescription was not used")
        }
        let isRibbit: @Sendable (Data) -> Bool = { payload in payload.starts(with: Array("RIBBIT-RX".utf8)) }
        // zbar's matching of finder patterns grows faster than the picture: one tiled with
        // finder-like squares held a single 6 MP scan for 18 s. So the scan runs on its own thread,
        // whose processor time is read every 0.1 s, and the command gives up once it has used
        // qrScanLimitSeconds of it; exiting ends the thread.
        final class Found: @unchecked Sendable {
            var codes = [Data]()
            /// The scan thread's processor-time clock; nil when the system gives none (then
            /// only the clock on the wall bounds the scan).
            var clock: clockid_t?
        }
        let found = Found()
        let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        Thread {
            var clock = clockid_t()
            if pthread_getcpuclockid(pthread_self(), &clock) == 0 { found.clock = clock }
            started.signal()
            found.codes = QRDecoder.payloads(in: image, wanted: isRibbit)
            finished.signal()
        }.start()
        started.wait()
        let wallDeadline = DispatchTime.now() + qrScanWallLimitSeconds
        while finished.wait(timeout: .now() + 0.1) == .timedOut {
            // After the thread ends its clock is gone (clock_gettime fails): the wait then succeeds.
            var used = timespec()
            let cpuSeconds =
                found.clock.map { clock_gettime($0, &used) == 0 ? Double(used.tv_sec) + Double(used.tv_nsec) / 1e9 : 0 } ?? 0
            guard cpuSeconds < Double(qrScanLimitSeconds) else {
                throw IntakeError(
                    "\(path): looking for QR codes in the picture took over \(qrScanLimitSeconds) s of processor time; crop it to the code; "
                        + "the prescription was not used")
            }
            guard DispatchTime.now() < wallDeadline else {
                throw IntakeError(
                    "\(path): looking for QR codes in the picture took over \(Int(qrScanWallLimitSeconds)) s (the computer is busy); "
                        + "crop it to the code, or try again; the prescription was not used")
            }
        }
        let codes = found.codes
        let ribbit = codes.filter(isRibbit)
        switch ribbit.count {
        case 1: return ribbit[0]
        case 0 where codes.isEmpty:
            throw IntakeError(
                "\(path): no QR code found in the \(size.width) x \(size.height) image; photograph the code straight on, "
                    + "filling a good part of the picture, in even light")
        case 0:
            let start = TerminalText.escaped(String(decoding: codes[0].prefix(24), as: UTF8.self))
            throw IntakeError(
                "\(path): the QR code there is not a ribbit prescription (it starts '\(start)'); the prescription was not used")
        default:
            throw IntakeError("\(path): the image holds \(ribbit.count) different ribbit prescriptions; crop it to the one you want")
        }
    }
}
