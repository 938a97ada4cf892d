import ArgumentParser
import Foundation
import RibbitAudioFile
import RibbitDSP
import RibbitPrescription

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
    let data: Data
    do {
        data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        throw .noInput("\(path): cannot read the prescription (\(describe(error))); check the path")
    }
    do {
        return try Prescription.parse(data)
    } catch {
        throw .data("\(path): \(error); the prescription was not used")
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
