import ArgumentParser
import RibbitAudioFile
import RibbitPrescription

/// `--ear left|right` on the command line.
extension Ear: ExpressibleByArgument {}

func openAudio(_ path: String) throws(RibbitError) -> AudioFileReader {
    do { return try AudioFileReader(path: path) } catch { throw .noInput(error.description) }
}

/// Which ear each channel of a file is for: stereo is left then right; mono needs `--ear`.
func ears(channelCount: Int, ear: Ear?, path: String) throws(RibbitError) -> [Ear] {
    switch (channelCount, ear) {
    case (1, let ear?): return [ear]
    case (1, nil): throw .usage("\(path) is mono; say whose fitting to apply with --ear left or --ear right")
    case (2, nil): return [.left, .right]
    case (2, .some): throw .usage("--ear is for mono files; a stereo file gets the left fitting on channel 1 and the right on channel 2")
    default: throw .data("\(path) has \(channelCount) channels; ribbit processes mono or stereo (one channel per ear)")
    }
}
