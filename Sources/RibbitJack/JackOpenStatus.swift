import CJack

/// What jack_client_open's status bits mean, in the wearer's words.
///
/// Every bit that names a cause is reported, most specific first, with what to do; the raw
/// bits follow in hex. JackFailure (0x01) alone only says "it failed", so it is named only when
/// nothing more specific is set. jackd2 answers a name already taken under JackUseExactName
/// with JackFailure|JackServerError (0x21), not JackNameNotUnique; a missing server is
/// JackFailure|JackServerFailed (0x11).
public enum JackOpenStatus {
    /// One cause jack_client_open can report.
    public enum Problem: Equatable, Sendable, CaseIterable {
        case serverNotFound, versionMismatch, sharedMemory, nameTaken, invalidOption, noSuchClient, loadFailed,
            initFailed, backendFailed, zombie, otherFailure

        /// The status bits that mean this problem.
        var bits: UInt32 {
            switch self {
            case .serverNotFound: JackServerFailed.rawValue
            case .versionMismatch: JackVersionError.rawValue
            case .sharedMemory: JackShmFailure.rawValue
            case .nameTaken: JackNameNotUnique.rawValue | JackServerError.rawValue
            case .invalidOption: JackInvalidOption.rawValue
            case .noSuchClient: JackNoSuchClient.rawValue
            case .loadFailed: JackLoadFailure.rawValue
            case .initFailed: JackInitFailure.rawValue
            case .backendFailed: JackBackendError.rawValue
            case .zombie: JackClientZombie.rawValue
            case .otherFailure: JackFailure.rawValue
            }
        }

        func message(clientName: String) -> String {
            switch self {
            case .serverNotFound:
                "no JACK server is running (or it cannot be reached); start jackd or PipeWire's JACK (pw-jack)"
            case .versionMismatch:
                "the JACK server speaks another protocol version than this libjack; install matching JACK packages and restart the server"
            case .sharedMemory:
                "cannot use JACK's shared memory (is the server another user's, or /dev/shm full?)"
            case .nameTaken:
                "the JACK server refused the client name '\(clientName)': a client of that name is running already (another ribbitd? `jack_lsp` lists the clients; --client-name picks another name)"
            case .invalidOption:
                "libjack refused the open options as invalid (a libjack older or newer than ribbit was built for?)"
            case .noSuchClient:
                "the JACK server knows no client by that name"
            case .loadFailed:
                "the JACK server could not load the client"
            case .initFailed:
                "the JACK server could not initialise the client"
            case .backendFailed:
                "the JACK server's audio backend failed; check the server's log (the sound card may be busy or gone)"
            case .zombie:
                "the JACK server had thrown this client out (too slow); it will be opened again"
            case .otherFailure:
                "JACK refused the client"
            }
        }
    }

    /// The problems the status bits report, most specific first (`otherFailure` only when no
    /// other bit says why).
    public static func problems(_ bits: UInt32) -> [Problem] {
        let found = Problem.allCases.filter { $0 != .otherFailure && bits & $0.bits != 0 }
        return found.isEmpty ? [.otherFailure] : found
    }

    public static func openFailure(_ bits: UInt32, clientName: String) -> String {
        let what = problems(bits).map { $0.message(clientName: clientName) }.joined(separator: "; and ")
        return "\(what) (JACK status 0x\(String(bits, radix: 16)))"
    }
}
