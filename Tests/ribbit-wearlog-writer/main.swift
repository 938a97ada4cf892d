import Foundation
import Glibc
import RibbitStore

// A child for the data log's crash tests: `ribbit-wearlog-writer PATH` adds one day after
// another (day i from 2020-01-01), one transaction each, printing i once it is committed.
// SIGKILL it, or run it under a file-size limit, and the days it printed must all be there.
// A write that fails is said on stderr, as the daemon logs it, and ends with status 1.
signal(SIGXFSZ, SIG_IGN)  // over the file-size limit, write() fails with EFBIG instead
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: ribbit-wearlog-writer PATH\n".utf8))
    exit(64)
}
do {
    let log = try WearLog(path: arguments[1])
    for i in 0..<100_000 {
        try log.add([WearLogSample.day(i)])
        FileHandle.standardOutput.write(Data("\(i)\n".utf8))  // unbuffered: a write(2) per line
    }
} catch {
    FileHandle.standardError.write(Data("data log: cannot write \(arguments[1]): \(error)\n".utf8))
    exit(1)
}

/// Day i's counts; WearLogTests.sampleDay computes the same from its own copy of the formula.
enum WearLogSample {
    static func day(_ i: Int) -> WearLog.Day {
        var day = WearLog.Day(date: WearLog.date(of: Date(timeIntervalSince1970: 1_577_880_000 + Double(i) * 86400), timeZone: .gmt))
        day.processingSeconds = ["quiet": Double(3600 + i), "noisy": Double(1800 + 2 * i)]
        day.noiseReductionSeconds = Double(1800 + 2 * i)
        day.bypassedSeconds = Double(i % 60)
        day.levelSeconds = Dictionary(uniqueKeysWithValues: WearLog.binEdges.map { ($0, $0 * 10 + i) })
        day.programSwitches = i % 7
        day.volumeChanges = i % 5
        day.xruns = i % 3
        day.starts = 1
        return day
    }
}
