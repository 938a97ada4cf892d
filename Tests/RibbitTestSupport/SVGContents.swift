import Foundation
import FoundationXML

/// The ids and audiogram marks of an SVG file (parsing it proves it is well-formed XML).
public struct SVGContents {
    public var ids = Set<String>()
    /// Text of the elements whose class starts with "audiogram-" (the X and O marks), counted.
    public var marks = [String: Int]()

    public init(_ path: String) throws {
        let collector = Collector()
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        parser.delegate = collector
        guard parser.parse() else { throw TestSetupError("\(path) is not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")") }
        ids = collector.ids
        marks = collector.marks
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var ids = Set<String>()
        var marks = [String: Int]()
        private var inMark = false

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if let id = attributes["id"] { ids.insert(id) }
            inMark = attributes["class"]?.hasPrefix("audiogram-") == true
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if inMark { marks[string, default: 0] += 1 }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { inMark = false }
    }
}
