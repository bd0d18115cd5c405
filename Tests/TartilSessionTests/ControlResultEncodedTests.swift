import Foundation
import TartilControl
import TartilCore
import TestSupport
import Testing

@testable import TartilSession

/// The control socket's typed result read back without Foundation's decoder (`ControlResult.init(encoded:)` and
/// the readers of its parts in TartilCore): whatever `JSONEncoder` writes reads back equal, and on every input
/// here the reader and `JSONDecoder` agree (both refuse, or both read the same value), but for numbers out of the
/// reader's bounds, which only it refuses.
@Suite struct ControlResultEncodedTests {
    /// `JSONEncoder`'s text of `result`.
    static func encoded(_ result: ControlResult) throws -> String {
        String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
    }

    /// The reader's value of `text`, or nil when it refuses it.
    static func read(_ text: String) -> ControlResult? {
        guard let node = try? JSONNode.parse(Array(text.utf8)) else { return nil }
        return try? ControlResult(encoded: node)
    }

    /// Foundation's value of `text`, or nil when it refuses it.
    static func decoded(_ text: String) -> ControlResult? {
        try? JSONDecoder().decode(ControlResult.self, from: Data(text.utf8))
    }

    // MARK: - Seeded round trips

    @Test func everyResultJSONEncoderWritesReadsBackEqualAndAsJSONDecoderReadsIt() throws {
        var random = SeededRandom(seed: 0xC0DE_C0DA)
        for run in 0..<400 {
            let result = try Self.randomResult(&random)
            let text = try Self.encoded(result)
            let read = Self.read(text)
            #expect(read == result, "run \(run): \(text)")
            #expect(read == Self.decoded(text), "run \(run): the reader and JSONDecoder differ on \(text)")
            if read != result { return }
        }
    }

    /// What the control socket sends (`JSONValueEncoder`, no Foundation) is what `JSONEncoder` writes: the same
    /// JSON value (objects compared as JSON compares them, in any order, numbers by value), which `JSONDecoder`
    /// and the reader both read back to the result sent.
    @Test func theSocketsEncoderWritesWhatJSONEncoderWrites() throws {
        var random = SeededRandom(seed: 0xE1C0_DE)
        for run in 0..<400 {
            let result = run < 3 ? [ControlResult.status(try Self.fullStatus(&random)), .started(try Self.fullStart(&random)), .stopped][run] : try Self.randomResult(&random)
            let ours = try JSONValueEncoder.encode(result).rendered()
            let theirs = try Self.encoded(result)
            #expect(try JSONNode.parse(Array(ours.utf8)) == JSONNode.parse(Array(theirs.utf8)), "run \(run):\n\(ours)\n\(theirs)")
            #expect(Self.read(ours) == result && Self.decoded(ours) == result, "run \(run): \(ours)")
        }
        // Whole numbers of a Double are written without a fraction, as JSONEncoder writes them; others exactly.
        #expect(try JSONValueEncoder.encode([50.0, -0.5, 1e-5, 3e20]).rendered() == String(decoding: try JSONEncoder().encode([50.0, -0.5, 1e-5, 3e20]), as: UTF8.self))
        #expect(throws: JSONValueEncoder.Failure.self) { try JSONValueEncoder.encode([Double.nan]) }
        #expect(throws: JSONValueEncoder.Failure.self) { try JSONValueEncoder.encode(UInt64.max) }
    }

    /// A key the reader does not read (a property added to a type and not to its reader) would be lost on the
    /// wire: with any one key of a full result taken out, the reader and `JSONDecoder` still agree, so every key
    /// `JSONDecoder` needs, the reader needs too, and reads into the same property.
    @Test func everyKeyTheEncoderWritesIsReadWhereJSONDecoderReadsIt() throws {
        var random = SeededRandom(seed: 0xF0_11)
        for _ in 0..<2 {
            for result in [ControlResult.status(try Self.fullStatus(&random)), .started(try Self.fullStart(&random))] {
                let tree = try JSONSerialization.jsonObject(with: JSONEncoder().encode(result))
                let paths = Self.keyPaths(tree)
                #expect(paths.count > 60, "the full result has every optional set")
                for path in paths {
                    let text = String(decoding: try JSONSerialization.data(withJSONObject: Self.removing(path, from: tree)), as: UTF8.self)
                    #expect(Self.read(text) == Self.decoded(text), "without \(path.joined(separator: ".")): \(text)")
                }
                // And a value changed at every number: read as JSONDecoder reads it.
                for path in paths {
                    let text = String(decoding: try JSONSerialization.data(withJSONObject: Self.replacing(path, in: tree, with: 7)), as: UTF8.self)
                    #expect(Self.read(text) == Self.decoded(text), "with 7 at \(path.joined(separator: ".")): \(text)")
                }
            }
        }
    }

    // MARK: - The forms, one by one

    /// Inputs from a player of this build and edge cases of the forms: what the reader makes of each (nil:
    /// refused), and that `JSONDecoder` makes the same.
    @Test(arguments: [
        // A real reply's result (a player of the build before this reader).
        (#"{"status":{"_0":{"durationSeconds":20.69963718820862,"state":"playing","options":{"pause":{"seconds":{"_0":0}},"repeatEach":{"times":{"_0":1}},"cyclePauseSeconds":0,"repeatRange":{"forever":{}},"basmala":"auto"},"index":0,"maximumSpeed":2,"itemCount":5,"speed":1,"sampleRate":22050,"surah":112,"hasNext":true,"reciter":"ibrahim-alakhdar","cycle":1,"skipped":[],"ayahStarts":[0,9.460589569160998,12.283945578231293,15.734240362811793],"totalSamples":456427,"positionSamples":2844,"positionSeconds":0.12897959183673469,"durationSamples":456427,"skippedBasmala":[],"writtenSeconds":0.3250793650793651,"writtenFrames":7168,"item":{"kind":{"basmala":{}},"group":1,"files":"ayah","repetition":1,"cycle":1,"ayah":[112,1]},"volume":100,"isEstimated":false,"motion":{"since":{"nanoseconds":23553792260960},"limitSamples":7168}}}}"#, true),
        (#"{"stopped":{}}"#, true),
        (#"{"stopped":{},"other":1}"#, true),  // members that name no case are passed over, as Decodable does
        (#"{"stopped":{},"status":{}}"#, false),  // two cases
        (#"{"stopped":null}"#, false),
        (#""stopped""#, false),
        (#"{}"#, false),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":1796179201660,"surah":2,"ayah":255}}}"#, true),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":1796179201660,"surah":2,"ayah":255,"reciter":null,"note":"\u00e9\/"}}}"#, true),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":1.5,"surah":2,"ayah":255}}}"#, false),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":"1","surah":2,"ayah":255}}}"#, false),
        (#"{"bookmark":{"_0":{"eventID":"e","timeMs":1,"surah":2,"ayah":255}}}"#, false),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":null,"timeMs":1,"surah":2,"ayah":255}}}"#, false),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":-1e3,"surah":2,"ayah":255}}}"#, true),
        (#"{"bookmark":{"_0":{"eventID":"e","deviceID":"d","timeMs":1,"surah":2,"ayah":255,"note":7}}}"#, false),
        (#"{"bookmark":{}}"#, false),
    ] as [(String, Bool)])
    func formsReadAsJSONDecoderReadsThem(text: String, accepted: Bool) {
        let read = Self.read(text)
        #expect((read != nil) == accepted, "\(text)")
        #expect(read == Self.decoded(text), "the reader and JSONDecoder differ on \(text)")
    }

    /// The parts, in a status otherwise as a player writes it: each variant as `JSONEncoder` writes it, and broken
    /// forms that both readers refuse.
    @Test(arguments: [
        ("\"options\"", #"{"pause":{"multiple":{"_0":1.5}},"repeatEach":{"forever":{}},"cyclePauseSeconds":5,"repeatRange":{"times":{"_0":3}},"basmala":"off","stepped":{"window":3}}"#, true),
        ("\"options\"", #"{"pause":{"multiple":{"_0":1.5}},"repeatEach":{"forever":{}},"cyclePauseSeconds":5,"repeatRange":{"times":{"_0":3}},"basmala":"off","stepped":{}}"#, true),
        ("\"options\"", #"{"pause":{"multiple":{"_0":1.5}},"repeatEach":{"forever":{}},"cyclePauseSeconds":5,"repeatRange":{"times":{"_0":3}},"basmala":"never"}"#, false),
        ("\"options\"", #"{"pause":{"multiple":{}},"repeatEach":{"forever":{}},"cyclePauseSeconds":5,"repeatRange":{"times":{"_0":3}},"basmala":"off"}"#, false),
        ("\"options\"", #"{"pause":{"seconds":{"_0":0}},"repeatEach":{"times":{"_0":1.5}},"cyclePauseSeconds":0,"repeatRange":{"forever":{}},"basmala":"auto"}"#, false),
        ("\"item\"", #"{"kind":{"pause":{"_0":{"seconds":{"_0":2}}}},"group":3,"files":"surah","repetition":2,"cycle":1,"ayah":[1,7],"reviewOf":[1,3]}"#, true),
        ("\"item\"", #"{"kind":{"cyclePause":{"seconds":5}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114,6]}"#, true),
        ("\"item\"", #"{"kind":{"ayah":{}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114,6,99]}"#, true),
        ("\"item\"", #"{"kind":{"ayah":{}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114,7]}"#, false),
        ("\"item\"", #"{"kind":{"ayah":{}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114]}"#, false),
        ("\"item\"", #"{"kind":{"ayah":{}},"group":3,"files":"tape","repetition":1,"cycle":2,"ayah":[114,1]}"#, false),
        ("\"item\"", #"{"kind":{"verse":{}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114,1]}"#, false),
        ("\"skipped\"", #"[[2,255],"every mirror failed",[1,1],"x",[2,255],"again"]"#, true),  // the last of a key wins
        ("\"skipped\"", #"[[2,255],"every mirror failed",[1,1]]"#, false),
        ("\"skipped\"", #"{"2:255":"x"}"#, false),
        ("\"skippedBasmala\"", #"null"#, true),
        ("\"stopAfter\"", #"{"seconds":{"_0":1200}}"#, true),
        ("\"stopAfter\"", #"{"ayat":{"_0":5}}"#, true),
        ("\"stopAfter\"", #"{"juz":{}}"#, true),
        ("\"stopAfter\"", #"{"surah":{},"juz":{}}"#, false),
        ("\"loop\"", #"{"startSeconds":1.5,"endSeconds":3,"passesLeft":2}"#, true),
        ("\"loop\"", #"{"startSeconds":1.5,"endSeconds":3}"#, true),
        ("\"bufferingAyah\"", #"[36,12]"#, true),
        ("\"bufferingAyah\"", #"[112,0]"#, true),  // a surah-file reciter's basmala part
        ("\"bufferingAyah\"", #"[1,0]"#, false),  // Al-Fatiha and At-Tawba have none
        ("\"bufferingAyah\"", #"[9,0]"#, false),
        ("\"bufferingAyah\"", #"[112,-1]"#, false),
        ("\"motion\"", #"{"since":{"nanoseconds":9007199254740992},"limitSamples":7168}"#, true),
        ("\"motion\"", #"{"since":{"nanoseconds":-1},"limitSamples":7168}"#, false),
        ("\"reciter\"", #""Not An Id""#, false),
        ("\"state\"", #""resting""#, false),
        ("\"volume\"", #"1e300"#, false),
        ("\"speed\"", #"true"#, false),
    ] as [(String, String, Bool)])
    func partsReadAsJSONDecoderReadsThem(key: String, value: String, accepted: Bool) throws {
        var random = SeededRandom(seed: 1)
        let base = try Self.encoded(.status(try Self.fullStatus(&random)))
        let text = Self.replacingMember(key, in: base, with: value)
        #expect(text != base, "the member \(key) was replaced")
        let read = Self.read(text)
        #expect((read != nil) == accepted, "\(key): \(value)")
        #expect(read == Self.decoded(text), "the reader and JSONDecoder differ on \(key): \(value)")
    }

    /// A number of seconds, a speed or a multiple out of ±10^12 is refused (`JSONDecoder` takes any finite
    /// number): the status's renderings convert seconds to whole milliseconds, which must not trap.
    @Test(arguments: ["\"positionSeconds\"", "\"ayahStarts\"", "\"loop\"", "\"stopAfter\"", "\"item\"", "\"options\""])
    func numbersOutOfBoundsAreRefused(key: String) throws {
        var random = SeededRandom(seed: 3)
        let base = try Self.encoded(.status(try Self.fullStatus(&random)))
        let values = [
            "\"positionSeconds\"": "1e300", "\"ayahStarts\"": "[0,-1.5e12]", "\"loop\"": #"{"startSeconds":1,"endSeconds":1e13}"#,
            "\"stopAfter\"": #"{"seconds":{"_0":1e308}}"#,
            "\"item\"": #"{"kind":{"cyclePause":{"seconds":2e12}},"group":3,"files":"ayah","repetition":1,"cycle":2,"ayah":[114,6]}"#,
            "\"options\"": #"{"pause":{"multiple":{"_0":1e15}},"repeatEach":{"forever":{}},"cyclePauseSeconds":5,"repeatRange":{"times":{"_0":3}},"basmala":"off"}"#,
        ]
        let text = Self.replacingMember(key, in: base, with: values[key]!)
        #expect(text != base)
        #expect(Self.read(text) == nil, "\(key)")
        #expect(Self.decoded(text) != nil, "JSONDecoder takes it: \(key)")
    }

    /// Above 2^53, a clock's nanoseconds are read as the nearest `Double` (JSONNode keeps numbers as Doubles):
    /// never refused, and within one part in 2^53 (a few nanoseconds after a year of uptime).
    @Test func aClockReadingAbove2To53IsReadToTheNearestDouble() throws {
        var random = SeededRandom(seed: 2)
        for nanoseconds: UInt64 in [1 << 53 + 1, 31_557_600_000_000_001, UInt64.max] {
            var status = try Self.fullStatus(&random)
            status.motion = PlayerStatus.Motion(since: ClockInstant(nanoseconds: nanoseconds), limitSamples: 1)
            guard case .status(let read)? = Self.read(try Self.encoded(.status(status))), let since = read.motion?.since.nanoseconds else {
                Issue.record("\(nanoseconds) was refused")
                continue
            }
            let difference = since > nanoseconds ? since - nanoseconds : nanoseconds - since
            #expect(difference <= nanoseconds >> 52, "\(nanoseconds) read as \(since)")
        }
    }

    @Test func aReplyReadsItsCodeErrorAndResult() throws {
        let line = ControlProtocol.reply(id: .int(1), code: 3, data: nil, error: "nothing is playing", result: .stopped)
        let reply = try #require(ControlProtocol.reply(line))
        #expect(reply.exitCode == 3 && reply.error == "nothing is playing" && reply.result == .stopped)
        let bare = try #require(ControlProtocol.reply(#"{"exit_code":64,"error":null,"result":null}"#))
        #expect(bare.exitCode == 64 && bare.error == nil && bare.result == nil)
        for refused in [
            #"{"exit_code":1.5}"#, #"{"exit_code":4294967296}"#, #"{"exit_code":null}"#, #"{"error":"x","exit_code":"1"}"#,
            #"{"exit_code":0,"error":1}"#, #"{"exit_code":0,"result":{"paused":{}}}"#, #"["exit_code"]"#, #"{"exit_code":0"#,
            #"{"event":"state","state":"paused"}"#,
        ] {
            #expect(ControlProtocol.reply(refused) == nil, "\(refused)")
        }
    }

    // MARK: - Values

    static func randomResult(_ random: inout SeededRandom) throws -> ControlResult {
        switch random.below(4) {
        case 0: return .status(try randomStatus(&random))
        case 1:
            let resumed = random.below(2) == 0 ? nil : try randomResume(&random)
            let notes = random.below(3) == 0 ? nil : (0..<random.below(3)).map { _ in randomText(&random) }
            return .started(PlayStarted(status: try randomStatus(&random), resumed: resumed, notes: notes))
        case 2: return .stopped
        default:
            let ayah = try randomAyah(&random)
            return .bookmark(
                Bookmark(
                    eventID: randomText(&random), deviceID: randomText(&random), timeMs: Int64(random.below(1 << 45)) - (1 << 40),
                    reciter: random.below(2) == 0 ? nil : randomText(&random), surah: ayah.surah, ayah: ayah.ayah,
                    note: random.below(2) == 0 ? nil : randomText(&random)))
        }
    }

    static func randomStatus(_ random: inout SeededRandom, full: Bool = false) throws -> PlayerStatus {
        func some<T>(_ value: () throws -> T) rethrows -> T? { try full || random.below(2) == 0 ? value() : nil }
        let states = PlayerState.allCases
        var status = PlayerStatus(
            state: states[random.below(states.count)], reciter: try ReciterID(["fixture", "ibrahim-alakhdar", "a.b-c_9"][random.below(3)]),
            index: random.below(10_000), item: try some { try randomItem(&random) }, itemCount: random.below(100_000),
            surah: 1 + random.below(114), positionSeconds: randomDouble(&random), positionSamples: random.below(1 << 40),
            durationSeconds: randomDouble(&random), durationSamples: random.below(1 << 40), sampleRate: [8000, 22050, 44100, 48000][random.below(4)],
            isEstimated: random.below(2) == 0, ayahStarts: (0..<random.below(full ? 5 : 300)).map { _ in randomDouble(&random) },
            bufferingAyah: try some { try randomAyah(&random) }, skipped: try randomReasons(&random, full: full),
            totalSamples: random.below(1 << 50), writtenFrames: random.below(1 << 50), writtenSeconds: randomDouble(&random),
            endMessage: some { randomText(&random) }, options: randomOptions(&random, full: full), cycle: 1 + random.below(99),
            loop: some { LoopSpan(startSeconds: randomDouble(&random), endSeconds: randomDouble(&random), passesLeft: some { random.below(100) }) },
            loopMarkSeconds: some { randomDouble(&random) }, stopAfter: some { randomStopAfter(&random) },
            sleepSecondsLeft: some { randomDouble(&random) }, speed: 0.5 + Double(random.below(1501)) / 1000, volume: random.below(151),
            maximumSpeed: 1 + Double(random.below(1001)) / 1000, hasNext: random.below(2) == 0,
            skippedBasmala: try randomReasons(&random, full: full))
        if !full && random.below(4) == 0 { status.skippedBasmala = nil }
        status.learningSurah = some { 1 + random.below(114) }
        status.endIsUsage = some { random.below(2) == 0 }
        status.bufferingHeldElsewhere = some { random.below(2) == 0 }
        status.motion = some {
            PlayerStatus.Motion(since: ClockInstant(nanoseconds: UInt64(random.below(1 << 53))), limitSamples: random.below(1 << 40))
        }
        return status
    }

    /// A status with every optional set, its loop's passes and its options' stepped window included.
    static func fullStatus(_ random: inout SeededRandom) throws -> PlayerStatus {
        var status = try randomStatus(&random, full: true)
        status.options.stepped = Stepped(window: 2 + random.below(10))
        status.item = PlanItem(kind: .pause(.multiple(1.5)), ayah: try AyahRef(2, 255), reviewOf: try AyahRef(2, 250), files: .surah)
        return status
    }

    static func fullStart(_ random: inout SeededRandom) throws -> PlayStarted {
        var resumed = try randomResume(&random)
        resumed.after = try AyahRef(36, 1)
        return PlayStarted(status: try fullStatus(&random), resumed: resumed, notes: ["one", "two"])
    }

    static func randomResume(_ random: inout SeededRandom) throws -> ResumePoint {
        let point = try randomAyah(&random)
        let after = random.below(2) == 0 ? nil : try randomAyah(&random)
        return ResumePoint(
            reciter: randomText(&random), ayah: point, offsetSamples: random.below(1 << 40), offsetMs: Int64(random.below(1 << 40)),
            reason: ["pause", "stop", "end", "seek"][random.below(4)], recordedMs: Int64(random.below(1 << 45)), after: after)
    }

    static func randomItem(_ random: inout SeededRandom) throws -> PlanItem {
        let kinds: [PlanItem.Kind] = [
            .ayah, .basmala, .pause(.seconds(randomDouble(&random))), .pause(.multiple(randomDouble(&random))),
            .cyclePause(seconds: randomDouble(&random)),
        ]
        return PlanItem(
            kind: kinds[random.below(kinds.count)], ayah: try randomAyah(&random), repetition: 1 + random.below(99), group: 1 + random.below(6236),
            cycle: 1 + random.below(99), reviewOf: random.below(2) == 0 ? nil : try randomAyah(&random),
            files: FileLayout.allCases[random.below(FileLayout.allCases.count)])
    }

    static func randomOptions(_ random: inout SeededRandom, full: Bool) -> PlaybackOptions {
        func count() -> RepeatCount { random.below(3) == 0 ? .forever : .times(1 + random.below(99)) }
        let stepped: Stepped? = full || random.below(2) == 0 ? Stepped(window: random.below(2) == 0 ? nil : 2 + random.below(285)) : nil
        return PlaybackOptions(
            basmala: random.below(2) == 0 ? .auto : .off, repeatEach: count(), repeatRange: count(),
            pause: random.below(2) == 0 ? .seconds(randomDouble(&random)) : .multiple(randomDouble(&random)),
            cyclePauseSeconds: randomDouble(&random), stepped: stepped)
    }

    static func randomStopAfter(_ random: inout SeededRandom) -> StopAfter {
        switch random.below(4) {
        case 0: .seconds(randomDouble(&random))
        case 1: .ayat(1 + random.below(6236))
        case 2: .surah
        default: .juz
        }
    }

    static func randomReasons(_ random: inout SeededRandom, full: Bool) throws -> [AyahRef: String] {
        var reasons: [AyahRef: String] = [:]
        for _ in 0..<(full ? 2 : random.below(4)) { reasons[try randomAyah(&random)] = randomText(&random) }
        return reasons
    }

    /// An ayah, or now and then a surah's basmala part (a file's key, which a status may be buffering).
    static func randomAyah(_ random: inout SeededRandom) throws -> AyahRef {
        let ayah = try AyahRef(global: 1 + random.below(Catalog.totalAyat))
        return random.below(8) == 0 && AyahRef.hasBasmalaPart(ayah.surah) ? .basmalaPart(ofSurah: ayah.surah) : ayah
    }

    /// Whole, fractional, tiny and large numbers, negative ones among them.
    static func randomDouble(_ random: inout SeededRandom) -> Double {
        switch random.below(5) {
        case 0: Double(random.below(1000))
        case 1: Double(random.below(1 << 30)) / 7
        case 2: Double.random(in: -JSONNode.largestNumber...JSONNode.largestNumber, using: &random)  // any the reader takes
        case 3: 1e-300 * Double(random.below(100))
        default: -Double(random.below(1 << 20)) / 3
        }
    }

    /// Text with what JSON escapes: quotes, backslashes, slashes, control characters, non-ASCII and astral scalars.
    static func randomText(_ random: inout SeededRandom) -> String {
        let pieces = ["a", "é", "\"", "\\", "/", "\n", "\u{1}", "\u{7F}", "🌙", "ن", " ", "\u{2028}", "-", "0"]
        return (0..<random.below(12)).map { _ in pieces[random.below(pieces.count)] }.joined()
    }

    // MARK: - Editing JSON trees

    /// Every path of object keys in `tree` (through arrays too, by index).
    static func keyPaths(_ tree: Any, prefix: [String] = []) -> [[String]] {
        if let object = tree as? [String: Any] {
            return object.keys.sorted().flatMap { key in [prefix + [key]] + keyPaths(object[key]!, prefix: prefix + [key]) }
        }
        if let array = tree as? [Any] {
            return array.indices.flatMap { keyPaths(array[$0], prefix: prefix + ["\($0)"]) }
        }
        return []
    }

    static func removing(_ path: [String], from tree: Any) -> Any { editing(path, in: tree) { _ in nil } }

    static func replacing(_ path: [String], in tree: Any, with value: Any) -> Any { editing(path, in: tree) { _ in value } }

    static func editing(_ path: [String], in tree: Any, _ edit: (Any) -> Any?) -> Any {
        guard let first = path.first else { return tree }
        if var object = tree as? [String: Any], let child = object[first] {
            object[first] = path.count == 1 ? edit(child) : editing(Array(path.dropFirst()), in: child, edit)
            return object
        }
        if var array = tree as? [Any], let index = Int(first), array.indices.contains(index) {
            array[index] = editing(Array(path.dropFirst()), in: array[index], edit)
            return array
        }
        return tree
    }

    /// `text` with the value of the first member named `key` (with its quotes: `"\"item\""`) replaced by `value`.
    static func replacingMember(_ key: String, in text: String, with value: String) -> String {
        guard let node = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let replacement = try? JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        else { return text }
        let name = String(key.dropFirst().dropLast())
        guard let path = keyPaths(node).first(where: { $0.last == name && $0.count == 3 }) else { return text }
        return String(decoding: (try? JSONSerialization.data(withJSONObject: replacing(path, in: node, with: replacement))) ?? Data(), as: UTF8.self)
    }
}
