import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// A parsed JSON object keeps its members in order, each key once, and reads like a dictionary of them: small
/// ones by comparing keys, large ones (past `Object.indexedFrom`) through an index.
@Suite struct JSONNodeObjectTests {
    static func parse(_ text: String) throws(JSONNode.SyntaxError) -> JSONNode { try JSONNode.parse(Array(text.utf8)) }

    @Test func membersKeepTheirOrderAndReadByName() throws {
        let object = try #require(try Self.parse(#"{"b": 1, "a": [true], "c": {"x": null}}"#).object)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["a"] == .array([.bool(true)]) && object["c"]?.object?["x"] == .null && object["z"] == nil)
        #expect(object.count == 3 && !object.isEmpty && object.values.count == 3)
        #expect(try Self.parse("{}").object?.isEmpty == true)
        // Objects compare as JSON does: the same members, whatever their order.
        #expect(try Self.parse(#"{"a": 1, "b": 2}"#) == Self.parse(#"{"b": 2, "a": 1}"#))
        #expect(try Self.parse(#"{"a": 1, "b": 2}"#) != Self.parse(#"{"a": 1, "b": 3}"#))
        #expect(try Self.parse(#"{"a": 1}"#) != Self.parse(#"{"a": 1, "b": 2}"#))
    }

    /// A key twice is refused where its second value starts, in an object of any size (below and past the index).
    @Test(arguments: [2, JSONNode.Object.indexedFrom, JSONNode.Object.indexedFrom + 1, 500])
    func aKeyTwiceIsRefusedAtItsSecondAppearance(members: Int) {
        let keys = (0..<members).map { "k\($0)" }
        let text = "{" + (keys + ["k\(members / 2)"]).map { "\"\($0)\": 0" }.joined(separator: ",") + "}"
        do {
            _ = try Self.parse(text)
            Issue.record("a repeated key was taken")
        } catch {
            #expect(error.message == "\"k\(members / 2)\" appears twice in one object")
            #expect(error.line == 1 && error.column == text.utf8.count - 1)  // at its value, the last 0
        }
    }

    /// Any set of keys in any order (seeded), small and large objects alike: every key reads its own value, an
    /// absent key reads nil, the order is kept, and parsing it again gives an equal object.
    @Test(arguments: 0..<100)
    func anObjectReadsLikeADictionaryOfItsMembers(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed))
        let count = random.below(3) == 0 ? random.below(200) : random.below(40)
        var keys: [String] = []
        for _ in 0..<count {
            let key = String(random.below(1000))
            if !keys.contains(key) { keys.append(key) }
        }
        let text = "{" + keys.enumerated().map { "\"\($0.element)\": \($0.offset)" }.joined(separator: ", ") + "}"
        let node = try Self.parse(text)
        let object = try #require(node.object)
        #expect(object.keys == keys)
        for (offset, key) in keys.enumerated() { #expect(object[key] == .number(Double(offset))) }
        #expect(object["absent"] == nil && object["1000"] == nil)
        let reversed = "{" + keys.enumerated().reversed().map { "\"\($0.element)\": \($0.offset)" }.joined(separator: ", ") + "}"
        #expect(try Self.parse(reversed) == node)
    }
}

/// What tartil writes as JSON reads back as the same values, through its own parser and through Foundation's.
@Suite struct JSONValueRenderingTests {
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\r\n", "\t", "\u{0}", "\u{1}", "\u{1F}", "\u{7F}", "é", "ع", "ﷺ",
        "\u{0627}\u{0644}\u{0644}\u{0651}\u{0647}", "😀", "👍🏽", "\u{FEFF}", "\u{2028}",
    ]

    @Test func stringsAreEscapedAsJSONSays() {
        #expect(JSONValue.string("a\"b\\c\nd\re\tf\u{1}g/h").rendered() == #""a\"b\\c\nd\re\tf\u0001g/h""#)
        #expect(JSONValue.string("\u{1F}\u{7F}").rendered() == "\"\\u001f\u{7F}\"")
        #expect(JSONValue.object([("k", .array([.int(-3), .double(1.5), .null, .bool(false)]))]).rendered() == #"{"k":[-3,1.5,null,false]}"#)
        #expect(JSONValue.double(.infinity).rendered() == "null")
    }

    /// Any string of ASCII, controls, Arabic, combining marks, emoji and line ends (seeded): rendered, it parses
    /// back to itself with JSONNode and with JSONSerialization.
    @Test(arguments: 0..<200)
    func anyStringReadsBack(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed))
        let text = (0..<random.below(30)).map { _ in Self.alphabet[random.below(Self.alphabet.count)] }.joined()
        let rendered = JSONValue.object([(text, .string(text))]).rendered()
        let node = try JSONNode.parse(Array(rendered.utf8))
        #expect(node.object?[text] == .string(text), "\(rendered)")
        // (Foundation's JSONSerialization drops a U+FEFF inside a string: compared only without one.)
        if !text.unicodeScalars.contains("\u{FEFF}") {
            let foundation = try JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [String: String]
            #expect(foundation == [text: text], "\(rendered)")
        }
    }
}

/// Journal events and devices are named by random UUIDs made without Foundation.
@Suite struct RandomUUIDTests {
    @Test func version4TextLikeFoundationsAndNoRepeats() {
        var seen = Set<String>()
        for _ in 0..<5000 {
            let text = RandomUUID.make()
            let bytes = Array(text.utf8)
            #expect(bytes.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { bytes[$0] == UInt8(ascii: "-") })
            #expect(bytes.enumerated().allSatisfy { [8, 13, 18, 23].contains($0.offset) || Array("0123456789abcdef".utf8).contains($0.element) })
            #expect(bytes[14] == UInt8(ascii: "4") && Array("89ab".utf8).contains(bytes[19]), "\(text)")
            #expect(UUID(uuidString: text)?.uuidString.lowercased() == text)
            seen.insert(text)
        }
        #expect(seen.count == 5000)
        var one = SeededRandom(seed: 7)
        var two = SeededRandom(seed: 7)
        #expect(RandomUUID.make(using: &one) == RandomUUID.make(using: &two))
    }
}

/// A command line's option values: by name, in the order given, a name given again replacing its value.
@Suite struct OptionValuesTests {
    @Test func namesInOrderLastValueWins() {
        var values: OptionValues = ["--reciter": "a", "--json": ""]
        #expect(values["--reciter"] == "a" && values["--json"] == "" && values["--speed"] == nil)
        values["--speed"] = "1.5"
        values["--reciter"] = "b"
        #expect(values.names == ["--reciter", "--json", "--speed"] && values["--reciter"] == "b")
        values["--json"] = nil
        #expect(values.names == ["--reciter", "--speed"] && !values.isEmpty)
        values["--reciter"] = nil
        values["--speed"] = nil
        values["--absent"] = nil
        #expect(values.isEmpty && OptionValues().isEmpty)
    }
}
