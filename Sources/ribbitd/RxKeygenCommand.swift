import ArgumentParser
import Foundation
import RibbitSignature

struct RxKeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make an Ed25519 key pair for signing prescriptions (the audiologist's).",
        discussion: """
            Writes NAME.key (private, mode 0600: keep it to yourself) and NAME.pub (give it to your patients: \
            `ribbitd rx trust NAME.pub`). On a terminal it asks for a passphrase (twice) that protects NAME.key \
            (scrypt and ChaCha20-Poly1305); `rx make --sign` then asks for it. An empty passphrase, \
            --no-passphrase or no terminal leaves the key unprotected; scripts give --passphrase-file FILE.
            """
    )

    @Argument(help: "Your name as patients will see it (\"signed by NAME\").")
    var name: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Directory for the two files.", valueName: "DIR"), completion: .directory)
    var directory = "."

    @Flag(help: "Do not protect the private key with a passphrase.")
    var noPassphrase = false

    @Option(
        help: ArgumentHelp("Protect the key with the first line of FILE (- for standard input).", valueName: "FILE"), completion: .file())
    var passphraseFile: String?

    func validate() throws {
        if noPassphrase && passphraseFile != nil { throw ValidationError("give --no-passphrase or --passphrase-file, not both") }
    }

    func run() throws {
        let file = name.map { $0.isLetter || $0.isNumber ? $0 : "-" }.reduce("") { $0 + String($1) }
        let (privatePath, publicPath) = ("\(directory)/\(file).key", "\(directory)/\(file).pub")
        for path in [privatePath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw RibbitError.cannotCreate("\(path) exists; move it away first (a new key cannot verify what the old one signed)")
        }
        let (passphrase, why) = try choosePassphrase()
        let key = PrescriptionSignature.PrivateKey.generate(name: name)
        let privateText: String
        do { privateText = try passphrase.map { try key.encryptedFileText(passphrase: $0) } ?? key.fileText } catch {
            throw RibbitError(message: "\(error); nothing written", exitCode: ExitCode(70))
        }
        guard Self.createPrivate(privatePath, Data(privateText.utf8)),
            FileManager.default.createFile(atPath: publicPath, contents: Data(key.publicKey.fileText.utf8))
        else { throw RibbitError.cannotCreate("cannot write in \(directory)") }
        print("wrote \(privatePath) (private, \(why)) and \(publicPath) (public), key id \(key.publicKey.keyID)")
    }

    /// The passphrase, or nil, and how the key is kept, in words for the summary.
    private func choosePassphrase() throws(RibbitError) -> (String?, String) {
        if noPassphrase { return (nil, "not protected by a passphrase: --no-passphrase") }
        if let passphraseFile {
            let passphrase = try Passphrase.read(file: passphraseFile)
            guard !passphrase.isEmpty else { throw .usage("\(passphraseFile): the first line is empty; nothing written") }
            return (passphrase, "protected by the passphrase from \(passphraseFile)")
        }
        guard Passphrase.canAsk, let first = try Passphrase.ask("Passphrase for the new key (empty for none): ") else {
            return (nil, "not protected by a passphrase: no terminal to ask on; --passphrase-file FILE sets one")
        }
        if first.isEmpty { return (nil, "not protected by a passphrase: none given") }
        guard try Passphrase.ask("The same passphrase again: ") == first else {
            throw .usage("the two passphrases differ; nothing written")
        }
        return (first, "protected by your passphrase")
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
