import Foundation

extension DumpFrame {
    /// The frame as one line of JSON with its newline: the same document JSONEncoder makes
    /// (sorted keys, absent nil fields), written directly. A frame has about 4000 numbers; this
    /// takes a tenth of JSONEncoder's time, which matters 20 times a second on a small machine.
    /// Levels are already rounded to 0.01 dB and are written as such; any other number in the
    /// shortest form that reads back exactly.
    public func jsonLine() -> Data {
        var out = JSONWriter()
        out.object { o in
            o.key("bandsHz") { $0.numbers(bandsHz) }
            if let calibration {
                o.key("calibration") { w in
                    w.object { c in
                        c.key("inputDBSPL") { $0.number(calibration.inputDBSPL) }
                        c.key("outputLeftDBSPL") { $0.number(calibration.outputLeftDBSPL) }
                        c.key("outputRightDBSPL") { $0.number(calibration.outputRightDBSPL) }
                        if let profile = calibration.profile { c.key("profile") { $0.string(profile) } }
                        if let uncertainty = calibration.uncertaintyDB { c.key("uncertaintyDB") { $0.number(uncertainty) } }
                    }
                }
            }
            o.key("droppedFrames") { $0.number(droppedFrames) }
            o.key("ears") { w in
                w.object { e in
                    for name in ears.keys.sorted() { e.key(name) { $0.ear(ears[name]!) } }
                }
            }
            o.key("latencyFrames") { $0.number(latencyFrames) }
            o.key("limitedSamples") { $0.number(limitedSamples) }
            o.key("output") { $0.string(output.rawValue) }
            if let prescription {
                o.key("prescription") { w in
                    w.object { p in
                        if let audiologist = prescription.audiologist { p.key("audiologist") { $0.string(audiologist) } }
                        if let date = prescription.date { p.key("date") { $0.string(date) } }
                        p.key("environment") { $0.string(prescription.environment) }
                        if let id = prescription.id { p.key("id") { $0.number(Int(id)) } }
                        p.key("name") { $0.string(prescription.name) }
                        if let patient = prescription.patient { p.key("patient") { $0.string(patient) } }
                        p.key("rule") { $0.string(prescription.rule.rawValue) }
                        if let signature = prescription.signature { p.key("signature") { $0.string(signature) } }
                    }
                }
            }
            o.key("sampleRate") { $0.number(sampleRate) }
            o.key("spectrumBinHz") { $0.number(spectrumBinHz) }
            o.key("time") { $0.number(time) }
            o.key("xruns") { $0.number(xruns) }
        }
        out.bytes.append(0x0A)
        return Data(out.bytes)
    }
}

/// Just enough of a JSON writer for the dump frame.
struct JSONWriter {
    var bytes: [UInt8] = []
    private var needsComma = false

    init() { bytes.reserveCapacity(32 * 1024) }

    mutating func object(_ body: (inout JSONWriter) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func key(_ name: String, _ value: (inout JSONWriter) -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = false
        string(name)
        bytes.append(UInt8(ascii: ":"))
        value(&self)
        needsComma = true
    }

    mutating func ear(_ ear: DumpFrame.Ear) {
        object { e in
            e.key("appliedGainDB") { $0.numbers(ear.appliedGainDB) }
            e.key("audiogram") { w in
                w.array(ear.audiogram) { w, point in
                    w.object { p in
                        p.key("frequencyHz") { $0.number(point.frequencyHz) }
                        if point.noResponse { p.key("noResponse") { $0.bytes.append(contentsOf: "true".utf8) } }
                        p.key("thresholdDBHL") { $0.number(point.thresholdDBHL) }
                    }
                }
            }
            e.key("combinationWindowDB") { $0.numbers(ear.combinationWindowDB) }
            e.key("inputBandsDB") { $0.numbers(ear.inputBandsDB) }
            e.key("inputPeakDB") { $0.number(ear.inputPeakDB) }
            e.key("inputRMSDB") { $0.number(ear.inputRMSDB) }
            e.key("inputSpectrumDB") { $0.numbers(ear.inputSpectrumDB) }
            e.key("outputBandsDB") { $0.numbers(ear.outputBandsDB) }
            e.key("outputPeakDB") { $0.number(ear.outputPeakDB) }
            e.key("outputRMSDB") { $0.number(ear.outputRMSDB) }
            e.key("outputSpectrumDB") { $0.numbers(ear.outputSpectrumDB) }
            e.key("targetGainDB") { $0.numbers(ear.targetGainDB) }
        }
    }

    mutating func array<T>(_ values: [T], _ element: (inout JSONWriter, T) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            element(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func numbers(_ values: [Double]) { array(values) { $0.number($1) } }

    mutating func numbers(_ values: [Double?]) {
        array(values) { w, value in
            if let value { w.number(value) } else { w.bytes.append(contentsOf: "null".utf8) }
        }
    }

    mutating func number(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    /// Hundredths exactly (what the analysis rounds to) as digits; anything else, and anything
    /// JSON cannot hold, as Swift's shortest round-trip form (non-finite never reaches a frame).
    mutating func number(_ value: Double) {
        let hundredths = (value * 100).rounded()
        guard abs(hundredths) < 1e15, hundredths / 100 == value else {
            bytes.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
            return
        }
        var n = Int(hundredths)
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            n = -n
        }
        bytes.append(contentsOf: String(n / 100).utf8)
        let fraction = n % 100
        if fraction != 0 {
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / 10))
            if fraction % 10 != 0 { bytes.append(UInt8(ascii: "0") + UInt8(fraction % 10)) }
        }
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case ..<0x20: bytes.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
