import ArgumentParser

/// `ribbitd rx ...`: working with prescriptions (show now; make, keygen, trust later).
struct RxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rx",
        abstract: "Read, check and make prescriptions and their QR codes.",
        subcommands: [RxShowCommand.self, RxMakeCommand.self, RxKeygenCommand.self, RxTrustCommand.self]
    )
}
