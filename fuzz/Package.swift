// swift-tools-version:6.0
// libFuzzer targets; build and run them with `make fuzz` from the top level (they need
// -sanitize=fuzzer, so they live outside the main package).
import PackageDescription

let package = Package(
    name: "ribbit-fuzz",
    dependencies: [.package(name: "ribbit", path: "..")],
    targets: [
        .executableTarget(name: "fuzz-parser", dependencies: [.product(name: "RibbitPrescription", package: "ribbit")]),
        .executableTarget(
            name: "fuzz-image",
            dependencies: [.product(name: "RibbitImage", package: "ribbit"), .product(name: "RibbitQR", package: "ribbit")]),
    ]
)
