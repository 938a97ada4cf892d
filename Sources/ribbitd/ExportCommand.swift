import ArgumentParser
import Foundation
import RibbitControl
import RibbitImage
import RibbitQR
import RibbitSettings
import RibbitSystem

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write a prescription from the history as .rx text or as a .png QR code.",
        discussion: "The exact stored bytes, signature included, so a signed prescription stays signed.")

    @Argument(help: ArgumentHelp("A history id or name.", valueName: "ID|NAME"), completion: .custom(HistoryCompletion.names))
    var selector: String

    @Option(name: .shortAndLong, help: ArgumentHelp("FILE.rx or FILE.png.", valueName: "FILE"), completion: .exportFile)
    var output: String

    func run() throws {
        let store = try openStore(RibbitPaths())
        guard let record = try? store.find(selector) else {
            throw RibbitError.data("no prescription '\(selector)' in the history; `ribbitd list` shows them")
        }
        let payload: Data
        do { payload = Data(try record.intactPayload().utf8) } catch { throw RibbitError.data("\(error); nothing was written") }
        let bytes: Data
        do { bytes = output.lowercased().hasSuffix(".png") ? try QRCode.checkedPNG(payload).png : payload } catch {
            throw RibbitError.cannotCreate("\(output): cannot write (\(error))")
        }
        do { try AtomicFile.write([UInt8](bytes), to: output) } catch { throw RibbitError.cannotCreate(error.description) }
        print("wrote \(output): \(record.name) (\(record.environment))")
    }
}
