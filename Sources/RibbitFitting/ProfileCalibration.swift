import RibbitDSP
import RibbitPrescription
import RibbitSettings

extension CalibrationProfile {
    /// The profile as the engine uses it, channels left and right.
    public var calibration: Calibration { calibration(ears: [.left, .right]) }

    /// The profile for channels that play `ears` (a mono file fitted for the right ear plays
    /// through the right earphone's level).
    public func calibration(ears: [Ear]) -> Calibration {
        Calibration(
            inputDBSPLAtFullScale: inputDBSPL, outputDBSPLAtFullScale: ears.map { $0 == .left ? outputLeftDBSPL : outputRightDBSPL },
            outputResponseDB: ears.map { ear in
                let measured = ear == .left ? responseLeft : responseRight
                return Dictionary(uniqueKeysWithValues: measured.map { (Double($0.key), $0.value) })
            }, maximumGainDB: maxGainDB)
    }
}
