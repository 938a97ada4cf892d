import Foundation
import TOMLKit

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
    /// The name of the calibration profile in use (nil: uncalibrated, `CalibrationProfile.uncalibratedDBSPL`).
    public var calibration: String? = nil
    /// The profiles of ribbitd.conf and calibration.toml, by name.
    public var profiles: [String: CalibrationProfile] = [:]
    /// The data log (`ribbitd log`): on unless `log = false`.
    public var log = true
    /// How often the data log is written, seconds (`log-interval`): what a power cut may lose.
    public var logIntervalSeconds = 60.0
    public static let logIntervalRange = 5.0...3600.0
    /// Why the default ribbitd.conf could not be used, when `ribbitd run` started without it
    /// (`forDaemon`). The file holds safety policy (`require-signed`) that cannot be read, so the
    /// daemon plays the last prescription it had and takes no new one until the file is fixed.
    public var damagedConfig: String? = nil
    /// Why calibration.toml could not be used, when `ribbitd run` started without it: the
    /// daemon plays uncalibrated (the documented assumption of 100 dB SPL at 0 dBFS).
    public var damagedCalibration: String? = nil

    public init() {}

    /// The keys a config file may set, in the order the documentation gives them.
    public static let knownKeys = [
        "input", "output", "connect", "client-name", "log-level", "require-signed", "calibration", "log", "log-interval", "profile",
    ]

    /// The profile in use (nil: uncalibrated).
    public var calibrationProfile: CalibrationProfile? { calibration.flatMap { profiles[$0] } }

    /// Reads a config file: TOML (toml.io, v1.0), so comments after values, 'literal strings'
    /// and tables parse as any TOML tool expects. Unknown keys and tables are errors that list
    /// the known ones, so a typo is not silently ignored.
    public static func parse(_ text: String, path: String, allowed: [String] = knownKeys) throws(ConfigError) -> DaemonConfig {
        try SettingsText.refuseNUL(in: text, path: path)
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let error as TOMLParseError {
            // toml++'s words, then what a ribbitd.conf value looks like.
            throw ConfigError(
                "\(path):\(error.source.begin.line):\(error.source.begin.column): \(error.description) "
                    + "(values are \"quoted strings\", true or false, or [\"lists\"]; see ribbitd.conf(5))")
        } catch { throw ConfigError("\(path): \(error)") }
        var config = DaemonConfig()
        // In file order, so the first mistake is the one reported.
        for key in table.keys.sorted(by: { line(of: $0, in: text) < line(of: $1, in: text) }) {
            guard let value = table[key] else { continue }
            let at = "\(path):\(line(of: key, in: text))"
            switch allowed.contains(key) ? key : "" {
            case "input": config.inputs = try ports(value, at: at)
            case "output": config.outputs = try ports(value, at: at)
            case "connect": config.connect = try bool(value, key: key, at: at)
            case "require-signed": config.requireSigned = try bool(value, key: key, at: at)
            case "client-name": config.clientName = try string(value, key: key, at: at)
            case "log-level": config.logLevel = try string(value, key: key, at: at)
            case "calibration": config.calibration = try string(value, key: key, at: at)
            case "log": config.log = try bool(value, key: key, at: at)
            case "log-interval":
                guard let seconds = CalibrationProfile.number(value), logIntervalRange.contains(seconds) else {
                    throw ConfigError(
                        "\(at): log-interval is how often the data log is written, in seconds, from \(Int(logIntervalRange.lowerBound)) to \(Int(logIntervalRange.upperBound))"
                    )
                }
                config.logIntervalSeconds = seconds
            case "profile": config.profiles = try CalibrationProfile.parseAll(value, text: text, at: at)
            default:
                let what = value.table != nil ? "table `[\(key)]`" : "key `\(key)`"
                throw ConfigError("\(at): unknown \(what); known: \(allowed.joined(separator: ", "))")
            }
        }
        return config
    }

    /// "a" or "a,b" or ["a", "b"]: one or two port names.
    static func ports(_ value: TOMLValueConvertible, at: String) throws(ConfigError) -> [String] {
        let names: [String]
        if let list = value.array {
            var strings: [String] = []
            for item in list {
                guard let name = item.string else { throw ConfigError("\(at): a port list holds \"quoted\" port names") }
                strings.append(name)
            }
            names = strings
        } else if let string = value.string {
            names = string.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } else {
            throw ConfigError("\(at): give a port as \"client:port\" or a list [\"left:port\", \"right:port\"]")
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

    static func bool(_ value: TOMLValueConvertible, key: String, at: String) throws(ConfigError) -> Bool {
        guard let bool = value.bool else { throw ConfigError("\(at): \(key) must be true or false (without quotes)") }
        return bool
    }

    /// The config file for every command: `explicitPath` (from `--config`) must exist;
    /// without one, the default file is read when there is one, else the defaults apply.
    /// A file that cannot be read is `.unreadable` (exit 66), a mistake in it `.invalid` (78).
    public static func load(explicitPath: String? = nil, paths: RibbitPaths) throws(ConfigError) -> DaemonConfig {
        let path = explicitPath ?? paths.configFile
        guard explicitPath != nil || FileManager.default.fileExists(atPath: path) else {
            return try DaemonConfig().withCalibrationFile(CalibrationFile.path(besideConfig: path))
        }
        let bytes: Data
        do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
            throw ConfigError("\(error); give the path of a ribbitd.conf text file", kind: .unreadable)
        }
        return try parse(SettingsText.decode(bytes, path: path), path: path).withCalibrationFile(CalibrationFile.path(besideConfig: path))
    }

    /// The config for `ribbitd run`: like `load`, except that a damaged file does not keep the
    /// hearing aid from starting. `explicitPath` (`--config`, typed at a terminal) still fails
    /// at once; the default ribbitd.conf, damaged, unreadable or wrong, gives the defaults with
    /// `damagedConfig` set (the daemon refuses new prescriptions while it is); a damaged
    /// calibration.toml gives no calibration with `damagedCalibration` set.
    public static func forDaemon(explicitPath: String?, paths: RibbitPaths) throws(ConfigError) -> DaemonConfig {
        let path = explicitPath ?? paths.configFile
        var config = DaemonConfig()
        if explicitPath != nil || FileManager.default.fileExists(atPath: path) {
            do throws(ConfigError) {
                let bytes: Data
                do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
                    throw ConfigError("\(error); give the path of a ribbitd.conf text file", kind: .unreadable)
                }
                config = try parse(SettingsText.decode(bytes, path: path), path: path)
            } catch {
                guard explicitPath == nil else { throw error }
                config = DaemonConfig()
                config.damagedConfig = error.description
            }
        }
        let calibrationPath = CalibrationFile.path(besideConfig: path)
        do { return try config.withCalibrationFile(calibrationPath) } catch {
            if (try? CalibrationFile.load(calibrationPath)) == nil {
                config.damagedCalibration = error.description
            } else if explicitPath != nil {
                throw error  // the config names a profile nobody defined: a mistake in the file given
            } else {
                config.damagedConfig = error.description
            }
            var uncalibrated = config
            uncalibrated.calibration = nil
            uncalibrated.profiles = [:]
            return uncalibrated
        }
    }

    /// This config on top of calibration.toml: its profiles and its choice win. A chosen
    /// profile that neither file defines is a mistake.
    public func withCalibrationFile(_ path: String) throws(ConfigError) -> DaemonConfig {
        let (selected, measured) = try CalibrationFile.load(path)
        var config = self
        config.profiles = measured.merging(profiles) { _, own in own }
        config.calibration = calibration ?? selected
        if let name = config.calibration, config.profiles[name] == nil {
            let known = config.profiles.keys.sorted()
            throw ConfigError(
                "calibration = \"\(name)\" names no profile; "
                    + (known.isEmpty ? "define [profile.\(name)] or run `ribbitd calibrate`" : "known: \(known.joined(separator: ", "))"))
        }
        return config
    }

    static func string(_ value: TOMLValueConvertible, key: String, at: String) throws(ConfigError) -> String {
        guard let string = value.string else { throw ConfigError("\(at): \(key) must be a \"quoted string\"") }
        return string
    }

    /// The 1-based line where `key` is set at the top level (TOMLKit keeps no positions), or
    /// 0 when it cannot be found (a key written as a dotted or quoted name).
    static func line(of key: String, in text: String) -> Int {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.drop(while: { $0 == " " || $0 == "\t" })
            for name in [key, "\"\(key)\"", "'\(key)'", "[\(key)]", "[\(key)."] where line.hasPrefix(name) {
                let rest = line.dropFirst(name.count).drop(while: { $0 == " " || $0 == "\t" })
                if name.hasPrefix("[") || rest.hasPrefix("=") || rest.hasPrefix(".") { return index + 1 }
            }
        }
        return 0
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
