import ArgumentParser
import Foundation
import RibbitControl
import RibbitSettings
import RibbitSignature

struct RxTrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust", abstract: "Trust an audiologist's public key: prescriptions they sign show as theirs.",
        discussion: "Copies it to $XDG_CONFIG_HOME/ribbit/trusted/KEYID.pub, where `load`, `show` and the daemon look.")

    @Argument(help: ArgumentHelp("The audiologist's NAME.pub.", valueName: "PUBKEY"), completion: .file(extensions: ["pub"]))
    var key: String

    func run() throws {
        let text = try readKeyFile(key, what: "the audiologist's NAME.pub")
        let publicKey: PrescriptionSignature.PublicKey
        do { publicKey = try .parse(text) } catch { throw RibbitError.data("\(key): \(error)") }
        let directory = RibbitPaths().trustedKeysDirectory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(publicKey.fileText.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(publicKey.keyID).pub"), options: .atomic)
        } catch { throw RibbitError.cannotCreate("cannot write in \(directory) (\(error))") }
        print("trusting \(publicKey.name), key id \(publicKey.keyID)")
    }
}
