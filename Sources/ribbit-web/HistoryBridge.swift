import Dispatch
import Foundation
import RibbitQR
import RibbitStore

/// The prescription history for the Prescriptions screen, read and changed as `ribbitd list`,
/// `remove` and `export` do it (the same library calls). SQLite blocks, so every call runs on a
/// serial queue of its own, never on the server's threads; the history is opened per call, so
/// the page always shows what the daemon and the commands last wrote.
final class HistoryBridge: Sendable {
    let storePath: String
    private let queue = DispatchQueue(label: "ribbit-web.history")

    init(storePath: String) { self.storePath = storePath }

    enum Failure: Error {
        /// No such entry (404).
        case notFound(String)
        /// The history refused, as the command does (409).
        case refused(String)
        /// The history cannot be opened or read (503).
        case unavailable(String)
    }

    enum Download {
        case rx, png
    }

    /// `ribbitd list --json`.
    func list() async -> Result<[HistoryEntry], Failure> {
        await run { store in
            do { return .success(try HistoryEntry.list(store)) } catch {
                return .failure(.unavailable("cannot read the history \(store.path) (\(error))"))
            }
        }
    }

    /// `ribbitd remove ID`: never the active one, nor the one a trial returns to.
    func remove(id: Int64) async -> Result<Void, Failure> {
        await run { store in
            do {
                guard try store.find(String(id)) != nil else {
                    return .failure(.notFound("no prescription \(id) in the history; `ribbitd list` shows them"))
                }
                try store.remove(id: id)
                return .success(())
            } catch {
                return .failure(.refused("\(error); nothing changed"))
            }
        }
    }

    /// `ribbitd export ID -o FILE.rx|FILE.png`: the stored bytes, or their QR code.
    func export(id: Int64, as kind: Download) async -> Result<(record: PrescriptionStore.Record, bytes: Data), Failure> {
        await run { store in
            guard let record = try? store.find(String(id)), record.id == id else {
                return .failure(.notFound("no prescription '\(id)' in the history; `ribbitd list` shows them"))
            }
            do {
                let payload = Data(try record.intactPayload().utf8)
                return .success((record, kind == .png ? try QRCode.checkedPNG(payload).png : payload))
            } catch {
                return .failure(.refused("\(error); nothing was written"))
            }
        }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (PrescriptionStore) -> Result<T, Failure>) async -> Result<T, Failure> {
        await withCheckedContinuation { continuation in
            queue.async { [storePath] in
                do {
                    let (store, recovery) = try PrescriptionStore.openRecovering(path: storePath)
                    if let recovery { FileHandle.standardError.write(Data("ribbit-web: \(recovery)\n".utf8)) }
                    continuation.resume(returning: body(store))
                } catch {
                    continuation.resume(
                        returning: .failure(.unavailable("cannot open the prescription history \(storePath) (\(error))")))
                }
            }
        }
    }
}
