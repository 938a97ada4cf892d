import CJack

/// What jack_client_open's status bits mean, in the wearer's words, most specific first.
/// jackd2 answers a name already taken under JackUseExactName with JackFailure|JackServerError
/// (0x21), not JackNameNotUnique; a missing server is JackFailure|JackServerFailed (0x11).
public enum JackOpenStatus {
    public static func openFailure(_ bits: UInt32, clientName: String) -> String {
        let has = { (flag: jack_status_t) in bits & flag.rawValue != 0 }
        let what: String
        if has(JackServerFailed) {
            what = "no JACK server is running (or it cannot be reached); start jackd or PipeWire's JACK (pw-jack)"
        } else if has(JackVersionError) {
            what = "the JACK server speaks another protocol version than this libjack; install matching JACK packages and restart the server"
        } else if has(JackShmFailure) {
            what = "cannot use JACK's shared memory (is the server another user's?)"
        } else if has(JackNameNotUnique) || has(JackServerError) {
            what = "the JACK server refused the client name '\(clientName)': a client of that name is running already (another ribbitd? `jack_lsp` lists the clients; --client-name picks another name)"
        } else if has(JackInitFailure) || has(JackLoadFailure) {
            what = "the JACK server could not start the client"
        } else {
            what = "JACK refused the client"
        }
        return "\(what) (JACK status 0x\(String(bits, radix: 16)))"
    }
}
