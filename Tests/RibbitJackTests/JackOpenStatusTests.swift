import CJack
import Testing

@testable import RibbitJack

/// jack_client_open's status bits: each failure is named for what it is, not "no server".
@Suite struct JackOpenStatusTests {
    @Test func whatJackd2AnswersIsNamedForWhatFailed() {
        // A missing server (jackd2: JackFailure | JackServerFailed).
        #expect(JackOpenStatus.problems(0x11) == [.serverNotFound])
        #expect(JackOpenStatus.openFailure(0x11, clientName: "ribbit").hasPrefix("no JACK server is running"))
        // A name already taken under JackUseExactName (jackd2: JackFailure | JackServerError).
        #expect(JackOpenStatus.problems(0x21) == [.nameTaken])
        let taken = JackOpenStatus.openFailure(0x21, clientName: "ribbit")
        #expect(taken.contains("refused the client name 'ribbit'") && taken.hasSuffix("(JACK status 0x21)"))
        #expect(!taken.contains("no JACK server"))
    }

    @Test(arguments: [
        (JackVersionError.rawValue, JackOpenStatus.Problem.versionMismatch, "protocol version"),
        (JackShmFailure.rawValue, .sharedMemory, "shared memory"),
        (JackNameNotUnique.rawValue, .nameTaken, "client name"),
        (JackInvalidOption.rawValue, .invalidOption, "options as invalid"),
        (JackNoSuchClient.rawValue, .noSuchClient, "no client by that name"),
        (JackLoadFailure.rawValue, .loadFailed, "could not load"),
        (JackInitFailure.rawValue, .initFailed, "could not initialise"),
        (JackBackendError.rawValue, .backendFailed, "audio backend"),
        (JackClientZombie.rawValue, .zombie, "thrown this client out"),
    ])
    func eachBitIsNamed(bit: UInt32, problem: JackOpenStatus.Problem, words: String) {
        let bits = JackFailure.rawValue | bit
        #expect(JackOpenStatus.problems(bits) == [problem])
        let message = JackOpenStatus.openFailure(bits, clientName: "ribbit")
        #expect(message.contains(words), "\(message)")
        #expect(!message.contains("no JACK server is running"))
        #expect(!message.contains("JACK refused the client"))
    }

    @Test func severalCausesAreAllSaidAndABareFailureIsSaidPlainly() {
        let both = JackOpenStatus.openFailure(JackFailure.rawValue | JackShmFailure.rawValue | JackVersionError.rawValue, clientName: "x")
        #expect(both.contains("protocol version") && both.contains("shared memory"))
        #expect(JackOpenStatus.problems(JackFailure.rawValue) == [.otherFailure])
        #expect(JackOpenStatus.openFailure(0x01, clientName: "x") == "JACK refused the client (JACK status 0x1)")
    }
}
