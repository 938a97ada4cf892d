import Logging
import RibbitControl
import RibbitDSP
import RibbitFitting
import RibbitPrescription

/// The listening program (`program` requests): a named one, the prescription's default, or
/// auto, where the scene classifier listens to the input's band levels and the program follows
/// the scene it holds.
final class ProgramService: DaemonService {
    let name = "program"
    private let fitting: FittingService
    private let log: Logger
    /// The automatic program's classifier (nil until auto listens; reset when auto is chosen again).
    private var scenes: SceneClassifier?
    /// Plays what the fitting state now asks for (the daemon's, with its crossfade).
    var play: () -> Void = {}
    /// The reply to a request that changed the state: the daemon's, with its status.
    var reply: () -> ControlReply = { ControlReply(ok: true) }

    init(fitting: FittingService, log: Logger) {
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
}
