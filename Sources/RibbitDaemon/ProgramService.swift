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

    var handlers: [ControlRequest.Command: ControlService.Handler] {
        [.program: { [unowned self] request, _ throws(RequestFailure) in try program(request) }]
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

    /// The listening program: a name, auto (ribbit picks) or default (the prescription's env).
    private func program(_ request: ControlRequest) throws(RequestFailure) -> ControlReply {
        let names = Program.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = request.program?.lowercased() else {
            throw RequestFailure("program needs \"program\": \(names), auto or default")
        }
        switch name {
        case "auto":
            if !fitting.listening.automatic { listenAfresh() }
            fitting.listening.automatic = true
        case "default":
            fitting.listening.automatic = false
            fitting.listening.program = nil
        default:
            guard let chosen = Program(rawValue: name) else {
                throw RequestFailure("no program \"\(name)\"; the programs are \(names), auto and default")
            }
            fitting.listening.automatic = false
            fitting.listening.program = chosen
        }
        play()
        log.info("program \(fitting.state.program.rawValue) (\(fitting.state.programChosenBy))")
        return reply()
    }
}
