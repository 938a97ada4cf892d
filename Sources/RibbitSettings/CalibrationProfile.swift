import Foundation
import Glibc
import TOMLKit

/// One measured (or looked-up) headphone and microphone pair: how digital levels become sound
/// pressure. Plain numbers; the engine's `Calibration` (RibbitDSP) is built from it.
///
/// In ribbitd.conf or calibration.toml:
///
/// ```
/// calibration = "sennheiser-hd25"          # the profile in use
/// [profile.sennheiser-hd25]
/// output-left = 104.5    # dB SPL at the ear for a 0 dBFS 1 kHz sine
/// output-right = 104.0
/// input = 112.0          # dB SPL at the microphone that reads 0 dBFS
/// response-left = { 250 = -1.0, 4000 = 2.5 }   # optional: dB re 1 kHz, per frequency
/// ```
public struct CalibrationProfile: Sendable, Equatable {
    public var name: String
    /// The level (dB SPL) a 0 dBFS 1 kHz sine plays at the left and right ear.
    public var outputLeftDBSPL: Double
    public var outputRightDBSPL: Double
    /// The level (dB SPL) of a 1 kHz sine at the microphone that reads 0 dBFS (peak 1).
    public var inputDBSPL: Double
    /// Per ear, the headphone's level at a frequency (Hz) relative to 1 kHz, dB.
    public var responseLeft: [Int: Double]
    public var responseRight: [Int: Double]
    /// When it was measured (YYYY-MM-DD), as `ribbitd calibrate` writes it; for the record only.
    public var measured: String?
    /// The most insertion gain these headphones take before they whistle, dB (`max-gain`):
    /// open headphones let the ear's sound back into the microphone, and feedback starts well
    /// below ribbit's maximum of 50 dB. nil: that maximum. It only ever lowers the gain.
    public var maxGainDB: Double?

    public init(
        name: String, outputLeftDBSPL: Double = Self.uncalibratedDBSPL, outputRightDBSPL: Double = Self.uncalibratedDBSPL,
        inputDBSPL: Double = Self.uncalibratedDBSPL, responseLeft: [Int: Double] = [:], responseRight: [Int: Double] = [:],
        measured: String? = nil, maxGainDB: Double? = nil
    ) {
        self.name = name
        self.outputLeftDBSPL = outputLeftDBSPL
        self.outputRightDBSPL = outputRightDBSPL
        self.inputDBSPL = inputDBSPL
        self.responseLeft = responseLeft
        self.responseRight = responseRight
        self.measured = measured
        self.maxGainDB = maxGainDB
    }

    /// Without a profile: 100 dB SPL at 0 dBFS for the microphone and both ears (RibbitDSP's
    /// `Calibration.uncalibrated`), so a digital gain of G dB is taken as G dB of insertion gain.
    public static let uncalibratedDBSPL = 100.0
    /// How far off that guess can be for a typical headset, dB either way: headphone
    /// sensitivities span about 90 to 125 dB SPL for a full-scale sine (impedance, the sound
    /// card's output level, the mixer volume on top), and a microphone's preamp gain alone
    /// spans 20 to 40 dB. +-20 dB is a fair bound for what is out there, not a promise.
    public static let uncalibratedUncertaintyDB = 20.0

    /// The keys of a `[profile.NAME]` table, in the order the documentation gives them.
    public static let knownKeys = ["output-left", "output-right", "input", "response-left", "response-right", "measured", "max-gain"]
    /// What `max-gain` may be, dB: up to ribbit's own maximum gain (`Prescription.maxGainDB`).
    public static let maxGainRange = 0.0...50.0
    /// What a level may be, dB SPL for a 0 dBFS sine at the ear, or at the microphone that reads
    /// 0 dBFS. Headphones on a sound card give about 90 to 125 (with the mixer's volume), and a
    /// microphone's full scale lies about 95 to 135: a value outside 80 to 135 is a typo (a meter
    /// reading of 10 typed for 100) or a meter or calibrator that was not on the ear or the
    /// microphone, and would add or take away tens of dB of gain.
    public static let levelRange = 80.0...135.0
    /// What a response point may be (dB re 1 kHz) and where (Hz): a headphone's response over
    /// 250 Hz to 8 kHz stays within about +-15 dB of 1 kHz; beyond +-20 dB it is a misreading.
    public static let responseRange = -20.0...20.0

    /// Why `level` (dB SPL at 0 dBFS) cannot be a real device, in words that say how far it is
    /// from the uncalibrated default; nil when it is plausible.
    public static func implausibility(of level: Double, what: String) -> String? {
        guard !levelRange.contains(level) else { return nil }
        let from = level - uncalibratedDBSPL
        let number = level.isFinite ? format(level) : "\(level)"
        return "\(what) would be \(number) dB SPL at 0 dBFS, \(from.isFinite ? format(abs(from)) : "infinitely many") dB "
            + "\(from < 0 ? "below" : "above") the uncalibrated default of \(format(uncalibratedDBSPL)): outside the "
            + "\(Int(levelRange.lowerBound)) to \(Int(levelRange.upperBound)) dB SPL a real headphone or microphone gives"
    }

    /// How far each level is from the uncalibrated default, dB (output left, right, input).
    public var offsetsFromDefaultDB: [Double] {
        [outputLeftDBSPL, outputRightDBSPL, inputDBSPL].map { $0 - Self.uncalibratedDBSPL }
    }

    /// One line for the daemon's log at start: the profile, its levels and how far they are
    /// from the default (what they add to or take from every gain).
    public var summary: String {
        func signed(_ value: Double) -> String { (value < 0 ? "" : "+") + Self.format(value) }
        let offsets = offsetsFromDefaultDB
        return "calibration profile \(name)\(measured.map { " (measured \($0))" } ?? ""): output left \(Self.format(outputLeftDBSPL)), "
            + "right \(Self.format(outputRightDBSPL)), input \(Self.format(inputDBSPL)) dB SPL at 0 dBFS "
            + "(\(signed(offsets[0])) / \(signed(offsets[1])) / \(signed(offsets[2])) dB from the uncalibrated \(Self.format(Self.uncalibratedDBSPL)))"
            + (maxGainDB.map { "; at most \(Self.format($0)) dB of gain (max-gain)" } ?? "")
    }

    /// Whether a level lies further from the default than an uncalibrated guess would (worth a
    /// warning: check that the profile is the one for these headphones).
    public var isFarFromDefault: Bool { offsetsFromDefaultDB.contains { abs($0) > Self.uncalibratedUncertaintyDB } }
    public static let frequencyRange = 20...20000

    /// Reads the `profile` table: one table per profile.
    static func parseAll(_ value: TOMLValueConvertible, text: String, at: String) throws(ConfigError) -> [String: CalibrationProfile] {
        guard let table = value.table else { throw ConfigError("\(at): profile is a table: [profile.NAME] with output-left = ...") }
        var profiles: [String: CalibrationProfile] = [:]
        for name in table.keys.sorted() {
            guard let entry = table[name]?.table else { throw ConfigError("\(at): profile.\(name) is a table: [profile.\(name)]") }
            profiles[name] = try parse(entry, name: name, at: "\(at): [profile.\(name)]")
        }
        return profiles
    }

    static func parse(_ table: TOMLTable, name: String, at: String) throws(ConfigError) -> CalibrationProfile {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw ConfigError("\(at): a profile name holds letters, digits, - _ and . only")
        }
        var profile = CalibrationProfile(name: name)
        var seen: Set<String> = []
        for key in table.keys.sorted() {
            guard let value = table[key] else { continue }
            seen.insert(key)
            switch key {
            case "output-left": profile.outputLeftDBSPL = try level(value, key: key, at: at)
            case "output-right": profile.outputRightDBSPL = try level(value, key: key, at: at)
            case "input": profile.inputDBSPL = try level(value, key: key, at: at)
            case "response-left": profile.responseLeft = try response(value, key: key, at: at)
            case "response-right": profile.responseRight = try response(value, key: key, at: at)
            case "measured":
                guard let text = value.string else { throw ConfigError("\(at): measured must be a \"quoted string\"") }
                profile.measured = text
            case "max-gain":
                guard let db = number(value), maxGainRange.contains(db) else {
                    throw ConfigError(
                        "\(at): max-gain is the most insertion gain in dB these headphones take before they whistle, from "
                            + "\(Int(maxGainRange.lowerBound)) to \(Int(maxGainRange.upperBound)) (ribbit's maximum), e.g. 30 for open headphones"
                    )
                }
                profile.maxGainDB = db
            default: throw ConfigError("\(at): unknown key `\(key)`; known: \(knownKeys.joined(separator: ", "))")
            }
        }
        for key in ["output-left", "output-right", "input"] where !seen.contains(key) {
            throw ConfigError("\(at): \(key) is missing (dB SPL for a 0 dBFS 1 kHz sine; `ribbitd calibrate` measures it)")
        }
        return profile
    }

    static func number(_ value: TOMLValueConvertible) -> Double? { value.double ?? value.int.map(Double.init) }

    static func level(_ value: TOMLValueConvertible, key: String, at: String) throws(ConfigError) -> Double {
        guard let level = number(value), levelRange.contains(level) else {
            throw ConfigError(
                "\(at): \(key) is a level in dB SPL from \(Int(levelRange.lowerBound)) to \(Int(levelRange.upperBound)) (a real "
                    + "headphone or microphone; the uncalibrated default is \(Int(uncalibratedDBSPL))), e.g. 104.5; measure again with `ribbitd calibrate`"
            )
        }
        return level
    }

    static func response(_ value: TOMLValueConvertible, key: String, at: String) throws(ConfigError) -> [Int: Double] {
        guard let table = value.table else {
            throw ConfigError("\(at): \(key) is a table of frequency = dB, e.g. { 250 = -1.0, 4000 = 2.5 }")
        }
        var points: [Int: Double] = [:]
        for frequency in table.keys {
            guard let hz = Int(frequency), frequencyRange.contains(hz), let db = table[frequency].flatMap(number),
                responseRange.contains(db)
            else {
                throw ConfigError(
                    "\(at): \(key): `\(frequency)` is not a frequency from 20 to 20000 Hz with a level from "
                        + "\(Int(responseRange.lowerBound)) to \(Int(responseRange.upperBound)) dB re 1 kHz")
            }
            points[hz] = db
        }
        return points
    }

    /// The profile as calibration.toml holds it (a `[profile.NAME]` table).
    public var tomlText: String {
        var lines = ["[profile.\(name)]"]
        if let measured { lines.append("measured = \"\(measured)\"") }
        lines.append("output-left = \(Self.format(outputLeftDBSPL))    # dB SPL at the left ear for a 0 dBFS 1 kHz sine")
        lines.append("output-right = \(Self.format(outputRightDBSPL))")
        if let maxGainDB {
            lines.append("max-gain = \(Self.format(maxGainDB))    # dB: the most gain these headphones take before they whistle")
        }
        lines.append("input = \(Self.format(inputDBSPL))    # dB SPL at the microphone for 0 dBFS")
        for (key, points) in [("response-left", responseLeft), ("response-right", responseRight)] where !points.isEmpty {
            let items = points.keys.sorted().map { "\($0) = \(Self.format(points[$0]!))" }
            lines.append("\(key) = { \(items.joined(separator: ", ")) }    # dB re 1 kHz")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Tenths of a dB, always with a decimal point (a TOML float).
    public static func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }
}

/// calibration.toml: the profiles `ribbitd calibrate` measured, beside ribbitd.conf. The
/// config file is the user's, with their comments and layout, and TOMLKit cannot write TOML
/// back as it was read; so `calibrate` never rewrites it. This file is the program's: it is
/// rewritten whole, atomically (a temporary file, fsync, rename), so a crash leaves the old
/// file or the new one, never half of one. ribbitd.conf is read on top of it: a profile or a
/// `calibration =` there wins.
public enum CalibrationFile {
    public static let name = "calibration.toml"

    /// The file beside a config file.
    public static func path(besideConfig configPath: String) -> String {
        (configPath as NSString).deletingLastPathComponent + "/" + name
    }

    /// Reads it: the profile it selects and its profiles (none when there is no file).
    public static func load(_ path: String) throws(ConfigError) -> (selected: String?, profiles: [String: CalibrationProfile]) {
        guard FileManager.default.fileExists(atPath: path) else { return (nil, [:]) }
        let bytes: Data
        do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
            throw ConfigError("\(error)", kind: .unreadable)
        }
        let config = try DaemonConfig.parse(SettingsText.decode(bytes, path: path), path: path, allowed: ["calibration", "profile"])
        return (config.calibration, config.profiles)
    }

    /// Stores `profile` (replacing one of the same name), selects it, and writes the file
    /// atomically with mode 0644.
    ///
    /// A damaged file (one the daemon started without) is kept beside it as
    /// `calibration.toml.damaged` rather than thrown away or left in the way.
    public static func save(_ profile: CalibrationProfile, to path: String) throws(ConfigError) {
        var profiles: [String: CalibrationProfile] = [:]
        do { profiles = try load(path).profiles } catch {
            guard error.kind == .invalid, rename(path, path + ".damaged") == 0 else { throw error }
        }
        profiles[profile.name] = profile
        var text = """
            # Written by `ribbitd calibrate`; it rewrites this file whole. Put your own settings
            # in ribbitd.conf (read on top of this file; see ribbitd.conf(5)).
            calibration = "\(profile.name)"

            """
        for name in profiles.keys.sorted() { text += "\n" + profiles[name]!.tomlText }
        try SettingsFile.write(text, to: path)
    }
}
