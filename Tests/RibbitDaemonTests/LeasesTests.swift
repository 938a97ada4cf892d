import RibbitAudioLink
import RibbitFitting
import Testing

@testable import RibbitDaemon

/// The lease rules on their own: what a closed connection held, and what the daemon undoes.
@Suite struct LeasesTests {
    @Test func aPauseResumesWhenItsLastHolderGoesUnlessTheWearerTookIt() {
        var leases = Leases()
        let held1 = leases.holdPause(7, outputWasPaused: false)
        #expect(held1)
        let held2 = leases.holdPause(8, outputWasPaused: true)
        #expect(held2, "a second game joins the first's pause")
        var ended = leases.end(7)
        #expect(ended == [])
        ended = leases.end(8)
        #expect(ended == [.resume])
        ended = leases.end(8)
        #expect(ended == [], "ended once")

        let held3 = leases.holdPause(9, outputWasPaused: true)
        #expect(!held3, "the wearer's own pause is not a game's to end")
        ended = leases.end(9)
        #expect(ended == [])

        let held4 = leases.holdPause(10, outputWasPaused: false)
        #expect(held4)
        leases.wearerChosePause()
        ended = leases.end(10)
        #expect(ended == [], "the wearer paused or resumed since: theirs now")
    }

    @Test func aTestAndAMeasurementEndWithTheirConnections() {
        var leases = Leases()
        leases.holdHearingTest(3)
        let measurement = Leases.Measurement(
            connection: 4, listening: Listening(program: .music, volumeDB: 4),
            connections: [.init(source: "system:capture_1", destination: "ribbit:in_left")])
        leases.holdMeasurement(measurement)
        #expect(leases.measurementHeld(byOtherThan: 5) && !leases.measurementHeld(byOtherThan: 4))
        var ended = leases.end(5)
        #expect(ended == [])
        ended = leases.end(3)
        #expect(ended == [.stopHearingTest])
        ended = leases.end(4)
        #expect(ended == [.restore(measurement)])
        #expect(!leases.measurementHeld(byOtherThan: 5))
    }
}
