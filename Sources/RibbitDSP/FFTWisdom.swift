import CFFTW
import Glibc

/// FFTW's wisdom (the plans FFTW_MEASURE found, per length and direction) as text, so the next
/// process plans the same lengths in 0.2 ms instead of 50-400 ms. No I/O here: the wisdom file
/// (`$XDG_CACHE_HOME/ribbit/fftw-wisdom`) is read and written by `WisdomFile`.
///
/// The text of a file is a header line, the FFTW build's version on the next, then FFTW's own
/// wisdom: wisdom from another build is refused by the version line before FFTW sees it.
public enum FFTWisdom {
    /// The header of the file's text.
    public static let header = "ribbit fftw wisdom 1"

    /// The FFTW build whose wisdom this process makes ("fftw-3.3.10-sse2-avx").
    public static var version: String { String(cString: ribbit_fftwf_version()) }

    /// All the wisdom this process has (imported and learnt), in FFTW's text form.
    public static func export() -> String {
        RealFFT.planner.withLock { _ in
            guard let text = fftwf_export_wisdom_to_string() else { return "" }
            defer { Glibc.free(text) }
            return String(cString: text)
        }
    }

    /// Adds FFTW's text form to this process's wisdom; false (and nothing added: FFTW keeps
    /// what it had) when FFTW cannot read it.
    @discardableResult
    public static func `import`(_ text: String) -> Bool {
        RealFFT.planner.withLock { _ in fftwf_import_wisdom_from_string(text) == 1 }
    }

    /// Forgets all wisdom (for the tests: a process that starts without any).
    public static func forget() {
        RealFFT.planner.withLock { _ in fftwf_forget_wisdom() }
    }

    /// The file's text for this process's wisdom.
    public static func fileText() -> String { "\(header)\n\(version)\n\(export())" }

    /// What reading a file's text did.
    public enum Reading: Equatable, Sendable {
        case imported
        /// Not a wisdom file, cut short or garbled: nothing imported.
        case damaged
        /// Made by another FFTW build (the version it names): nothing imported.
        case otherVersion(String)
    }

    /// Imports a file's text when it is whole and from this FFTW build.
    public static func importFile(_ text: String) -> Reading {
        let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0] == header else { return .damaged }
        guard lines[1] == version else { return .otherVersion(String(lines[1])) }
        return `import`(String(lines[2])) ? .imported : .damaged
    }
}
