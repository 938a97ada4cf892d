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
}
