import Glibc
import NIOCore

/// Who is at the other end of a connection, for GuessThrottle. Every local user connects from
/// 127.0.0.1, so an address alone would make the wearer pay for another user's guesses. A
/// connection from this machine is found in the kernel's socket table (/proc/net/tcp and tcp6,
/// as `ss -tne` and identd read it): the client's socket is the row whose local end is the
/// peer and whose remote end is the web app, and the row names its owner's uid. Anything else
/// (a phone on the LAN) is known by its address, an IPv6 one by its /64 (the part a host
/// cannot change at will).
enum PeerIdentity {
    static func of(remote: SocketAddress?, local: SocketAddress?) -> String {
        guard let remote, let peer = Endpoint(remote) else { return "unknown" }
        if let local = local.flatMap(Endpoint.init), let uid = localUser(peer: peer, server: local) { return "user \(uid)" }
        if peer.bytes.count == 16 {
            let groups = stride(from: 0, to: 8, by: 2).map { String(Int(peer.bytes[$0]) << 8 | Int(peer.bytes[$0 + 1]), radix: 16) }
            return "address " + groups.joined(separator: ":") + "::/64"
        }
        return "address " + peer.bytes.map(String.init).joined(separator: ".")
    }

    /// An IP address (4 or 16 bytes, network order) and a port.
    struct Endpoint: Equatable {
        var bytes: [UInt8]
        var port: Int

        init?(_ address: SocketAddress) {
            guard let port = address.port else { return nil }
            switch address {
            case .v4(let v4): bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            case .v6(let v6): bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            default: return nil
            }
            self.port = port
        }

        init(bytes: [UInt8], port: Int) {
            self.bytes = bytes
            self.port = port
        }

        /// `0100007F:1F90` as /proc/net/tcp writes it: the address as 32-bit words in host
        /// order (so their bytes, stored back in host order, are the address's), the port in hex.
        init?(proc text: Substring) {
            let parts = text.split(separator: ":")
            guard parts.count == 2, parts[0].count == 8 || parts[0].count == 32, let port = Int(parts[1], radix: 16) else { return nil }
            var bytes: [UInt8] = []
            var rest = parts[0]
            while !rest.isEmpty {
                guard let word = UInt32(rest.prefix(8), radix: 16) else { return nil }
                bytes += withUnsafeBytes(of: word) { Array($0) }
                rest = rest.dropFirst(8)
            }
            self.init(bytes: bytes, port: port)
        }
    }

    /// The uid owning the socket whose local end is `peer` and remote end `server`, if it is on this machine.
    static func localUser(peer: Endpoint, server: Endpoint) -> Int? {
        for file in peer.bytes.count == 4 ? ["/proc/net/tcp"] : ["/proc/net/tcp6"] {
            guard let table = read(file) else { continue }
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 7, Endpoint(proc: fields[1]) == peer, Endpoint(proc: fields[2]) == server else { continue }
                return Int(fields[7])
            }
        }
        return nil
    }

    /// A /proc file (its size reads as 0, so it is read to its end).
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
