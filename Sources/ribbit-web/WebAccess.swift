import Foundation

/// Who may use the web app. A TCP connection to 127.0.0.1 says nothing about which local user
/// made it, so, as Jupyter does, the web app makes a random access token at each start that only
/// the wearer can read (the file `web-token`, 0600 in the 0700 runtime directory, and the link
/// `ribbitd web` prints). The page (/session.js) trades the token once (`POST /api/login`) for a
/// session secret and keeps that in its origin's localStorage, which no other origin can read,
/// a page on another port of this machine included (cookies, by contrast, are shared by every
/// port of a host). Every request then carries the secret in `X-Ribbit-Session`; a WebSocket
/// carries it in its protocol list; a download or the printable report, which the browser opens
/// as a plain link, gets a one-use link instead. Nothing the browser sends by itself, such as a
/// cookie, authorises anything.
///
/// On a LAN the token is a one-time pairing code: the browser that uses it is paired, and a new
/// code replaces it at once (`onNewToken` writes the file and prints the next link), so a link
/// seen over a shoulder or left in a phone's history pairs nothing.
///
/// Wrong tokens slow down whoever sends them (GuessThrottle, per user of this machine or per
/// address), never anyone else: the right token always works for the wearer.
final class WebAccess: @unchecked Sendable {
    static let maxSessions = 64
    /// A one-use link lives this long: the page asks for it on a click and opens it at once.
    static let linkSeconds = 60.0
    static let maxLinks = 64

    let oneTime: Bool
    private let onNewToken: @Sendable (String) -> Void
    private let lock = NSLock()
    private var current: String
    private var sessions: [String] = []
    private var throttle = GuessThrottle()
    /// One-use links: the secret, the path it opens, and until when (monotonic seconds).
    private var links: [(secret: String, path: String, until: Double)] = []

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
        /// The new session's secret.
        case session(String)
        case wrongToken
        /// This guesser sent too many wrong tokens: nothing is checked for it for this long.
        case wait(seconds: Int)
    }

    /// `guesser`: who sent it (PeerIdentity). A guesser told to wait is not even checked, so the
    /// wait bounds how fast it can guess; the others are checked as usual.
    func logIn(with given: String, from guesser: String, now: Double = MonotonicClock.seconds()) -> Login {
        lock.lock()
        if let seconds = throttle.secondsToWait(guesser, now: now) {
            lock.unlock()
            return .wait(seconds: seconds)
        }
        guard Self.matches(given, current) else {
            throttle.wrong(guesser, now: now)
            lock.unlock()
            return .wrongToken
        }
        throttle.forget(guesser)
        let session = Self.randomBase64URL()
        sessions.append(session)
        if sessions.count > Self.maxSessions { sessions.removeFirst() }
        let next = oneTime ? Self.randomBase64URL() : nil
        if let next { current = next }
        lock.unlock()
        if let next { onNewToken(next) }
        return .session(session)
    }

    /// Whether `given` is a live session's secret; every session is compared, in constant time
    /// each, so the time says nothing about which or how much matched.
    func isSession(_ given: String?) -> Bool {
        guard let given else { return false }
        lock.lock()
        defer { lock.unlock() }
        var found = false
        for session in sessions where Self.matches(given, session) { found = true }
        return found
    }

    /// A one-use link to `path` (for a logged-in page): `path?link=SECRET`, good for one GET of
    /// that path within `linkSeconds`.
    func makeLink(to path: String, now: Double = MonotonicClock.seconds()) -> String {
        let secret = Self.randomBase64URL()
        lock.lock()
        links.removeAll { $0.until < now }
        links.append((secret, path, now + Self.linkSeconds))
        if links.count > Self.maxLinks { links.removeFirst() }
        lock.unlock()
        return path + "?link=" + secret
    }

    /// Whether `given` is a live link to `path`; it is used up either way it matched.
    func useLink(_ given: String, to path: String, now: Double = MonotonicClock.seconds()) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        var found: Int?
        for (index, link) in links.enumerated() where Self.matches(given, link.secret) { found = index }
        guard let found else { return false }
        let link = links.remove(at: found)
        return link.path == path && link.until >= now
    }

    /// Compares in time independent of where they differ.
    static func matches(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// 32 bytes from the system's generator (getrandom on Linux), base64url without padding.
    static func randomBase64URL() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Wrong tokens per guesser (a user of this machine, or an address: PeerIdentity). A few cost
/// nothing (a mistyped or old link); after `freeWrongGuesses` the guesser waits 10 s, then 20,
/// 40 ... up to 5 minutes between guesses, and whatever it sends meanwhile is refused unchecked. A guesser's count is forgotten after an hour without a wrong token, or when it
/// sends the right one. Guessing the 256-bit token is hopeless anyway; this keeps a guesser from
/// costing the machine anything, and unlike a lock for everybody it never stops the wearer.
struct GuessThrottle {
    static let freeWrongGuesses = 5
    static let firstWaitSeconds = 10.0
    static let maxWaitSeconds = 300.0
    static let forgetSeconds = 3600.0
    /// Beyond this many guessers the one whose wait ends first is forgotten (a LAN of rotating addresses).
    static let maxGuessers = 1024

    private var guessers: [String: (wrong: Int, lastWrong: Double, nextTry: Double)] = [:]

    /// Whole seconds until `guesser` may try again; nil: now.
    func secondsToWait(_ guesser: String, now: Double) -> Int? {
        guard let entry = guessers[guesser], now - entry.lastWrong < Self.forgetSeconds, entry.nextTry > now else { return nil }
        return Int((entry.nextTry - now).rounded(.up))
    }

    mutating func wrong(_ guesser: String, now: Double) {
        var entry = guessers[guesser] ?? (0, now, now)
        if now - entry.lastWrong >= Self.forgetSeconds { entry.wrong = 0 }
        entry.wrong += 1
        entry.lastWrong = now
        let over = entry.wrong - Self.freeWrongGuesses
        entry.nextTry = over < 0 ? now : now + min(Self.maxWaitSeconds, Self.firstWaitSeconds * pow(2, Double(over)))
        guessers[guesser] = entry
        if guessers.count > Self.maxGuessers, let first = guessers.min(by: { $0.value.nextTry < $1.value.nextTry })?.key {
            guessers[first] = nil
        }
    }

    mutating func forget(_ guesser: String) { guessers[guesser] = nil }
}

/// CLOCK_MONOTONIC in seconds: waits and link lifetimes must not jump with the wall clock.
enum MonotonicClock {
    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
