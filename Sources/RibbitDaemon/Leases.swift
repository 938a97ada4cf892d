import RibbitAudioLink
import RibbitFitting

/// What clients hold for as long as their control connection stays open (`ControlServer.hold`):
/// the voice games' pause, a hearing test, a live measurement. When the connection closes, for
/// whatever reason (the page, the command or its terminal went away, ribbit-web died, a
/// SIGKILL), the daemon asks `end` what that connection held and undoes it, so the aid comes
/// back as it was. A pure value: the rules are here, the daemon carries them out.
struct Leases: Equatable {
    /// Connections that hold the pause. Only a pause a lease started is theirs: one the wearer
    /// asked for, or a pause or resume the wearer asked for since, is the wearer's to end.
    private(set) var pauseHolders: Set<Int32> = []
    /// The connection that started the hearing test.
    private(set) var hearingTest: Int32?
    /// The live measurement: its connection, the wearer's program and volume before it, and the
    /// JACK connections it took away.
    private(set) var measurement: Measurement?

    struct Measurement: Equatable {
        let connection: Int32
        let listening: Listening
        let connections: [AudioMessage.Connection]
    }

    /// What to undo when a connection closes.
    enum Undo: Equatable {
        case resume
        case stopHearingTest
        case restore(Measurement)
    }

    /// A lease on the pause; false when it adds nothing (the wearer had paused: their pause).
    mutating func holdPause(_ connection: Int32, outputWasPaused: Bool) -> Bool {
        guard !outputWasPaused || !pauseHolders.isEmpty else { return false }
        pauseHolders.insert(connection)
        return true
    }

    /// The wearer paused or resumed: from now on the pause is theirs, no lease ends it.
    mutating func wearerChosePause() { pauseHolders = [] }

    mutating func holdHearingTest(_ connection: Int32) { hearingTest = connection }

    mutating func holdMeasurement(_ measurement: Measurement) { self.measurement = measurement }

    /// A measurement held by another connection that is still open blocks a new one.
    func measurementHeld(byOtherThan connection: Int32) -> Bool { measurement.map { $0.connection != connection } ?? false }

    /// `connection` closed: what it held, to undo. The pause resumes when its last holder goes.
    mutating func end(_ connection: Int32) -> [Undo] {
        var undo: [Undo] = []
        if pauseHolders.remove(connection) != nil, pauseHolders.isEmpty { undo.append(.resume) }
        if hearingTest == connection {
            hearingTest = nil
            undo.append(.stopHearingTest)
        }
        if let held = measurement, held.connection == connection {
            measurement = nil
            undo.append(.restore(held))
        }
        return undo
    }
}
