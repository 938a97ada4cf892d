// swift-tools-version:6.1
import PackageDescription

// Release builds bind every library symbol at load time, so the first audio callback
// never runs the dynamic linker (see docs/architecture.md, "Real-time rules").
let bindNow: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"])]

// The modules that compute on signals and pictures are optimised in debug builds too: the unit
// tests run minutes of audio and photo-like pictures through them, many times slower
// unoptimised, and share two cores with the daemon tests' real-time audio. (Release builds are
// optimised anyway; the tests keep @testable access.)
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "ribbit",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ribbitd", targets: ["ribbitd"]),
        .executable(name: "ribbit-audio", targets: ["ribbit-audio"]),
        .executable(name: "ribbit-web", targets: ["ribbit-web"]),
        .library(name: "RibbitDSP", targets: ["RibbitDSP"]),
        // For the libFuzzer targets in fuzz/.
        .library(name: "RibbitPrescription", targets: ["RibbitPrescription"]),
        .library(name: "RibbitImage", targets: ["RibbitImage"]),
        .library(name: "RibbitQR", targets: ["RibbitQR"]),
        // Test-only: LD_PRELOAD shim that counts allocations and locks in JACK process callbacks.
        .library(name: "RibbitRTAudit", type: .dynamic, targets: ["RibbitRTAudit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The web app's HTTP server, in ribbit-web only. No traits: swift-configuration is not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // HTTPS for the web app on a LAN: TLS, and its self-signed certificate.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // NIO's own types the web app's connection guard and peer check use (Hummingbird's base).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // The Live screen's WebSocket, in ribbit-web only.
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        // Thin C system-library targets: nothing else imports C.
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CZbar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // glibc's malloc.h: ribbit-web gives back freed pages when its last stream closes.
        .systemLibrary(name: "CMalloc"),

        // The real-time primitives: config slot, seqlock, SPSC ring, block/hop adapter; the rules.
        .target(name: "RibbitRealtime"),
        // System calls retried when a signal interrupts them (EINTR). Glibc only.
        .target(name: "RibbitSystem"),
        // Pure math: windows, FIR design, the staged overlap-save engine, limiter. No I/O, no Foundation.
        .target(name: "RibbitDSP", dependencies: ["CFFTW", "RibbitRealtime"], swiftSettings: optimizedInDebug),
        // The FFTW wisdom file in $XDG_CACHE_HOME/ribbit/, for the audio process and the CLI. Glibc only.
        .target(name: "RibbitWisdomFile", dependencies: ["RibbitDSP", "RibbitSystem"]),
        // Seeded test signals (noise, sines, impulses) for the tests, the probe and the bench.
        .target(name: "RibbitSignals", swiftSettings: optimizedInDebug),
        // The prescription text format and the fitting rules. No I/O.
        .target(name: "RibbitPrescription", dependencies: ["RibbitSystem"]),
        // Clinical plot conventions shared by every plot (dump SVG, terminal view, later reports and
        // web pages): ear order, colours and symbols, the square audiogram form, round ticks. No Foundation.
        .target(name: "RibbitPlot", dependencies: ["RibbitPrescription", "RibbitVoice"]),
        // The hearing test's procedure (a state machine), its result and the RETSPL tables. No I/O, no Foundation.
        .target(name: "RibbitAudiometry", dependencies: ["RibbitPrescription", "RibbitSystem"], swiftSettings: optimizedInDebug),
        // Voice exercises for children: the microphone's pitch, voicing and level analysis, sound
        // events, the five games as state machines, their progress figures. No I/O, no Foundation.
        .target(name: "RibbitVoice", dependencies: ["RibbitDSP"], swiftSettings: optimizedInDebug),
        // A stored hearing test for people: its text lines and the printable HTML report, for
        // `ribbitd audiogram` and the web app's Hearing test screen.
        .target(name: "RibbitAudiogramReport", dependencies: ["RibbitAudiometry", "RibbitPlot", "RibbitPrescription", "RibbitSettings"]),
        // Prescription -> per-ear combination curves -> filters for the engine.
        .target(name: "RibbitFitting", dependencies: ["RibbitDSP", "RibbitPrescription", "RibbitSettings", "RibbitSignals"], swiftSettings: optimizedInDebug),
        // The measurement kit: levels, a tone's amplitude and distortion, Welch
        // spectra and third-octave band levels, for the dump, `verify`, `measure` and the tests. No I/O.
        .target(name: "RibbitMeasure", dependencies: ["RibbitDSP"], swiftSettings: optimizedInDebug),
        // `ribbitd verify`'s measurements (ANSI S3.22-style test box and target match) on the real
        // engine as the daemon configures it, and its HTML report. No I/O, no Foundation.
        .target(name: "RibbitVerify", dependencies: ["RibbitDSP", "RibbitFitting", "RibbitMeasure", "RibbitPrescription", "RibbitSignals", "RibbitPlot"], swiftSettings: optimizedInDebug),
        // WAV/FLAC through libsndfile.
        .target(name: "RibbitAudioFile", dependencies: ["CSndfile"]),
        // PNG/JPEG in (size-capped) and PNG out, as 8-bit grey images.
        .target(name: "RibbitImage", dependencies: ["CPNG", "CTurboJPEG"], swiftSettings: optimizedInDebug),
        // QR codes: decoding photos with zbar, making codes with libqrencode.
        .target(name: "RibbitQR", dependencies: ["RibbitImage", "CZbar", "CQRencode"], swiftSettings: optimizedInDebug),
        // Where ribbit's files are (XDG), its config file, small-file reading, the version.
        .target(name: "RibbitSettings", dependencies: ["RibbitSystem", .product(name: "TOMLKit", package: "TOMLKit")]),
        // The prescription history, the active one and a trial, in SQLite (GRDB).
        .target(name: "RibbitStore", dependencies: ["RibbitSystem", "RibbitPrescription", "RibbitAudiometry", "RibbitVoice", .product(name: "GRDB", package: "GRDB.swift")]),
        // Ed25519 signatures on prescriptions and the wearer's trusted keys; private keys
        // protected by a passphrase (scrypt, ChaCha20-Poly1305). libsodium from Debian, not
        // swift-crypto: ribbitd and the tests then compile no BoringSSL of their own.
        .target(name: "RibbitSignature", dependencies: ["CSodium"]),
        // The JACK client and what runs on its real-time thread.
        .target(name: "RibbitJack", dependencies: ["CJack", "RibbitDSP", "RibbitRealtime"]),
        // The control protocol and its Unix socket, for the daemon and its clients.
        .target(name: "RibbitControl", dependencies: ["RibbitPrescription", "RibbitAudiometry", "RibbitVoice", "RibbitSystem"]),
        // What the dump shows: analysers, the frame and its JSON, the frame builder. Never on the RT thread.
        .target(name: "RibbitMonitor", dependencies: ["RibbitDSP", "RibbitMeasure", "RibbitFitting", "RibbitPrescription", "RibbitControl"], swiftSettings: optimizedInDebug),
        // The dump's files (CSV rows, the averaged SVG) and its stream from the daemon, shared by
        // `ribbitd dump`, `process --dump` and the web app's Live screen.
        .target(name: "RibbitDumpFiles", dependencies: ["RibbitMonitor", "RibbitPlot", "RibbitControl", "RibbitPrescription"]),
        // Intake, the one path every prescription takes in the CLI and the daemon: read (a file,
        // or the QR code in a picture), parse, verify, check, store.
        .target(
            name: "RibbitIntake",
            dependencies: [
                "RibbitSettings", "RibbitPrescription", "RibbitSignature", "RibbitStore", "RibbitImage", "RibbitQR", "RibbitDSP", "RibbitFitting",
            ]
        ),
        // The daemon <-> audio process link: binary messages on a socket pair. No Foundation.
        .target(name: "RibbitAudioLink", dependencies: ["RibbitDSP", "RibbitSystem"]),
        // `ribbitd run`: the services (history, control socket, audio process, dump, systemd) on one poll loop.
        .target(
            name: "RibbitDaemon",
            dependencies: [
                "RibbitAudioLink", "RibbitControl", "RibbitMonitor", "RibbitFitting", "RibbitPrescription", "RibbitStore", "RibbitIntake",
                "RibbitAudiometry", "RibbitSignals", "RibbitVoice", "RibbitDSP", "RibbitSystem",
                "RibbitSettings",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .executableTarget(
            name: "ribbitd",
            dependencies: [
                "RibbitDSP", "RibbitPrescription", "RibbitFitting", "RibbitAudioFile", "RibbitJack",
                "RibbitControl", "RibbitMonitor", "RibbitDumpFiles", "RibbitDaemon", "RibbitImage", "RibbitQR", "RibbitStore", "RibbitSignature",
                "RibbitIntake", "RibbitSettings", "RibbitPlot", "RibbitVerify", "RibbitMeasure", "RibbitAudiometry", "RibbitAudiogramReport", "RibbitVoice",
                "RibbitWisdomFile", "RibbitSystem", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: bindNow
        ),
        // The process that holds the JACK client and its real-time thread, started by `ribbitd run`:
        // the engine and libjack only, so it stays small (no Foundation, SQLite, crypto or QR code).
        .executableTarget(
            name: "ribbit-audio", dependencies: ["RibbitJack", "RibbitDSP", "RibbitRealtime", "RibbitAudioLink", "RibbitWisdomFile"], linkerSettings: bindNow),
        // `ribbitd web`: the web app, a client of the control socket like the CLI (never JACK), in its
        // own process so ribbitd does not link the HTTP server and a crash here cannot touch the sound.
        .executableTarget(
            name: "ribbit-web",
            dependencies: [
                "RibbitControl", "RibbitSettings", "RibbitStore", "RibbitQR", "RibbitIntake", "RibbitPlot", "RibbitPrescription",
                "RibbitFitting", "RibbitSignature", "RibbitImage", "RibbitMonitor", "RibbitDumpFiles", "RibbitAudiometry",
                "RibbitAudiogramReport", "RibbitVoice", "RibbitSystem", "CMalloc", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            // The pages, styles and scripts (Web/), compiled in: `Web.text(PackageResources.home_js)`.
            resources: [.embedInCode("Web")]
        ),
        .executableTarget(
            name: "ribbit-bench",
            dependencies: [
                "RibbitDSP", "RibbitFitting", "RibbitPrescription", "RibbitControl", "RibbitMonitor", "RibbitSignals", "RibbitVoice", "CFFTW",
            ],
            path: "bench/ribbit-bench",
            linkerSettings: bindNow
        ),

        .target(name: "RibbitRTAudit", path: "Tests/RibbitRTAudit", linkerSettings: [.linkedLibrary("dl")]),
        .executableTarget(
            name: "ribbit-probe", dependencies: ["CJack", "RibbitSignals", "RibbitAudioFile", "RibbitTestSupport"], path: "Tests/ribbit-probe"),
        // The data log's crash tests' child: writes day after day until killed or the disk is full.
        .executableTarget(name: "ribbit-wearlog-writer", dependencies: ["RibbitStore"], path: "Tests/ribbit-wearlog-writer"),
        .target(name: "RibbitTestSupport", dependencies: ["RibbitSignals", "RibbitAudiometry", "RibbitPrescription"], path: "Tests/RibbitTestSupport"),
        .testTarget(name: "RibbitDSPTests", dependencies: ["RibbitDSP", "RibbitSignals", "RibbitMeasure", "RibbitTestSupport", "CFFTW", "RibbitWisdomFile", "RibbitSystem"], swiftSettings: optimizedInDebug),
        .testTarget(
            name: "RibbitMonitorTests", dependencies: ["RibbitMonitor", "RibbitDSP", "RibbitSignals"], swiftSettings: optimizedInDebug),
        // FuzzFindings are read from the source tree at run time (as the help snapshots are), not bundled.
        .testTarget(name: "RibbitPrescriptionTests", dependencies: ["RibbitPrescription"], exclude: ["FuzzFindings"]),
        .testTarget(name: "RibbitVerifyTests", dependencies: ["RibbitVerify", "RibbitMeasure", "RibbitFitting", "RibbitDSP", "RibbitPrescription", "RibbitSignals", "RibbitTestSupport"], swiftSettings: optimizedInDebug),
        .testTarget(name: "RibbitAudiometryTests", dependencies: ["RibbitAudiometry", "RibbitPrescription", "RibbitSignals", "RibbitTestSupport"], swiftSettings: optimizedInDebug),
        .testTarget(name: "RibbitVoiceTests", dependencies: ["RibbitVoice", "RibbitSignals"], swiftSettings: optimizedInDebug),
        .testTarget(name: "RibbitPlotTests", dependencies: ["RibbitPlot", "RibbitPrescription", "RibbitVoice"]),
        .testTarget(
            name: "RibbitFittingTests",
            dependencies: [
                "RibbitFitting", "RibbitDSP", "RibbitPrescription", "RibbitSignals", "RibbitMeasure", "RibbitTestSupport",
            ], swiftSettings: optimizedInDebug),
        .testTarget(
            name: "RibbitQRTests", dependencies: ["RibbitQR", "RibbitImage", "RibbitPrescription", "RibbitTestSupport"], exclude: ["FuzzFindings"], swiftSettings: optimizedInDebug),
        .testTarget(
            name: "RibbitStoreTests",
            dependencies: ["RibbitStore", "RibbitTestSupport", "RibbitAudiometry", "RibbitVoice", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "RibbitSignatureTests", dependencies: ["RibbitSignature", "RibbitPrescription", "RibbitTestSupport"]),
        .testTarget(name: "RibbitAudioFileTests", dependencies: ["RibbitAudioFile", "RibbitSignals", "RibbitTestSupport"]),
        .testTarget(name: "RibbitJackTests", dependencies: ["RibbitJack", "RibbitDSP", "RibbitRealtime", "CJack", "RibbitControl"]),
        .testTarget(name: "RibbitRealtimeTests", dependencies: ["RibbitRealtime"]),
        .testTarget(name: "RibbitSystemTests", dependencies: ["RibbitSystem"]),
        .testTarget(name: "RibbitAudioLinkTests", dependencies: ["RibbitAudioLink", "RibbitDSP"]),
        .testTarget(
            name: "RibbitControlTests",
            dependencies: ["RibbitControl", "RibbitMonitor", "RibbitDSP", "RibbitSignals", "RibbitTestSupport", "RibbitAudiometry", "RibbitPrescription"]),
        .testTarget(
            name: "RibbitDaemonTests",
            dependencies: [
                "RibbitTestSupport", "RibbitControl", "RibbitMonitor", "RibbitDaemon", "RibbitAudioFile", "RibbitAudioLink", "RibbitDSP", "RibbitFitting",
                "RibbitPrescription", "RibbitStore", "RibbitSettings", "RibbitAudiometry", "RibbitSignals", "RibbitVoice", "RibbitMeasure",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "RibbitCLITests",
            dependencies: [
                "RibbitAudioFile", "RibbitDSP", "RibbitSignals", "RibbitTestSupport", "RibbitImage", "RibbitQR", "RibbitStore", "RibbitControl",
                "RibbitMonitor", "RibbitAudiometry", "RibbitPrescription", "RibbitSettings", "RibbitFitting",
            ],
            // The snapshots are read from the source tree at run time, not bundled.
            exclude: ["HelpSnapshots"]
        ),
    ]
)
