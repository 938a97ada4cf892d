import Foundation
import FoundationXML

/// The elements of an SVG file (parsing it proves it is well-formed XML): ids, audiogram marks,
/// and every element with its attributes, text and parent, for tests that check the drawing.
public struct SVGContents {
    public struct Element {
        public var name: String
        /// Its own index in `elements`.
        public var index: Int
        public var attributes: [String: String]
        public var text = ""
        /// Index in `elements` of the enclosing element (nil for the root).
        public var parent: Int?

        public func number(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }
    }

    public var ids = Set<String>()
    /// The audiogram symbols (elements of class `audiogram-EAR-mark`), by their `data-symbol`
    /// (O or X), counted.
    public var marks = [String: Int]()
    /// In document order.
    public var elements = [Element]()

    public init(_ path: String) throws {
        try self.init(data: try Data(contentsOf: URL(fileURLWithPath: path)), name: path)
    }

    public init(data: Data, name: String = "the SVG") throws {
        let collector = Collector()
        let parser = XMLParser(data: data)
        parser.delegate = collector
        guard parser.parse() else { throw TestSetupError("\(name) is not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")") }
        elements = collector.elements
        ids = Set(elements.compactMap { $0.attributes["id"] })
        for element in elements where element.attributes["class"]?.hasSuffix("-mark") == true {
            if let symbol = element.attributes["data-symbol"] { marks[symbol, default: 0] += 1 }
        }
    }

    /// The element with this id.
    public func element(id: String) -> Element? { elements.first { $0.attributes["id"] == id } }

    /// The elements inside the one with this id (at any depth) that satisfy `where`.
    public func elements(inside id: String, where test: (Element) -> Bool = { _ in true }) -> [Element] {
        guard let root = elements.firstIndex(where: { $0.attributes["id"] == id }) else { return [] }
        return elements.indices.filter { index in
            var at = elements[index].parent
            while let p = at, p != root { at = elements[p].parent }
            return at == root && test(elements[index])
        }.map { elements[$0] }
    }

    /// The direct children of an element.
    public func children(of element: Element) -> [Element] { elements.filter { $0.parent == element.index } }

    private final class Collector: NSObject, XMLParserDelegate {
        var elements = [Element]()
        private var open = [Int]()

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            elements.append(Element(name: name, index: elements.count, attributes: attributes, parent: open.last))
            open.append(elements.count - 1)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let current = open.last { elements[current].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { open.removeLast() }
    }
}
