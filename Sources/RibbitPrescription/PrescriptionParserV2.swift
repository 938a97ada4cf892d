extension Prescription {
    /// The version-2 keys (the parser refused them in version 1 already): compression gains,
    /// times, expansion, UCLs and the output limit.
    static func parseVersion2(_ rx: inout Prescription, _ fields: [String: (line: Int, value: String)]) throws(PrescriptionError) {
        func number(_ key: String, _ range: ClosedRange<Double>, _ what: String) throws(PrescriptionError) -> Double? {
            guard let (line, value) = fields[key] else { return nil }
            guard let x = Double(value), range.contains(x) else {
                throw PrescriptionError(
                    line: line,
                    "\(key) '\(value.prefix(24))' must be \(what) from \(Prescription.number(range.lowerBound)) to \(Prescription.number(range.upperBound))"
                )
            }
            return x
        }
        rx.attackMs = try number("attack", attackRangeMs, "a time in ms")
        rx.releaseMs = try number("release", releaseRangeMs, "a time in ms")
        rx.limitDBSPL = try number("limit", limitRange, "an output level in dB SPL")
        rx.volumeRangeDB = try number("volume-range", volumeRangeLimits, "how far the wearer may turn the volume, in dB,")
        if let (line, value) = fields["expansion"] {
            if value == "off" {
                rx.expansion = .off
            } else if value == "on" {
                rx.expansion = .on
            } else if let knee = Double(value), expansionKneeRange.contains(knee) {
                rx.expansion = .knee(knee)
            } else {
                throw PrescriptionError(
                    line: line,
                    "expansion '\(value.prefix(24))' must be 'off', 'on' or a knee in dB SPL from \(Int(expansionKneeRange.lowerBound)) to \(Int(expansionKneeRange.upperBound))"
                )
            }
        }
        if let (line, value) = fields["ucl-transducer"] {
            guard let transducer = Transducer(rawValue: value) else {
                throw PrescriptionError(
                    line: line,
                    "ucl-transducer '\(value.prefix(24))' must be the headphones the UCLs were measured with: "
                        + Transducer.allCases.map(\.rawValue).joined(separator: ", "))
            }
            guard fields["ucl-left"] != nil || fields["ucl-right"] != nil else {
                throw PrescriptionError(line: line, "ucl-transducer names the headphones of UCLs, and there is no ucl-left or ucl-right")
            }
            rx.uclTransducer = transducer
        }
        for ear in Ear.allCases {
            let uclKey = "ucl-\(ear.rawValue)"
            if let (line, value) = fields[uclKey] {
                let levels = try parsePairs(value, key: uclKey, line: line) { Int($0) }
                for frequency in levels.keys.sorted() {
                    let db = levels[frequency]!
                    guard uclRange.contains(db) else {
                        throw PrescriptionError(
                            line: line,
                            "'\(uclKey)': \(db) dB HL at \(frequency) Hz is outside \(uclRange.lowerBound) to \(uclRange.upperBound)")
                    }
                    if let threshold = rx.thresholds[ear]?[frequency], db <= threshold {
                        throw PrescriptionError(
                            line: line,
                            "'\(uclKey)': \(db) dB HL at \(frequency) Hz is not above the threshold of \(threshold) dB HL; check the audiogram"
                        )
                    }
                }
                rx.ucl[ear] = levels
            }
            let key50 = "g50-\(ear.rawValue)", key80 = "g80-\(ear.rawValue)"
            guard fields[key50] != nil || fields[key80] != nil else { continue }
            let line = fields[key50]?.line ?? fields[key80]!.line
            guard rx.rule == .explicit else {
                throw PrescriptionError(
                    line: line,
                    "'\(fields[key50] != nil ? key50 : key80)' is only allowed with 'rule: explicit' (this one is '\(rx.rule.rawValue)')")
            }
            guard let (line50, value50) = fields[key50], let (line80, value80) = fields[key80] else {
                throw PrescriptionError(line: line, "'\(key50)' and '\(key80)' go together; give both")
            }
            if let gainLine = fields["gain-\(ear.rawValue)"]?.line {
                throw PrescriptionError(
                    line: gainLine, "'gain-\(ear.rawValue)' and '\(key50)'/'\(key80)' both give the \(ear.rawValue) ear's gains; keep one")
            }
            func gains(_ key: String, _ line: Int, _ value: String) throws(PrescriptionError) -> [Int: Double] {
                let pairs = try parsePairs(value, key: key, line: line) { Double($0).flatMap { $0.isFinite ? $0 : nil } }
                try checkExplicitGains(pairs, key: key, line: line)
                return pairs
            }
            let g50 = try gains(key50, line50, value50)
            let g80 = try gains(key80, line80, value80)
            guard g50.keys.sorted() == g80.keys.sorted() else {
                throw PrescriptionError(line: line80, "'\(key80)' must give the same frequencies as '\(key50)'")
            }
            for frequency in g50.keys.sorted() where g80[frequency]! > g50[frequency]! {
                throw PrescriptionError(
                    line: line80,
                    "'\(key80)': \(Prescription.number(g80[frequency]!)) dB at \(frequency) Hz is more than the \(Prescription.number(g50[frequency]!)) dB for 50 dB SPL; louder sound never gets more gain"
                )
            }
            rx.gains50[ear] = g50
            rx.gains80[ear] = g80
        }
        // After the gains: lowering needs the ear fitted.
        for ear in Ear.allCases {
            let key = "lowering-\(ear.rawValue)"
            if let (line, value) = fields[key] { rx.lowering[ear] = try parseLowering(value, key: key, line: line, ear: ear, rx) }
        }
    }

    /// `lowering-left: CUTOFF RATIO`: the cut-off in Hz and the ratio, for an ear the
    /// prescription fits, the cut-off below the low-pass corner.
    static func parseLowering(_ value: String, key: String, line: Int, ear: Ear, _ rx: Prescription) throws(PrescriptionError)
        -> FrequencyLowering
    {
        let cutoffs = FrequencyLowering.cutoffRangeHz, ratios = FrequencyLowering.ratioRange
        let parts = value.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let cutoff = Double(parts[0]), let ratio = Double(parts[1]), cutoffs.contains(cutoff),
            ratios.contains(ratio)
        else {
            throw PrescriptionError(
                line: line,
                "'\(key)': '\(value.prefix(24))' must be a cut-off in Hz from \(Prescription.number(cutoffs.lowerBound)) to \(Prescription.number(cutoffs.upperBound)) and a ratio from \(Prescription.number(ratios.lowerBound)) to \(Prescription.number(ratios.upperBound)), e.g. '\(key): 2000 2'"
            )
        }
        guard rx.targetGains(for: ear) != nil else {
            throw PrescriptionError(
                line: line, "'\(key)' lowers the \(ear.rawValue) ear, which this prescription does not fit; fit that ear or remove it")
        }
        if let lowpass = rx.lowpassHz, cutoff >= Double(lowpass) {
            throw PrescriptionError(
                line: line,
                "'\(key)': the cut-off \(Prescription.number(cutoff)) Hz is not below 'lowpass: \(lowpass)'; nothing above the low-pass plays, so lower the cut-off"
            )
        }
        return FrequencyLowering(cutoffHz: cutoff, ratio: ratio)
    }
}
