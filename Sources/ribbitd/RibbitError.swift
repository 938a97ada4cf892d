import ArgumentParser
import Foundation
import RibbitControl
import RibbitIntake

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
    /// Try again (EX_TEMPFAIL): the daemon ended for its upgraded version.
    static func temporaryFailure(_ message: String) -> RibbitError { RibbitError(message: message, exitCode: ExitCode(75)) }
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

extension RibbitError {
    /// A request this command was about to send that cannot be (EX_USAGE): a value given on
    /// the command line the protocol refuses, in its words.
    init(_ error: RequestError) { self = .usage(error.description) }
}
