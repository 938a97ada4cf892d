import Foundation
import Glibc

/// Where the daemon's files live, by the XDG base directory specification.
public struct RibbitPaths: Sendable {
    public let environment: [String: String]
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) { self.environment = environment }

    private var home: String { environment["HOME"] ?? NSHomeDirectory() }

    /// `$XDG_RUNTIME_DIR/ribbit`. Without XDG_RUNTIME_DIR (ssh without pam_systemd, cron), the
    /// directory systemd made for this user, `/run/user/UID/ribbit`, so such a shell reaches the
    /// daemon of the user service; only where there is none, `/tmp/ribbit-UID`. Client and
    /// daemon both refuse a directory that is not this user's with mode 0700, so another user
    /// who creates it first gets nothing.
    public var runtimeDirectory: String {
        if let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty { return dir + "/ribbit" }
        let systemd = "/run/user/\(getuid())"
        var info = stat()
        if lstat(systemd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() { return systemd + "/ribbit" }
        return "/tmp/ribbit-\(getuid())"
    }
    public var socketPath: String { runtimeDirectory + "/ribbitd.sock" }
    /// The running web app's personal link (its URL with the access token), 0600; gone when it stops.
    public var webTokenPath: String { runtimeDirectory + "/web-token" }
    /// `$XDG_STATE_HOME/ribbit` (default ~/.local/state/ribbit): where version 0.0 kept the active prescription.
    public var stateDirectory: String { directory("XDG_STATE_HOME", default: ".local/state") + "/ribbit" }
    /// `$XDG_CONFIG_HOME/ribbit` (default ~/.config/ribbit): ribbitd.conf and trusted/ keys.
    public var configDirectory: String { directory("XDG_CONFIG_HOME", default: ".config") + "/ribbit" }
    public var configFile: String { configDirectory + "/ribbitd.conf" }
    public var trustedKeysDirectory: String { configDirectory + "/trusted" }
    /// The audiologist's private signing keys for the web app's Fitting screen (`rx keygen -d` there).
    public var signingKeysDirectory: String { configDirectory + "/keys" }
    /// `$XDG_DATA_HOME/ribbit` (default ~/.local/share/ribbit): the prescription history.
    public var dataDirectory: String { directory("XDG_DATA_HOME", default: ".local/share") + "/ribbit" }
    public var storePath: String { dataDirectory + "/ribbit.sqlite" }
    /// `$XDG_CACHE_HOME/ribbit` (default ~/.cache/ribbit): FFTW's wisdom for this machine.
    public var cacheDirectory: String { directory("XDG_CACHE_HOME", default: ".cache") + "/ribbit" }

    private func directory(_ variable: String, default relative: String) -> String {
        if let dir = environment[variable], dir.hasPrefix("/") { return dir }
        return home + "/" + relative
    }
}

extension RibbitPaths {
    /// A program installed with ribbitd (`ribbit-audio`, `ribbit-web`): the path in the environment
    /// variable `override` when set, else beside this executable (a build directory), else
    /// ../libexec/ribbit/ beside its directory (the Debian layout); nil when none can run.
    public static func companionExecutable(_ name: String, override: String?) -> String? {
        if let path = override, !path.isEmpty { return access(path, X_OK) == 0 ? path : nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let own = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let parent = directory.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return [directory + "/" + name, parent + "/libexec/ribbit/" + name].first { access($0, X_OK) == 0 }
    }
}
