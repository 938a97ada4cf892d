import Foundation

/// The token every state-changing request carries in `X-CSRF-Token`: 32 random bytes from the
/// system's generator (getrandom on Linux), new each time the web app starts, given to the page in a meta tag. A page of another
/// site cannot read it (same-origin policy, no CORS headers), so it cannot make those requests.
enum CSRFToken {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.map { String(format: "%02x", $0) }.joined()
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
}
