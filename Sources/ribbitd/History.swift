import Foundation
import RibbitControl
import RibbitSettings
import RibbitStore

/// The prescription history, for the commands that read or change it without the daemon. A
/// damaged or empty file is moved aside and a new history started (taking back the last active
/// prescription from its copy), as the daemon does; that is said on stderr, once.
func openStore(_ paths: RibbitPaths) throws(RibbitError) -> PrescriptionStore {
    do {
        let (store, recovery) = try PrescriptionStore.openRecovering(path: paths.storePath)
        if let recovery { FileHandle.standardError.write(Data("ribbitd: \(recovery)\n".utf8)) }
        return store
    } catch {
        throw .cannotCreate("cannot open the prescription history \(paths.storePath) (\(error))")
    }
}

/// The history's lock, for a command that found no daemon at its socket and is about to change
/// the history itself. A daemon that holds it listens elsewhere (another XDG_RUNTIME_DIR):
/// writing behind its back would make the history disagree with what it plays, so refuse.
func lockHistory(_ paths: RibbitPaths) throws(RibbitError) -> HistoryLock {
    do { return try HistoryLock(dataDirectory: paths.dataDirectory, waitSeconds: 2) } catch {
        switch error {
        case .held(let holder):
            guard let pid = holder.pid else {
                throw .unavailable("another ribbitd command is changing the prescription history; try again; nothing changed")
            }
            let hint =
                holder.socketPath.map { socket in
                    let directory = ((socket as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
                    return socket.hasSuffix("/ribbit/ribbitd.sock")
                        ? "; run with XDG_RUNTIME_DIR=\(directory)" : "; it listens on \(socket)"
                } ?? ""
            throw .unavailable("a ribbitd is running (pid \(pid)) but not at \(paths.socketPath)\(hint); nothing changed")
        case .failed(let message):
            if let why = DirectoryCheck.unwritable(paths.dataDirectory) {
                throw .cannotCreate("cannot store it: \(paths.dataDirectory) cannot be written (\(why)); nothing changed")
            }
            throw .cannotCreate("\(message); nothing changed")
        }
    }
}
