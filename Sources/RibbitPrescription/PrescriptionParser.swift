/// What is wrong with a prescription: the line (1-based, when one is to blame) and the rule
/// broken, in words a wearer or audiologist can act on.
public struct PrescriptionError: Error, Equatable, CustomStringConvertible {
    public let line: Int?
    public let message: String

    public init(line: Int?, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}

extension Prescription {
    static let knownKeys = [
        "name", "env", "audiologist", "patient", "date", "note", "rule", "left", "right", "gain-left", "gain-right",
        "lowpass", "max-output", "sig",
    ]
    /// Keys version 2 adds (compression); `sig` stays last in the list.
    static let version2Keys = [
        "ucl-left", "ucl-right", "ucl-transducer", "g50-left", "g80-left", "g50-right", "g80-right", "attack", "release", "expansion",
        "limit",
        "volume-range", "lowering-left", "lowering-right",
    ]
    static func knownKeys(version: Int) -> [String] { version >= 2 ? knownKeys.dropLast() + version2Keys + ["sig"] : knownKeys }

    /// Parses and validates the text of a prescription (UTF-8 bytes). Every error names the line
    /// and the rule broken; nothing is partially accepted.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(PrescriptionError) -> Prescription {
        guard bytes.count <= maxPayloadBytes else {
            throw PrescriptionError(line: nil, "the prescription is \(bytes.count) bytes; the limit is \(maxPayloadBytes)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PrescriptionError(line: nil, "the prescription is not valid UTF-8 text")
        }
        // Split on LF code points: as Characters, "\r\n" is one grapheme and would not split.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map {
            String(String.UnicodeScalarView($0))
        }
        if lines.last == "" { lines.removeLast() }  // the final LF
        guard let first = lines.first else {
            throw PrescriptionError(line: nil, "the prescription is empty; it must start with '\(header)'")
        }
        if let crLine = lines.firstIndex(where: { $0.hasSuffix("\r") }) {
            throw PrescriptionError(line: crLine + 1, "ends with a carriage return; save the file with LF (Unix) line ends")
        }
        // Plain text only: a control character (damage, or a line break smuggled into a value)
        // is refused rather than kept inside a name or note.
        for (index, line) in lines.enumerated() {
            if let control = line.unicodeScalars.first(where: { $0.value < 0x20 && $0 != "\t" || (0x7F...0x9F).contains($0.value) }) {
                throw PrescriptionError(
                    line: index + 1, "holds the control character U+\(hex4(control.value)); a prescription is plain text")
            }
            // U+FFFD is what a decoder puts where bytes were not UTF-8: text that went through
            // one is damaged, and is refused wherever it comes from (a peer, the history).
            if line.unicodeScalars.contains("\u{FFFD}") {
                throw PrescriptionError(
                    line: index + 1,
                    "holds U+FFFD, the mark left where bytes were not UTF-8: the text was damaged on its way; a prescription is UTF-8 text")
            }
        }
        let version = first == "RIBBIT-RX 2" ? 2 : 1
        if first != header && version == 1 {
            if first.hasPrefix("RIBBIT-RX ") {
                throw PrescriptionError(
                    line: 1,
                    "unsupported version '\(first)'; this ribbitd reads '\(header)' and 'RIBBIT-RX 2' (a newer ribbitd may read it)")
            }
            throw PrescriptionError(line: 1, "must be '\(header)'; this is not a ribbit prescription")
        }

        var fields: [String: (line: Int, value: String)] = [:]
        var extensions: [(key: String, value: String)] = []
        for (index, line) in lines.enumerated().dropFirst() {
            let number = index + 1
            if line.isEmpty { throw PrescriptionError(line: number, "is empty; remove blank lines") }
            guard let colon = line.firstIndex(of: ":") else {
                throw PrescriptionError(line: number, "expected 'key: value', found '\(line.prefix(40))'")
            }
            let key = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingSpaces()
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                throw PrescriptionError(line: number, "'\(key.prefix(40))' is not a key (lowercase letters, digits and '-')")
            }
            guard !value.isEmpty else { throw PrescriptionError(line: number, "'\(key)' has no value") }
            if key.hasPrefix("x-") {
                extensions.append((key, value))
                continue
            }
            if version == 1 && version2Keys.contains(key) {
                throw PrescriptionError(line: number, "'\(key)' needs format version 2; start the file with 'RIBBIT-RX 2'")
            }
            let known = knownKeys(version: version)
            guard known.contains(key) else {
                throw PrescriptionError(
                    line: number,
                    "unknown key '\(key)' (known: \(known.dropLast().joined(separator: ", ")); prefix your own keys with 'x-')")
            }
            if let earlier = fields[key] {
                throw PrescriptionError(line: number, "'\(key)' is given twice (first on line \(earlier.line))")
            }
            if key == "sig" && number != lines.count {
                throw PrescriptionError(line: number, "'sig' must be the last line")
            }
            fields[key] = (number, value)
        }

        func required(_ key: String, _ what: String) throws(PrescriptionError) -> String {
            guard let field = fields[key] else {
                throw PrescriptionError(line: nil, "'\(key)' is missing; every prescription needs \(what)")
            }
            return field.value
        }

        var rx = Prescription(
            name: try required("name", "a name"), environment: try required("env", "the environment it is for (e.g. quiet, noisy, music)"))
        rx.version = version
        rx.audiologist = fields["audiologist"]?.value
        rx.patient = fields["patient"]?.value
        rx.note = fields["note"]?.value
        rx.extensions = extensions
        rx.signature = fields["sig"]?.value
        if let (line, value) = fields["date"] {
            guard isCalendarDate(value) else { throw PrescriptionError(line: line, "date '\(value)' is not a real date as YYYY-MM-DD") }
            rx.date = value
        }
        if let (line, value) = fields["rule"] {
            guard let rule = FittingRule(rawValue: value), rule.formatVersion <= version else {
                if let rule = FittingRule(rawValue: value) {
                    throw PrescriptionError(
                        line: line, "rule '\(value)' needs format version \(rule.formatVersion); start the file with 'RIBBIT-RX 2'")
                }
                throw PrescriptionError(
                    line: line,
                    "rule '\(value)' is unknown; use one of \(FittingRule.rules(inVersion: version).map(\.rawValue).joined(separator: ", "))"
                )
            }
            rx.rule = rule
        }
        if let (line, value) = fields["lowpass"] {
            if value == "none" {
                rx.lowpassHz = nil
            } else if let hz = Int(value), lowpassRange.contains(hz) {
                rx.lowpassHz = hz
            } else {
                throw PrescriptionError(
                    line: line,
                    "lowpass '\(value)' must be 'none' or a frequency in Hz from \(lowpassRange.lowerBound) to \(lowpassRange.upperBound)")
            }
        }
        if let (line, value) = fields["max-output"] {
            guard let dbfs = Double(value), maxOutputRange.contains(dbfs) else {
                throw PrescriptionError(
                    line: line,
                    "max-output '\(value)' must be a level in dBFS from \(Int(maxOutputRange.lowerBound)) to \(Int(maxOutputRange.upperBound))"
                )
            }
            rx.maxOutputDBFS = dbfs
        }

        for ear in Ear.allCases {
            if let (line, value) = fields[ear.rawValue] {
                let levels = try parsePairs(value, key: ear.rawValue, line: line) { (text) throws(PrescriptionError) in
                    try threshold(text, key: ear.rawValue, line: line)
                }
                let pairs = levels.mapValues { $0.db }
                for (frequency, db) in pairs where !thresholdRange.contains(db) {
                    throw PrescriptionError(
                        line: line,
                        "'\(ear.rawValue)': \(db) dB HL at \(frequency) Hz is outside \(thresholdRange.lowerBound) to \(thresholdRange.upperBound)"
                    )
                }
                rx.thresholds[ear] = pairs
                let silent = Set(levels.filter { $0.value.noResponse }.keys)
                if !silent.isEmpty { rx.noResponse[ear] = silent }
            }
            let gainKey = "gain-\(ear.rawValue)"
            if let (line, value) = fields[gainKey] {
                guard rx.rule == .explicit else {
                    throw PrescriptionError(
                        line: line, "'\(gainKey)' is only allowed with 'rule: explicit' (this one is '\(rx.rule.rawValue)')")
                }
                let pairs = try parsePairs(value, key: gainKey, line: line) { Double($0).flatMap { $0.isFinite ? $0 : nil } }
                try checkExplicitGains(pairs, key: gainKey, line: line)
                rx.explicitGains[ear] = pairs
            }
        }
        try parseVersion2(&rx, fields)
        if rx.rule == .explicit {
            guard !rx.explicitGains.isEmpty || !rx.gains50.isEmpty else {
                throw PrescriptionError(
                    line: fields["rule"]?.line,
                    version == 1
                        ? "'rule: explicit' needs 'gain-left' and/or 'gain-right'"
                        : "'rule: explicit' needs 'gain-left' and/or 'gain-right', or 'g50-' and 'g80-' gains for an ear")
            }
        } else if rx.thresholds.isEmpty {
            throw PrescriptionError(line: nil, "no ear is given; add 'left' and/or 'right' thresholds (an ear left out gets no processing)")
        }
        // What `rx make` encodes must fit too (the fuzzer found "key:value" lines whose
        // canonical "key: value" form went over the limit).
        let canonical = rx.text.utf8.count
        guard canonical <= maxPayloadBytes else {
            throw PrescriptionError(
                line: nil, "the prescription is \(canonical) bytes as written by ribbit; the limit is \(maxPayloadBytes)")
        }
        return rx
    }

    /// Typed gains outside `explicitGainRange` are typos (nobody is fitted with -40 dB; above
    /// ribbit's maximum gain the band could not play them). A rule's gains are never refused:
    /// above the maximum they play at it, and the shortfall is said (`CompressorFitting.delivery`).
    static func checkExplicitGains(_ pairs: [Int: Double], key: String, line: Int) throws(PrescriptionError) {
        for frequency in pairs.keys.sorted() {
            let db = pairs[frequency]!
            if db < explicitGainRange.lowerBound {
                throw PrescriptionError(
                    line: line,
                    "'\(key)': \(Prescription.number(db)) dB at \(frequency) Hz is below the lowest allowed gain of \(Int(explicitGainRange.lowerBound)) dB"
                )
            }
            if db > explicitGainRange.upperBound {
                throw PrescriptionError(
                    line: line,
                    "'\(key)': +\(Prescription.number(db)) dB at \(frequency) Hz is above ribbit's maximum gain of +\(Int(maxGainDB)) dB (a typo?); a rule's gains above it play at it"
                )
            }
        }
    }

    /// `FREQ=DB` pairs separated by spaces, FREQ audiometric, each once, 500/1000/2000/4000 present.
    static func parsePairs<Value>(
        _ text: String, key: String, line: Int, _ convert: (String) throws(PrescriptionError) -> Value?
    ) throws(PrescriptionError) -> [Int: Value] {
        var result: [Int: Value] = [:]
        for item in text.split(separator: " ", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, let frequency = Int(parts[0]), let value = try convert(String(parts[1])) else {
                if item == "nr" || item == "NR" {
                    throw PrescriptionError(line: line, "'\(key)': 'nr' goes right after the level tested, with no space (e.g. 8000=90nr)")
                }
                throw PrescriptionError(line: line, "'\(key)': '\(item.prefix(24))' is not FREQ=DB (e.g. 1000=35)")
            }
            guard audiometricFrequencies.contains(frequency) else {
                throw PrescriptionError(
                    line: line,
                    "'\(key)': \(frequency) Hz is not an audiometric frequency (\(audiometricFrequencies.map(String.init).joined(separator: " ")))"
                )
            }
            guard result[frequency] == nil else {
                throw PrescriptionError(line: line, "'\(key)': \(frequency) Hz is given twice")
            }
            result[frequency] = value
        }
        let missing = requiredFrequencies.filter { result[$0] == nil }
        guard missing.isEmpty else {
            throw PrescriptionError(
                line: line, "'\(key)' lacks \(missing.map { "\($0)" }.joined(separator: ", ")) Hz; 500, 1000, 2000 and 4000 Hz are required"
            )
        }
        return result
    }

    /// A threshold in dB HL, or `DBnr`: no response at DB, the level tested. Lowercase only, as
    /// every keyword of the format (`none`); `NR` is refused with the spelling to use.
    static func threshold(_ text: String, key: String, line: Int) throws(PrescriptionError) -> (db: Int, noResponse: Bool)? {
        if let db = Int(text) { return (db, false) }
        guard text.lowercased().hasSuffix("nr") else { return nil }
        let level = String(text.dropLast(2))
        guard let db = Int(level) else {
            throw PrescriptionError(
                line: line, "'\(key)': '\(text.prefix(24))' has no level; no response is written after the level tested (e.g. 8000=90nr)")
        }
        guard text.hasSuffix("nr") else {
            throw PrescriptionError(line: line, "'\(key)': write no response in lowercase: \(db)nr, not '\(text.prefix(24))'")
        }
        return (db, true)
    }

    static func isCalendarDate(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1900...2999).contains(y), (1...12).contains(m)
        else { return false }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        return (1...days).contains(d)
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// 7 -> "0007" (RibbitPrescription has no Foundation).
private func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

extension Prescription {
    /// A new prescription from an audiogram, as every front end authors one (the web app's
    /// Fitting screen, `ribbitd audiogram fit`, the hearing test's fitting): in the lowest
    /// format version its rule needs, and read back through the parser, so what is written
    /// reads back exactly as what is returned and nothing invalid is ever handed out.
    public static func authored(
        name: String, environment: String, audiologist: String? = nil, patient: String? = nil, date: String? = nil,
        note: String? = nil, rule: FittingRule, thresholds: [Ear: [Int: Int]], noResponse: [Ear: Set<Int>] = [:]
    ) throws(PrescriptionError) -> Prescription {
        var rx = Prescription(
            name: name, environment: environment, audiologist: audiologist, patient: patient, date: date, note: note, rule: rule,
            thresholds: thresholds, noResponse: noResponse)
        rx.version = rule.formatVersion
        return try parse(Array(rx.text.utf8))
    }
}
