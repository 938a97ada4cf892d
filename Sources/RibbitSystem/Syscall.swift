import Glibc

/// System calls a signal may interrupt (EINTR: a handler ran before the call did anything)
/// are simply made again; every file and socket loop of ribbit goes through here, so none
/// forgets. Glibc only: the audio process uses it too (never on its real-time thread).
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

    /// As `retrying`, but a failure throws, naming the call and what went wrong.
    @inline(__always)
    public static func checked<Result: BinaryInteger>(_ name: StaticString, _ call: () -> Result) throws(SyscallError) -> Result {
        let result = retrying(call)
        guard result >= 0 else { throw SyscallError(call: "\(name)", code: errno) }
        return result
    }
}

/// A failed system call: which, and its errno.
public struct SyscallError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// "read: Bad file descriptor".
    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}
