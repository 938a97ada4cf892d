import Logging
import RibbitDSP
import RibbitFitting
import RibbitJack
import RibbitPrescription
import RibbitSettings

/// What the engine plays: a prescription's filters, or a pure delay under a ceiling (bypass,
/// and pass-through with no prescription). Every choice has a ceiling of at most 0 dBFS.
enum FilterChoice: Sendable, Equatable {
    case delay(ceilingDBFS: Double)
    case prescription(Prescription)

    /// The output ceiling this choice plays under, in dBFS (the engine never exceeds 0).
    var ceilingDBFS: Double {
        switch self {
        case .delay(let dBFS): min(dBFS, 0)
        case .prescription(let prescription): min(prescription.maxOutputDBFS, 0)
        }
    }

    /// Fits and designs the filters for a sample rate (off the RT thread; milliseconds).
    func prepare(sampleRate: Double) throws(EngineError) -> RunningFilters {
        let geometry = EngineGeometry.standard(sampleRate: sampleRate)
        switch self {
        case .delay(let ceilingDBFS):
            let delay = FilterSet.delay(geometry.filterDelayFrames, channelCount: 2, fftLength: geometry.fftLength, ceilingDBFS: ceilingDBFS)
            return RunningFilters(filters: delay, fitting: nil)
        case .prescription(let prescription):
            let fitting = try Fitting(prescription: prescription, sampleRate: sampleRate, geometry: geometry)
            return RunningFilters(filters: fitting.filterSet(ears: [.left, .right]), fitting: fitting)
        }
    }
}

/// A running JACK client with its processor: opened, activated and wired in one go on the JACK
/// worker thread (every step may wait for the server), then handed to the control thread.
struct AudioSession {
    let client: JackClient
    let processor: RealtimeProcessor
    let running: RunningFilters
    var period: Int
    var xrunsLogged = 0

    /// Everything opening needs, captured on the control thread.
    struct Plan: Sendable {
        let config: DaemonConfig
        let choice: FilterChoice
        let paused: Bool
    }

    static func open(_ plan: Plan, log: Logger) throws(JackError) -> AudioSession {
        let client = try JackClient(name: plan.config.clientName)
        let rate = client.sampleRate
        let engine: OverlapSaveEngine
        let prepared: RunningFilters
        do {
            prepared = try plan.choice.prepare(sampleRate: rate)
            engine = try OverlapSaveEngine(
                geometry: .standard(sampleRate: rate), sampleRate: rate, filters: prepared.filters, blockSize: client.bufferSize)
        } catch {
            client.close()
            throw JackError("JACK runs at \(Int(rate)) Hz: \(error)")
        }
        let processor = RealtimeProcessor(engine: engine, period: client.bufferSize)
        processor.paused.store(plan.paused, ordering: .relaxed)
        do {
            try client.activate(with: processor)
        } catch {
            client.close()
            throw error
        }
        log.info(
            "JACK: client \(client.name), \(Int(rate)) Hz, period \(client.bufferSize), added latency \(processor.latencyFrames) frames (\(Daemon.milliseconds(processor.latencyFrames, rate)) ms)"
        )
        wire(client, plan.config, log: log)
        return AudioSession(client: client, processor: processor, running: prepared, period: client.bufferSize)
    }

    /// Connects our ports as configured; a port that cannot be connected is logged, not fatal
    /// (the wearer can wire it by hand, and sound through the others still works).
    private static func wire(_ client: JackClient, _ config: DaemonConfig, log: Logger) {
        guard config.connect else { return }
        let sources = config.inputs ?? client.ports(physicalSources: true).prefix(2).map(\.name)
        let sinks = config.outputs ?? client.ports(physicalSources: false).prefix(2).map(\.name)
        let own = client.ownPorts
        if sources.isEmpty { log.warning("JACK offers no capture port; connect \(own[0]) and \(own[1]) yourself") }
        if sinks.isEmpty { log.warning("JACK offers no playback port; connect \(own[2]) and \(own[3]) yourself") }
        var pairs = [(String, String)]()
        // One source (a mono microphone) feeds both ears; one sink gets the left ear.
        for ear in 0..<2 where !sources.isEmpty { pairs.append((sources[min(ear, sources.count - 1)], own[ear])) }
        for ear in 0..<min(2, sinks.count) { pairs.append((own[2 + ear], sinks[ear])) }
        for (source, destination) in pairs {
            do {
                try client.connect(source, destination)
                log.info("connected \(source) -> \(destination)")
            } catch {
                log.error("\(error.description)")
            }
        }
    }
}
