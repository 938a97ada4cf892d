import Glibc
import RibbitAudioLink

/// ribbit-audio: the process that holds ribbit's JACK client and its real-time thread. Started
/// by `ribbitd run` with the link on descriptor 3; not meant to be run by hand.
///
///     ribbit-audio --link-version N --client-name NAME [--input PORT]... [--output PORT]... [--no-connect]
///                  [--jack-messages] [--wisdom FILE]
struct AudioOptions {
    var clientName = "ribbit"
    var inputs: [String]?
    var outputs: [String]?
    var connect = true
    var showLibraryMessages = false
    /// FFTW's wisdom file: read before planning, written when planning learnt something.
    var wisdom: String?

    init?(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--client-name": guard let value = rest.popFirst() else { return nil }; clientName = value
            case "--input": guard let value = rest.popFirst() else { return nil }; inputs = (inputs ?? []) + [value]
            case "--output": guard let value = rest.popFirst() else { return nil }; outputs = (outputs ?? []) + [value]
            case "--no-connect": connect = false
            case "--jack-messages": showLibraryMessages = true
            case "--wisdom": guard let value = rest.popFirst() else { return nil }; wisdom = value
            // Read before these options (below): a daemon of another version may pass others.
            case "--link-version": guard rest.popFirst().flatMap({ Int($0) }) != nil else { return nil }
            default: return nil
            }
        }
    }
}

/// The link's descriptor, as `ribbitd run` passes it.
let linkDescriptor: Int32 = 3

signal(SIGPIPE, SIG_IGN)
// SIGTERM/SIGINT (systemd's stop, a Ctrl-C) are the daemon's to handle: it stops this process
// through the link and waits for it. If the daemon dies, the link closes and this process ends
// (under systemd, stopping the unit also ends every process in it).
var blocked = sigset_t()
sigemptyset(&blocked)
sigaddset(&blocked, SIGINT)
sigaddset(&blocked, SIGTERM)
pthread_sigmask(SIG_BLOCK, &blocked, nil)
var info = stat()
let arguments = Array(CommandLine.arguments.dropFirst())
/// The link version the daemon gave, read before any other option: a daemon of another version
/// may pass options this build does not know, and must still hear why it cannot go on.
let linkVersion = arguments.firstIndex(of: "--link-version").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil }
if linkVersion != AudioMessage.linkVersion, fstat(linkDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
    // A daemon started before an upgrade, with this newer (or older) audio process beside it.
    let link = AudioLinkSocket(fd: linkDescriptor)
    let daemon = linkVersion.map { "version \($0)" } ?? "an older version"
    link.send(
        .failed(
            "ribbit-audio speaks link version \(AudioMessage.linkVersion) and this ribbitd \(daemon): ribbit was upgraded while ribbitd ran; restart ribbitd"
        ))
    link.flush()
    exit(1)
}
guard let options = AudioOptions(arguments), fstat(linkDescriptor, &info) == 0,
    info.st_mode & S_IFMT == S_IFSOCK
else {
    let message = Array("ribbit-audio: error: this is ribbitd's audio process; start the hearing aid with `ribbitd run`\n".utf8)
    _ = write(2, message, message.count)
    exit(64)
}
exit(AudioHost(link: AudioLinkSocket(fd: linkDescriptor), options: options).run())
