import ArgumentParser
import Foundation
import RibbitSettings
import RibbitSignature

struct RxUntrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "untrust", abstract: "Stop trusting an audiologist's key (after they replaced it, or lost it).",
        discussion: """
            KEY is a key id (from `rx trust` or `rx show`), the NAME.pub you trusted, or the name it carries. \
            Removes $XDG_CONFIG_HOME/ribbit/trusted/KEYID.pub: prescriptions signed with it then show as \
            `signed, unknown key`, and require-signed refuses them. Without KEY it lists the trusted keys.
            """)

    @Argument(help: ArgumentHelp("A key id, a NAME.pub or a name.", valueName: "KEY"), completion: .file(extensions: ["pub"]))
    var key: String?

    func run() throws {
        let directory = RibbitPaths().trustedKeysDirectory
        let trusted = Self.trustedKeys(in: directory)
        guard let key else {
            if trusted.isEmpty { print("no trusted keys; `ribbitd rx trust NAME.pub` adds one") }
            for (file, publicKey) in trusted { print("\(publicKey.keyID)  \(publicKey.name)  (\(directory)/\(file))") }
            return
        }
        // A .pub file names its key exactly; otherwise a key id or a signer's name.
        let wanted: [(file: String, key: PrescriptionSignature.PublicKey)]
        if key.hasSuffix(".pub"), FileManager.default.fileExists(atPath: key) {
            let text = try readKeyFile(key, what: "the NAME.pub you trusted, its key id or its name")
            let publicKey: PrescriptionSignature.PublicKey
            do { publicKey = try .parse(text) } catch { throw RibbitError.data("\(key): \(error)") }
            wanted = trusted.filter { $0.key.keyID == publicKey.keyID }
        } else {
            wanted = trusted.filter { $0.key.keyID == key.lowercased() || $0.key.name == key }
        }
        let known = trusted.map { "\($0.key.keyID) (\($0.key.name))" }.joined(separator: ", ")
        guard !wanted.isEmpty else {
            throw RibbitError.data("no trusted key matches '\(key)'; trusted: \(known.isEmpty ? "none" : known)")
        }
        guard wanted.count == 1 else {
            throw RibbitError.usage("'\(key)' names \(wanted.count) trusted keys; give the key id: \(known)")
        }
        let (file, publicKey) = wanted[0]
        guard unlink("\(directory)/\(file)") == 0 else {
            throw RibbitError.cannotCreate("\(directory)/\(file): cannot remove it (\(String(cString: strerror(errno))))")
        }
        print("no longer trusting \(publicKey.name), key id \(publicKey.keyID)")
    }

    /// The trusted keys by file name, as `load` reads them (unreadable files left out).
    static func trustedKeys(in directory: String) -> [(file: String, key: PrescriptionSignature.PublicKey)] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".pub") }.sorted().compactMap { file in
            (try? BoundedFile.read(directory + "/" + file, maxBytes: BoundedFile.keyOrConfigMaxBytes))
                .flatMap { try? PrescriptionSignature.PublicKey.parse(String(decoding: $0, as: UTF8.self)) }
                .map { (file, $0) }
        }
    }
}
