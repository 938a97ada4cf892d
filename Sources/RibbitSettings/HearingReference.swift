import Foundation
import Glibc
import TOMLKit

extension RibbitPaths {
    /// The biological calibration of consumer headphones (`ribbitd audiogram reference`).
    public var hearingReferencePath: String { configDirectory + "/hearing-reference.toml" }
}

/// hearing-reference.toml: a normal-hearing listener's thresholds (dB HL, the mean of both
/// ears per frequency) measured with consumer headphones, which have no standard RETSPL. Read
/// through `RETSPLTable.biologicallyCalibrated(referenceThresholdsDBHL:)` they become 0 dB HL.
///
/// ```
/// test = 4                      # the hearing test it came from
/// date = "2026-11-24T03:05:00Z"
/// [thresholds]                  # dB HL per frequency (Hz)
/// 1000 = 2.5
/// ```
///
/// The program's file: written whole, atomically; a hand edit outside the ranges is refused.
public enum HearingReference {
    /// A reference listener's thresholds must lie here (dB HL): normal hearing.
    public static let normalRangeDBHL = -10.0...25.0
    public static let frequencyRangeHz = 125...8000

    /// The reference thresholds (dB HL by frequency), or nil when there is no file.
    public static func load(paths: RibbitPaths) throws(ConfigError) -> [Int: Double]? {
        try load(path: paths.hearingReferencePath)
    }

    public static func load(path: String) throws(ConfigError) -> [Int: Double]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: Data
        do { bytes = try BoundedFile.read(path, maxBytes: BoundedFile.keyOrConfigMaxBytes) } catch {
            throw ConfigError("\(error)", kind: .unreadable)
        }
        let text = try SettingsText.decode(bytes, path: path)
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch { throw ConfigError("\(path): \(error)") }
        guard let points = table["thresholds"]?.table, !points.keys.isEmpty else {
            throw ConfigError("\(path): no [thresholds] table of frequency = dB HL; `ribbitd audiogram reference ID` writes it")
        }
        var thresholds: [Int: Double] = [:]
        for key in points.keys {
            guard let hz = Int(key), frequencyRangeHz.contains(hz), let value = points[key],
                let db = value.double ?? value.int.map(Double.init), normalRangeDBHL.contains(db)
            else {
                throw ConfigError(
                    "\(path): [thresholds] `\(key)` is not a frequency from 125 to 8000 Hz with a level from -10 to 25 dB HL")
            }
            thresholds[hz] = db
        }
        return thresholds
    }

    /// Writes the file whole and atomically (a temporary file, fsync, rename), mode 0644.
    public static func save(_ thresholds: [Int: Double], test: Int64, date: String, paths: RibbitPaths) throws(ConfigError) {
        var text = """
            # Written by `ribbitd audiogram reference`; it rewrites this file whole.
            # A normal-hearing listener's thresholds with these consumer headphones: they become
            # 0 dB HL for later hearing tests with them (a biological calibration, not a standard).
            test = \(test)
            date = "\(date)"

            [thresholds]    # dB HL by frequency (Hz), the mean of both ears

            """
        for hz in thresholds.keys.sorted() { text += "\(hz) = \(CalibrationProfile.format(thresholds[hz]!))\n" }
        try SettingsFile.write(text, to: paths.hearingReferencePath)
    }

    /// Deletes the file; false when there was none.
    public static func remove(paths: RibbitPaths) throws(ConfigError) -> Bool {
        let path = paths.hearingReferencePath
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw ConfigError("cannot remove \(path): \(String(cString: strerror(errno)))", kind: .unreadable)
    }
}
