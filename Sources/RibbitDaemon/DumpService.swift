import RibbitControl

/// The debug dump: while dump clients listen, the RT thread copies each period into the ring
/// and 20 times a second a frame goes to every client. With none, the RT thread does nothing
/// extra. One publisher per JACK session.
final class DumpService: DaemonService {
    let name = "dump"
    private let audio: AudioService
    private let control: ControlService
    private let started: Double
    /// What the frames say about the prescription and the output mode.
    private let describe: () -> (output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?)
    private var publisher: DumpPublisher?
    /// The session the publisher drains (a new session needs a new publisher).
    private var sessionID: ObjectIdentifier?
    private(set) var listeners = 0

    init(
        audio: AudioService, control: ControlService, started: Double,
        describe: @escaping () -> (output: DaemonStatus.Output, prescription: DaemonStatus.ActivePrescription?)
    ) {
        self.audio = audio
        self.control = control
        self.started = started
        self.describe = describe
    }

    func tick(now: Double) {
        listeners = control.subscriberCount
        guard let session = audio.session, let running = audio.running, let server = control.server else {
            publisher = nil
            return
        }
        let listening = listeners > 0
        let id = ObjectIdentifier(session.processor)
        if listening != session.processor.dumpEnabled.load(ordering: .relaxed) || id != sessionID {
            publisher = listening ? DumpPublisher(processor: session.processor) : nil
            sessionID = id
            session.processor.dumpEnabled.store(listening, ordering: .relaxed)
        }
        guard listening, let publisher, publisher.isDue(now: now) else { return }
        let (output, prescription) = describe()
        let frame = publisher.frame(
            from: session.processor, running: running, time: now - started,
            xruns: session.client.events.xruns.load(ordering: .relaxed), output: output, prescription: prescription)
        server.broadcast(frame.jsonLine(), now: now)
    }

    func stop(deadline: Double) { publisher = nil }
}
