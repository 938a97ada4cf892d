import Glibc

/// System calls a signal may interrupt (EINTR: a handler ran before the call did anything)
/// are simply made again; the file and socket loops of ribbit go through here, so none
/// forgets (a poll works out its time left itself). Glibc only: the audio process uses it
/// too, never on its real-time thread.
public enum Syscall {
    /// `call`'s result once no signal interrupted it: what it returned, with `errno` as it
    /// set it when that is negative.
    @inline(__always)
    public static func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// As `retrying`, a failure thrown with the call's name and what it was made on.
    @inline(__always)
    public static func checked<Result: BinaryInteger>(_ name: String, _ subject: String, _ call: () -> Result) throws(SyscallError)
        -> Result
    {
        let result = retrying(call)
        guard result >= 0 else { throw SyscallError(call: name, subject: subject, code: errno) }
        return result
    }
}

/// A system call that failed: which, on what, and the system's reason; one line, as
/// "cannot write /path/file: No space left on device (write)".
public struct SyscallError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let subject: String
    public let code: Int32

    public init(call: String, subject: String, code: Int32) {
        self.call = call
        self.subject = subject
        self.code = code
    }

    public var description: String { "cannot \(Self.verb(call)) \(subject): \(String(cString: strerror(code))) (\(call))" }

    /// The user's word for the call.
    private static func verb(_ call: String) -> String {
        switch call {
        case "open", "write", "fsync", "fchmod", "rename", "close": "write"
        case "read", "fstat": "read"
        default: call
        }
    }
}
