import ArgumentParser
import Foundation
import RibbitSignature

struct RxKeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make an Ed25519 key pair for signing prescriptions (the audiologist's).",
        discussion:
            "Writes NAME.key (private, mode 0600: keep it to yourself) and NAME.pub (give it to your patients: `ribbitd rx trust NAME.pub`)."
    )

    @Argument(help: "Your name as patients will see it (\"signed by NAME\").")
    var name: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Directory for the two files.", valueName: "DIR"))
    var directory = "."

    func run() throws {
        let file = name.map { $0.isLetter || $0.isNumber ? $0 : "-" }.reduce("") { $0 + String($1) }
        let (privatePath, publicPath) = ("\(directory)/\(file).key", "\(directory)/\(file).pub")
        for path in [privatePath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw RibbitError.cannotCreate("\(path) exists; move it away first (a new key cannot verify what the old one signed)")
        }
        let key = PrescriptionSignature.PrivateKey.generate(name: name)
        guard Self.createPrivate(privatePath, Data(key.fileText.utf8)),
            FileManager.default.createFile(atPath: publicPath, contents: Data(key.publicKey.fileText.utf8))
        else { throw RibbitError.cannotCreate("cannot write in \(directory)") }
        print("wrote \(privatePath) (private) and \(publicPath) (public), key id \(key.publicKey.keyID)")
    }

    /// Creates the file with mode 0600 from its first byte (never through a symlink, never over
    /// a file): Foundation's createFile writes first and sets the mode after, a moment in which
    /// the private key is readable by anyone the umask lets in.
    private static func createPrivate(_ path: String, _ data: Data) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == data.count && fsync(fd) == 0
    }
}
