// The status and its parts, read back from the JSON their `Encodable` conformances write (see
// `JSONNode+Encoded.swift` for why and for the forms). Each reader takes exactly the keys and cases the synthesized
// `Decodable` conformance takes; `ControlResultEncodedTests` (TartilSessionTests) checks every one against `JSONEncoder` and `JSONDecoder`.

extension PlayerStatus {
    /// The status in `node`, as `JSONEncoder` writes it; `ShapeError` names what does not fit (`what` is the
    /// value's name in that message).
    public init(encoded node: JSONNode, _ what: String = "status") throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        func optional<T>(_ key: String, _ read: (JSONNode, String) throws(JSONNode.ShapeError) -> T) throws(JSONNode.ShapeError) -> T? {
            guard let value = members.optional(key) else { return nil }
            return try read(value, members.name(key))
        }
        self.init(
            state: try PlayerState(encoded: members.required("state"), members.name("state")),
            reciter: try ReciterID(encoded: members.required("reciter"), members.name("reciter")),
            index: try members.int("index"),
            item: try optional("item", PlanItem.init(encoded:_:)),
            itemCount: try members.int("itemCount"),
            surah: try members.int("surah"),
            positionSeconds: try members.double("positionSeconds"),
            positionSamples: try members.int("positionSamples"),
            durationSeconds: try members.double("durationSeconds"),
            durationSamples: try members.int("durationSamples"),
            sampleRate: try members.int("sampleRate"),
            isEstimated: try members.bool("isEstimated"),
            ayahStarts: try members.required("ayahStarts").doubles(members.name("ayahStarts")),
            bufferingAyah: try optional("bufferingAyah", AyahRef.init(encoded:_:)),
            skipped: try Self.reasons(members.required("skipped"), members.name("skipped")),
            totalSamples: try members.int("totalSamples"),
            writtenFrames: try members.int("writtenFrames"),
            writtenSeconds: try members.double("writtenSeconds"),
            endMessage: try members.optionalString("endMessage"),
            options: try PlaybackOptions(encoded: members.required("options"), members.name("options")),
            cycle: try members.int("cycle"),
            loop: try optional("loop", LoopSpan.init(encoded:_:)),
            loopMarkSeconds: try members.optionalDouble("loopMarkSeconds"),
            stopAfter: try optional("stopAfter", StopAfter.init(encoded:_:)),
            sleepSecondsLeft: try members.optionalDouble("sleepSecondsLeft"),
            speed: try members.double("speed"),
            volume: try members.int("volume"),
            maximumSpeed: try members.double("maximumSpeed"),
            hasNext: try members.bool("hasNext"))
        // Nil (a player that does not tell basmalas apart) is not the initializer's default, `[:]`.
        skippedBasmala = try optional("skippedBasmala", Self.reasons)
        motion = try optional("motion", Motion.init(encoded:_:))
        learningSurah = try members.optionalInt("learningSurah")
        bufferingHeldElsewhere = try members.optionalBool("bufferingHeldElsewhere")
        endIsUsage = try members.optionalBool("endIsUsage")
    }

    /// A dictionary of ayat to reasons, as `Codable` writes one whose keys are not strings: an array of keys
    /// (`[surah, ayah]`) and values, alternating; of a key written twice the last value wins, as in `Decodable`.
    static func reasons(_ node: JSONNode, _ what: String) throws(JSONNode.ShapeError) -> [AyahRef: String] {
        let elements = try node.elements(what)
        guard elements.count % 2 == 0 else { throw JSONNode.ShapeError("\(what) has a key without a value") }
        var reasons: [AyahRef: String] = [:]
        var index = 0
        while index < elements.count {
            reasons[try AyahRef(encoded: elements[index], what + "[]")] = try elements[index + 1].text(what + "[]")
            index += 2
        }
        return reasons
    }
}

extension PlayerStatus.Motion {
    /// The motion in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(
            since: try ClockInstant(encoded: members.required("since"), members.name("since")), limitSamples: try members.int("limitSamples"))
    }
}

extension ClockInstant {
    /// The instant in `node`, as `JSONEncoder` writes it (`{"nanoseconds": N}`; see `JSONNode.uint64(_:)` for N
    /// above 2^53).
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(nanoseconds: try members.required("nanoseconds").uint64(members.name("nanoseconds")))
    }
}

extension PlayerState {
    /// The state in `node`: its raw value.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let text = try node.text(what)
        guard let state = PlayerState(rawValue: text) else { throw JSONNode.ShapeError("\(what) is not a player state: \(text)") }
        self = state
    }
}

extension ReciterID {
    /// The reciter id in `node`: its text, checked like `init(_:)`.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let text = try node.text(what)
        do throws(TartilError) {
            self = try ReciterID(text)
        } catch {
            throw JSONNode.ShapeError("\(what): \(error.message)")
        }
    }
}

extension AyahRef {
    /// The ayah in `node`: `[surah, ayah]` (elements after the second passed over, as `Decodable` does), checked
    /// against the catalog like `init(_:_:)`; or, as `Decodable` also reads it, a surah's basmala part
    /// (`[surah, 0]`: a file's key, such as the file a status is buffering).
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let elements = try node.elements(what)
        guard elements.count >= 2 else { throw JSONNode.ShapeError("\(what) is not [surah, ayah]") }
        let surah = try elements[0].int(what + "[0]")
        let ayah = try elements[1].int(what + "[1]")
        if ayah == 0, let part = AyahRef(fileKeySurah: surah, ayah: 0) {
            self = part
            return
        }
        do throws(TartilError) {
            self = try AyahRef(surah, ayah)
        } catch {
            throw JSONNode.ShapeError("\(what): \(error.message)")
        }
    }
}

extension PlanItem {
    /// The item in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        let kind = try members.required("kind").enumCase(members.name("kind"), of: ["ayah", "basmala", "pause", "cyclePause"])
        let itemKind: Kind
        switch kind.name {
        case "ayah": itemKind = .ayah
        case "basmala": itemKind = .basmala
        case "pause": itemKind = .pause(try PauseLength(encoded: kind.values.required("_0"), kind.values.name("_0")))
        default: itemKind = .cyclePause(seconds: try kind.values.double("seconds"))
        }
        let files = try members.string("files")
        guard let layout = FileLayout(rawValue: files) else { throw JSONNode.ShapeError("\(members.name("files")) is not a file layout: \(files)") }
        self.init(
            kind: itemKind, ayah: try AyahRef(encoded: members.required("ayah"), members.name("ayah")), repetition: try members.int("repetition"),
            group: try members.int("group"), cycle: try members.int("cycle"),
            reviewOf: try members.optional("reviewOf").map { node throws(JSONNode.ShapeError) in try AyahRef(encoded: node, members.name("reviewOf")) },
            files: layout)
    }
}

extension PlaybackOptions {
    /// The options in `node`, as `JSONEncoder` writes them.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        let basmala = try members.string("basmala")
        guard let mode = Basmala(rawValue: basmala) else { throw JSONNode.ShapeError("\(members.name("basmala")) is not auto or off: \(basmala)") }
        self.init(
            basmala: mode, repeatEach: try RepeatCount(encoded: members.required("repeatEach"), members.name("repeatEach")),
            repeatRange: try RepeatCount(encoded: members.required("repeatRange"), members.name("repeatRange")),
            pause: try PauseLength(encoded: members.required("pause"), members.name("pause")),
            cyclePauseSeconds: try members.double("cyclePauseSeconds"),
            stepped: try members.optional("stepped").map { node throws(JSONNode.ShapeError) in
                Stepped(window: try node.members(members.name("stepped")).optionalInt("window"))
            })
    }
}

extension RepeatCount {
    /// The count in `node`, as `JSONEncoder` writes it (`{"times": {"_0": 3}}`, `{"forever": {}}`).
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let form = try node.enumCase(what, of: ["times", "forever"])
        self = form.name == "times" ? .times(try form.values.int("_0")) : .forever
    }
}

extension PauseLength {
    /// The length in `node`, as `JSONEncoder` writes it (`{"seconds": {"_0": 2}}`, `{"multiple": {"_0": 1}}`).
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let form = try node.enumCase(what, of: ["seconds", "multiple"])
        let value = try form.values.double("_0")
        self = form.name == "seconds" ? .seconds(value) : .multiple(value)
    }
}

extension StopAfter {
    /// When playback stops, in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let form = try node.enumCase(what, of: ["seconds", "ayat", "surah", "juz"])
        switch form.name {
        case "seconds": self = .seconds(try form.values.double("_0"))
        case "ayat": self = .ayat(try form.values.int("_0"))
        case "surah": self = .surah
        default: self = .juz
        }
    }
}

extension LoopSpan {
    /// The loop in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(
            startSeconds: try members.double("startSeconds"), endSeconds: try members.double("endSeconds"),
            passesLeft: try members.optionalInt("passesLeft"))
    }
}

extension Bookmark {
    /// The bookmark in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(
            eventID: try members.string("eventID"), deviceID: try members.string("deviceID"), timeMs: try members.int64("timeMs"),
            reciter: try members.optionalString("reciter"), surah: try members.int("surah"), ayah: try members.int("ayah"),
            note: try members.optionalString("note"))
    }
}
