import Foundation

/// How `ribbitd run` is set up: from ribbitd.conf, then the command line on top.
public struct DaemonConfig: Sendable, Equatable {
    public var clientName = "ribbit"
    /// JACK ports to take the left and right input from (one port feeds both ears);
    /// nil: the first two physical capture ports.
    public var inputs: [String]? = nil
    /// Ports to send the left and right output to; nil: the first two physical playback ports.
    public var outputs: [String]? = nil
    /// false: leave all wiring to the user.
    public var connect = true
    public var logLevel = "info"
    /// Refuse unsigned prescriptions and those signed with a key not in trusted/.
    public var requireSigned = false

    public init() {}

    /// Reads a config file: `key = value` lines (a TOML subset), `#` comments. Values are
    /// "strings", true/false, or ["lists", "of strings"]. Unknown keys are errors, so a typo
    /// is not silently ignored.
    public static func parse(_ text: String, path: String) throws(ConfigError) -> DaemonConfig {
        var config = DaemonConfig()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let at = "\(path):\(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigError("\(at): expected `key = value`, got `\(line)`")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "input": config.inputs = try ports(value, at: at)
            case "output": config.outputs = try ports(value, at: at)
            case "connect": config.connect = try bool(value, key: key, at: at)
            case "require-signed": config.requireSigned = try bool(value, key: key, at: at)
            case "client-name": config.clientName = try string(value, at: at)
            case "log-level": config.logLevel = try string(value, at: at)
            default:
                throw ConfigError("\(at): unknown key `\(key)`; known: input, output, connect, client-name, log-level, require-signed")
            }
        }
        return config
    }

    /// "a" or "a,b" or ["a", "b"]: one or two port names.
    static func ports(_ value: String, at: String) throws(ConfigError) -> [String] {
        var names: [String]
        if value.hasPrefix("[") {
            guard value.hasSuffix("]") else { throw ConfigError("\(at): a list must end with ]") }
            names = []
            for item in value.dropFirst().dropLast().split(separator: ",") {
                names.append(try string(item.trimmingCharacters(in: .whitespaces), at: at))
            }
        } else {
            names = try string(value, at: at).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return try portList(names, what: at)
    }

    /// Checks a list of one or two "client:port" names.
    public static func portList(_ names: [String], what: String) throws(ConfigError) -> [String] {
        guard (1...2).contains(names.count), names.allSatisfy({ $0.contains(":") && !$0.hasPrefix(":") && !$0.hasSuffix(":") }) else {
            throw ConfigError("\(what): give one or two JACK ports as client:port (left, then right); `ribbitd ports` lists them")
        }
        return names
    }

    static func bool(_ value: String, key: String, at: String) throws(ConfigError) -> Bool {
        guard value == "true" || value == "false" else { throw ConfigError("\(at): \(key) must be true or false") }
        return value == "true"
    }

    /// The config file for every command: `explicitPath` (from `--config`) must exist;
    /// without one, the default file is read when there is one, else the defaults apply.
    /// A file that cannot be read is `.unreadable` (exit 66), a mistake in it `.invalid` (78).
    public static func load(explicitPath: String? = nil, paths: RibbitPaths) throws(ConfigError) -> DaemonConfig {
        let path = explicitPath ?? paths.configFile
        guard explicitPath != nil || FileManager.default.fileExists(atPath: path) else { return DaemonConfig() }
        let bytes: Data
        do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
            throw ConfigError("\(error); give the path of a ribbitd.conf text file", kind: .unreadable)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ConfigError("\(path): the config file is not UTF-8 text") }
        return try parse(text, path: path)
    }

    static func string(_ value: String, at: String) throws(ConfigError) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else {
            throw ConfigError("\(at): expected a \"quoted string\", got `\(value)`")
        }
        return String(value.dropFirst().dropLast())
    }
}

public struct ConfigError: Error, CustomStringConvertible {
    public enum Kind: Sendable { case unreadable, invalid }
    public let description: String
    public let kind: Kind
    init(_ description: String, kind: Kind = .invalid) {
        self.description = description
        self.kind = kind
    }
}
