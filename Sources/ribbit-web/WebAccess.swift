import Foundation
import Glibc

/// Who may use the web app. A TCP connection to 127.0.0.1 says nothing about which local user
/// made it, so, as Jupyter does, the web app makes a random access token at each start and only
/// the wearer can read it (the file `web-token`, 0600 in the 0700 runtime directory, and the
/// link `ribbitd web` prints). Opening any path with `?token=` and the right token gives the
/// browser a session cookie; every other request needs that cookie. After 5 wrong tokens the
/// token is locked out until ribbit-web restarts.
///
/// On a LAN the token is a one-time pairing code: the browser that uses it is paired, and a new
/// code replaces it at once (`onNewToken` writes the file and prints the next link), so a link
/// seen over a shoulder or left in a phone's history pairs nothing.
final class WebAccess: @unchecked Sendable {
    static let maxWrongTokens = 5
    static let maxSessions = 64
    static let cookieName = "ribbit_session"

    let oneTime: Bool
    private let onNewToken: @Sendable (String) -> Void
    private let lock = NSLock()
    private var current: String
    private var sessions: [String] = []
    private var wrongTokens = 0

    init(
        token: String = WebAccess.randomBase64URL(), oneTime: Bool = false, onNewToken: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.current = token
        self.oneTime = oneTime
        self.onNewToken = onNewToken
    }

    /// The token (pairing code) that logs in now.
    var token: String {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    enum Login: Equatable {
        /// The new session's cookie value.
        case session(String)
        case wrongToken
        case lockedOut
    }

    func logIn(with given: String) -> Login {
        lock.lock()
        guard wrongTokens < Self.maxWrongTokens else {
            lock.unlock()
            return .lockedOut
        }
        guard CSRFToken.matches(given, current) else {
            wrongTokens += 1
            lock.unlock()
            return wrongTokens < Self.maxWrongTokens ? .wrongToken : .lockedOut
        }
        let session = Self.randomBase64URL()
        sessions.append(session)
        if sessions.count > Self.maxSessions { sessions.removeFirst() }
        let next = oneTime ? Self.randomBase64URL() : nil
        if let next { current = next }
        lock.unlock()
        if let next { onNewToken(next) }
        return .session(session)
    }

    /// Whether the request's Cookie header holds a live session; every session is compared, in
    /// constant time each, so the time says nothing about which or how much matched.
    func isSession(cookieHeader: String?) -> Bool {
        guard let value = Self.cookie(Self.cookieName, in: cookieHeader) else { return false }
        lock.lock()
        defer { lock.unlock() }
        var found = false
        for session in sessions where CSRFToken.matches(value, session) { found = true }
        return found
    }

    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Secure over HTTPS, so the browser never sends it over plain HTTP.
    static func setCookie(_ session: String, secure: Bool = false) -> String {
        "\(cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// 32 bytes from the system's generator (getrandom on Linux), base64url without padding.
    static func randomBase64URL() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A file only this user may read, in a directory only this user may enter: the personal link
/// (`web-token` in the runtime directory, for `ribbitd web --url`) and the HTTPS key.
enum PrivateFile {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Creates the 0700 directory if missing (and its parents), refusing one that is not this
    /// user's with mode 0700, or a symbolic link, and writes the file 0600 without following a
    /// link, atomically.
    static func write(_ text: String, to path: String) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0
        else { throw Failure(description: "\(directory) is not a directory of this user's with mode 0700; move it away") }
        let temporary = path + ".partial"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = Glibc.write(fd, bytes, bytes.count)
        fchmod(fd, 0o600)
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot write \(path): \(problem)")
        }
    }

    /// Removes the file if it still holds `text` (another ribbit-web may have replaced it).
    static func remove(_ path: String, ifHolding text: String) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        close(fd)
        if count > 0, String(decoding: buffer[0..<count], as: UTF8.self) == text { unlink(path) }
    }
}
