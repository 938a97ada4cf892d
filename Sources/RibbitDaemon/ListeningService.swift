import Logging
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitPrescription

/// What the wearer listens with (`program` and `volume` requests) and its part of the status.
/// The program: a named one, the prescription's default, or auto, where the scene classifier
/// listens to the input's band levels and the program follows the scene it holds. The volume:
/// the compressor's trim, nothing designed again.
final class ListeningService: DaemonService {
    let name = "listening"
    private let audio: AudioService
    private let fitting: FittingService
    private let log: Logger
    /// The automatic program's classifier (nil until auto listens; reset when auto is chosen again).
    private var scenes: SceneClassifier?
    /// Plays what the fitting state now asks for (the daemon's, with its crossfade).
    var play: () -> Void = {}
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }

    init(audio: AudioService, fitting: FittingService, log: Logger) {
        self.audio = audio
        self.fitting = fitting
        self.log = log
    }

    /// The automatic program: each ~100 ms of band levels goes to the scene classifier while
    /// auto is on and the prescription plays; when its (hysteresis-held) scene changes, the
    /// program follows with a crossfade. The reason is refreshed for `status` every frame.
    func listen(bands: [Double], broadband: Double) {
        let state = fitting.state
        guard state.listening.automatic, state.active != nil, state.output == .processing else { return }
        if scenes?.bandCentresHz.count != bands.count {
            scenes = SceneClassifier(bandCentresHz: Array(Camfit.defaultCentresHz.prefix(bands.count)), initial: .quiet)
        }
        scenes?.add(SceneFrame(bandLevelsDBSPL: bands.map { Float($0) }, broadbandDBSPL: Float(broadband)))
        guard let scenes, scenes.features != nil else { return }
        let program: Program =
            switch scenes.scene {
            case .quiet: .quiet
            case .noisy: .noisy
            case .music: .music
            }
        let changed = fitting.automaticPick?.program != program
        fitting.automaticPick = (program, scenes.reason)
        if changed {
            log.info("auto program: \(scenes.reason)")
            play()
        }
    }

    /// Auto starts again from nothing heard (chosen anew, or back after a live measurement).
    func listenAfresh() {
        scenes = nil
        fitting.automaticPick = nil
    }

    /// The listening program: a name, auto (ribbit picks) or the prescription's own.
    func choose(_ choice: ProgramChoice) -> ControlReply {
        switch choice {
        case .auto:
            if !fitting.listening.automatic { listenAfresh() }
            fitting.listening.automatic = true
        case .prescribed:
            fitting.listening.automatic = false
            fitting.listening.program = nil
        case .named(let chosen):
            fitting.listening.automatic = false
            fitting.listening.program = chosen
        }
        play()
        log.info("program \(fitting.state.program.rawValue) (\(fitting.state.programChosenBy.rawValue))")
        return reply()
    }

    /// The wearer's volume: set or stepped, clamped to the range, remembered; only the
    /// compressor's trim moves (no design, no new plan), under each band's maximum gain. The
    /// output limits do not move with it.
    func volume(_ change: VolumeChange) throws(RequestFailure) -> ControlReply {
        guard fitting.state.active != nil else {
            throw RequestFailure("no prescription is loaded, and the volume trims a prescription's gain; `ribbitd load RX` first")
        }
        let asked: Double =
            switch change {
            case .set(let dB): dB
            case .step(let dB): fitting.listening.volumeDB + dB
            }
        guard asked.isFinite else { throw RequestFailure("the volume must be a number of dB") }
        let range = fitting.state.active?.prescription.volumeRange ?? Listening.volumeRangeDB
        fitting.listening.volumeDB = min(max(asked, range.lowerBound), range.upperBound)
        audio.setTrim(fitting.state.trimDB)
        log.info("volume \(Prescription.number(fitting.listening.volumeDB)) dB")
        return reply()
    }

    /// The program, volume and what the compressor does with the active prescription (nil without one).
    var status: DaemonStatus.Listening? {
        let state = fitting.state
        guard let active = state.active else { return nil }
        let program = state.program
        let fitted = summary(of: active, program: program)
        let range = active.prescription.volumeRange
        var listening = DaemonStatus.Listening(
            program: program, chosenBy: state.programChosenBy,
            reason: state.listening.automatic ? state.automaticPick?.reason : nil,
            volumeDB: state.listening.volumeDB, volumeMinDB: range.lowerBound, volumeMaxDB: range.upperBound,
            noiseReduction: program.noiseReductionStrength, bands: fitted.bandCentresHz.count, compressing: fitted.compressing,
            outputLimitDBSPL: fitted.outputLimitDBSPL, outputLimitReason: fitted.outputLimitReason)
        listening.shortfall = fitted.shortfall
        listening.clinicalNote = fitted.clinicalNote
        if state.output == .processing, let activity = audio.activity, activity.inputDBSPL.count == fitted.bandCentresHz.count {
            func tenths(_ values: [Double]) -> [Double] { values.map { ($0 * 10).rounded() / 10 + 0 } }
            listening.activity = DaemonStatus.Activity(
                bandCentresHz: fitted.bandCentresHz, inputDBSPL: tenths(activity.inputDBSPL),
                compressionDB: tenths(activity.compressionDB), followingSpeech: activity.followingSpeech.map { ($0 * 100).rounded() / 100 },
                noiseReductionDB: program.noiseReductionStrength > 0 ? tenths(activity.noiseReductionDB) : nil,
                outputLimitDB: tenths(activity.outputLimitDB))
        }
        return listening
    }

    /// What the status says of the fitting itself: only another prescription or program changes
    /// it (the calibration is fixed until restart). Working it out is most of a status's CPU, so
    /// a volume step and a screen's once-a-second poll reuse it.
    private struct FittingSummary {
        let prescription: Prescription
        let program: Program
        let trusted: Bool
        let bandCentresHz: [Double]
        let compressing: Bool
        let outputLimitDBSPL: [Double]
        let outputLimitReason: String?
        let shortfall: String?
        let clinicalNote: String?
    }
    private var lastSummary: FittingSummary?

    private func summary(of active: FittingState.Active, program: Program) -> FittingSummary {
        if let last = lastSummary, last.program == program, last.trusted == active.trusted, last.prescription == active.prescription {
            return last
        }
        let rx = program.adjust(active.prescription)
        let ears = [Ear.left, .right].map {
            CompressorFitting.settings(rx, ear: $0, trusted: active.trusted) ?? CompressorFitting.passThrough(rx, trusted: active.trusted)
        }
        let compressing = ears.contains { $0.bands.contains { $0.ratio > 1 } }
        let deliveries = CompressorFitting.deliveries(rx, trusted: active.trusted, calibration: audio.calibration)
        let made = FittingSummary(
            prescription: active.prescription, program: program, trusted: active.trusted, bandCentresHz: ears[0].bands.map(\.centreHz),
            compressing: compressing,
            outputLimitDBSPL: ears.map { $0.bands.map(\.limitDBSPL).max() ?? CompressorFitting.otcLimitDBSPL },
            outputLimitReason: CompressorFitting.capReason(rx, trusted: active.trusted, compressing: compressing),
            shortfall: CompressorFitting.shortfallSummary(rx, trusted: active.trusted, calibration: audio.calibration),
            clinicalNote: ClinicalNote.text(rx, deliveries: deliveries, maximumDB: GainMaximum.headphonesDB(audio.calibration)))
        lastSummary = made
        return made
    }
}
