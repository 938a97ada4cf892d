import Foundation
import RibbitAudiometry
import RibbitControl
import RibbitPrescription
import Testing

/// The typed request and its wire: every request a front end can make reads back as itself from
/// the flat JSON line docs/control-protocol.md documents, and every line that cannot be a
/// request is refused in one line that names what is wrong.
@Suite struct ControlRequestTests {
    static func everyKind() throws -> [ControlRequest] {
        [
            .status, .pause(lease: false), .pause(lease: true), .resume, .bypass(on: true), .bypass(on: false),
            .load(PrescriptionUpload(text: "RIBBIT-RX 1\nname: a\n", source: "a.rx")),
            .load(PrescriptionUpload(text: "RIBBIT-RX 1\n", source: "web upload: b.rx", trial: try TrialLength(seconds: 900))),
            .use(.entry("7")), .use(.newest(environment: "noisy")), .keep, .revert, .stop, .dump, .voice,
            .tone(.stop),
            .tone(.play(try ToneSignal(frequencyHz: 1000, levelDBFS: nil, timing: .steady(seconds: 5)))),
            .tone(
                .play(
                    try ToneSignal(
                        frequencyHz: 4000, levelDBFS: -24, ear: .left, timing: .pulsed(try TonePulses(count: 3, onMs: 200, offMs: 200))))),
            .volume(.set(dB: -3)), .volume(.step(dB: 1.5)),
            .program(.named(.music)), .program(.auto), .program(.prescribed),
            .hearingTestStart(try HearingTestRequest()),
            .hearingTestStart(
                try HearingTestRequest(
                    transducer: .tdh39, ears: [.left], frequenciesHz: [1000, 500, 1000], answersNameTheEar: true, seed: 9)),
            .hearingTestAnswer(ear: nil), .hearingTestAnswer(ear: .right), .hearingTestStop, .measure(connections: nil),
            .measure(connections: [try PortConnection(source: "system:capture_1", destination: "ribbit:in_left")]),
        ]
    }

    @Test func everyRequestReadsBackAsItself() throws {
        let kinds = try Self.everyKind()
        #expect(Set(kinds.map(\.command)) == Set(ControlRequest.Command.allCases), "a command without a round trip here")
        for request in kinds {
            var line = ControlProtocol.encode(request)
            #expect(line.last == 0x0A)
            line.removeLast()
            let text = String(decoding: line, as: UTF8.self)
            #expect(text.contains(#""command":"\#(request.command.rawValue)""#) && text.contains(#""version":1"#), "\(text)")
            #expect(!text.contains("_0") && !text.contains("{\"\(request.command.rawValue)\""), "flat, as documented: \(text)")
            #expect(try ControlRequest.read(line).get() == request, "\(text)")
        }
    }

    /// Lines written by hand, in the protocol's own words: the defaults it documents.
    @Test func aLineTypedByHandGetsTheDocumentedDefaults() throws {
        func read(_ line: String) throws -> ControlRequest { try ControlRequest.read(Data(line.utf8)).get() }
        #expect(try read(#"{"command":"pause"}"#) == .pause(lease: nil))
        // A field no command reads is ignored, whatever it holds; a whole 2^64 - 1 stays whole.
        #expect(try read(#"{"command":"status","x":1e400,"on":"yes"}"#) == .status)
        #expect(try read(#"{"command":"measure"}"#) == .measure(connections: nil))
        #expect(
            try read(#"{"command":"hearing-test-start","seed":18446744073709551615}"#)
                == .hearingTestStart(try HearingTestRequest(seed: .max)))
        #expect(try read(#"{"command":"load","prescription":"x"}"#) == .load(PrescriptionUpload(text: "x", source: "the prescription")))
        #expect(try read(#"{"command":"tone","seconds":0}"#) == .tone(.stop))
        #expect(
            try read(#"{"command":"tone","frequencyHz":500}"#)
                == .tone(.play(try ToneSignal(frequencyHz: 500, levelDBFS: nil, ear: .both, timing: .steady(seconds: 30)))))
        #expect(try read(#"{"command":"program","program":"Noisy"}"#) == .program(.named(.noisy)))
        #expect(try read(#"{"command":"program","program":"default"}"#) == .program(.prescribed))
        #expect(
            try read(#"{"command":"hearing-test-start"}"#)
                == .hearingTestStart(
                    try HearingTestRequest(transducer: .consumer, ears: [.right, .left], frequenciesHz: HearingTest.Plan.clinicalOrder)))
        // An environment wins over a selector, as the history's lookup always did.
        #expect(try read(#"{"command":"use","selector":"3","environment":"music"}"#) == .use(.newest(environment: "music")))
    }

    @Test func whatCannotBeARequestIsRefusedInOneLine() {
        let refusals: [(String, String)] = [
            ("hello", "malformed request"), ("{}", "malformed request"), (#"{"command":"explode"}"#, "malformed request"),
            (#"{"command":7}"#, "malformed request"), (#"{"version":2,"command":"status"}"#, "restart the daemon"),
            (#"{"command":"bypass"}"#, #"bypass needs "on""#),
            (#"{"command":"load"}"#, #"load needs a "prescription""#),
            (#"{"command":"load","prescription":"x","trialSeconds":0}"#, "a trial lasts from 1 s to 7 days, not 0 s"),
            (#"{"command":"load","prescription":"x","trialSeconds":604801}"#, "a trial lasts from 1 s to 7 days"),
            (#"{"command":"use"}"#, #"use needs a "selector""#),
            (#"{"command":"tone","frequencyHz":5}"#, "from 20 to 20000"),
            (#"{"command":"tone"}"#, "from 20 to 20000"),
            (#"{"command":"tone","frequencyHz":1000,"seconds":-1}"#, "from 0 (stop) to 60"),
            (#"{"command":"tone","frequencyHz":1000,"ear":"middle"}"#, #"tone's ear is "left", "right" or "both""#),
            (#"{"command":"tone","frequencyHz":1000,"pulses":3}"#, "onMs is from 50 to 5000"),
            (#"{"command":"volume"}"#, #"volume needs "volumeDB""#),
            (#"{"command":"volume","volumeDB":1,"volumeStepDB":1}"#, "not both"),
            (#"{"command":"program"}"#, #"program needs "program""#),
            (#"{"command":"program","program":"opera"}"#, #"no program "opera""#),
            (#"{"command":"hearing-test-start","transducer":"earbuds"}"#, "headphones 'earbuds' are unknown"),
            (#"{"command":"hearing-test-start","testEars":["right","right"]}"#, "each once"),
            (#"{"command":"hearing-test-start","testEars":["middle"]}"#, #"not "middle""#),
            (#"{"command":"hearing-test-start","testEars":[]}"#, "at least one ear"),
            (#"{"command":"hearing-test-start","frequenciesHz":[1000,1000,1000]}"#, "each at most twice"),
            (#"{"command":"hearing-test-start","frequenciesHz":[1234]}"#, "no RETSPL for 1234 Hz"),
            (#"{"command":"hearing-test-answer","ear":"both"}"#, #"hearing-test-answer's "ear": an ear is "left" or "right", not "both""#),
            (#"{"command":"bypass","on":"yes"}"#, #"bypass's "on" must be true or false"#),
            (#"{"command":"load","prescription":"x","trialSeconds":"900"}"#, "a trial lasts a whole number of seconds"),
            (#"{"command":"load","prescription":7}"#, #"load's "prescription" must be a string"#),
            (#"{"command":"load","prescription":"x","trialSeconds":900.5}"#, "a trial lasts a whole number of seconds"),
            (#"{"command":"tone","frequencyHz":1000,"pulses":2.5,"onMs":200,"offMs":200}"#, "pulses are a whole number from 1 to 10"),
            (#"{"command":"hearing-test-start","frequenciesHz":[1000.5]}"#, "frequenciesHz lists whole numbers of Hz"),
            (#"{"command":"hearing-test-start","seed":-1}"#, "seed is a whole number"),
            (#"{"command":"hearing-test-start","testEars":"right"}"#, #"hearing-test-start's "testEars" must be a list"#),
            (#"{"command":"hearing-test-start","testEars":[7]}"#, #"hearing-test-start's "testEars[0]" must be a string"#),
            (#"{"command":"bypass","on":1e400}"#, #"bypass's "on" must be true or false"#),
            (#"{"command":"measure","connections":[["a"]]}"#, "[source, destination] pairs"),
            (#"{"command":"measure","connections":[["","b"]]}"#, "[source, destination] pairs"),
        ]
        for (line, expected) in refusals {
            switch ControlRequest.read(Data(line.utf8)) {
            case .success(let request): Issue.record("\(line) read as \(request)")
            case .failure(let refusal):
                #expect(refusal.description.contains(expected) && !refusal.description.contains(where: \.isNewline), "\(line): \(refusal)")
            }
        }
    }
}
