/// The web app's pages, styles and scripts are files in Web/ (checked by Biome in `make lint`),
/// compiled into the binary by SwiftPM (`.embedInCode`): one binary, nothing read at run time.
enum Web {
    /// A file's text as the page serves it (without the newline that ends the file).
    static func text(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// `template` with each `%%name%%` replaced by `values[name]`, in one pass (a value's own
    /// text is never read as a placeholder). The values are ribbit's own markup, not user input.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.range(of: "%%"), let close = rest[open.upperBound...].range(of: "%%") {
            let name = String(rest[open.upperBound..<close.lowerBound])
            guard let value = values[name] else { preconditionFailure("the web page names %%\(name)%%, which nothing fills") }
            result += rest[..<open.lowerBound] + value
            rest = rest[close.upperBound...]
        }
        return result + rest
    }
}
