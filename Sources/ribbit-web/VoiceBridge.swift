import Dispatch
import Foundation
import RibbitStore

/// The voice exercises' store (children, sessions, events in voice.sqlite). SQLite blocks, so
/// every call runs on a serial queue of its own, never on the server's threads; the store is
/// opened per call like the other bridges, so the page shows what was last written.
final class VoiceBridge: Sendable {
    let storePath: String
    private let queue = DispatchQueue(label: "ribbit-web.voice-store")

    init(storePath: String) { self.storePath = storePath }

    /// The store's one-line errors: "no child ..." / "no voice session ..." are 404, bad input
    /// 400-style refusals (409 as the other screens answer a refusal), an unopenable file 503.
    func run<T: Sendable>(_ body: @escaping @Sendable (VoiceStore) throws -> T) async -> Result<T, HistoryBridge.Failure> {
        await withCheckedContinuation { continuation in
            queue.async { [storePath] in
                let store: VoiceStore
                do { store = try VoiceStore(path: storePath) } catch {
                    continuation.resume(returning: .failure(.unavailable("cannot open the voice exercises' store \(storePath) (\(error))")))
                    return
                }
                do { continuation.resume(returning: .success(try body(store))) } catch {
                    let message = "\(error)"
                    continuation.resume(returning: .failure(message.hasPrefix("no ") ? .notFound(message) : .refused(message)))
                }
            }
        }
    }
}
