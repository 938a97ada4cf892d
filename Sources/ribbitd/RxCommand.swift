import ArgumentParser

/// `ribbitd rx ...`: working with prescriptions, their codes and the keys that sign them.
struct RxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rx",
        abstract: "Read, check and make prescriptions and their QR codes.",
        subcommands: [RxShowCommand.self, RxMakeCommand.self, RxKeygenCommand.self, RxTrustCommand.self, RxUntrustCommand.self]
    )
}
