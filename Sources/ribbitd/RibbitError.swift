import ArgumentParser
import Foundation
import RibbitAudioFile
import RibbitControl
import RibbitDSP
import RibbitIntake
import RibbitPrescription
import RibbitSettings

/// An error for the user: one line that says what is wrong and what to do, and an exit code
/// in the sysexits(3) convention.
struct RibbitError: Error {
    let message: String
    let exitCode: ExitCode

    static func usage(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(64)) }
    static func data(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(65)) }
    static func noInput(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(66)) }
    static func cannotCreate(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(73)) }
    static func config(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(78)) }
}

/// Reads and checks a prescription file or picture (intake's read, parse, verify and check).
func readPrescription(_ path: String, intake: Intake) throws(RibbitError) -> (input: PrescriptionInput, accepted: Intake.Accepted) {
    let input: PrescriptionInput
    do { input = try PrescriptionInput.read(path) } catch { throw RibbitError(error) }
    do { return (input, try intake.check(input)) } catch { throw RibbitError(error, then: "the prescription was not used") }
}

/// Reads and parses a prescription file or picture, without judging its signature.
func loadPrescription(_ path: String) throws(RibbitError) -> Prescription {
    try readPrescription(path, intake: Intake(trusted: [], requireSigned: false)).accepted.prescription
}

/// The config file (`--config`, or the default one when present), one error for every command.
func loadConfig(_ paths: RibbitPaths, explicitPath: String? = nil) throws(RibbitError) -> DaemonConfig {
    do { return try DaemonConfig.load(explicitPath: explicitPath, paths: paths) } catch {
        throw error.kind == .unreadable ? .noInput(error.description) : .config(error.description)
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

extension RibbitError {
    /// Intake's error with its exit code; `then` says what happened, when the error does not.
    init(_ error: IntakeError, then: String? = nil) {
        let text = then.map { "\(error.description); \($0)" } ?? error.description
        switch error.kind {
        case .unreadable: self = .noInput(text)
        case .invalid: self = .data(text)
        case .storage: self = .cannotCreate(text)
        }
    }
}
