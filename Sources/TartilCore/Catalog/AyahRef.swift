/// One ayah: surah 1…114 and ayah 1…(that surah's count). Values are always valid: the public initializer checks
/// them against the catalog. The one other value is a file's name, never an ayah: `basmalaPart(ofSurah:)`, the
/// basmala at the start of a surah's recording for a reciter of one file per surah (ayah 0, as everyayah names
/// basmala files `SSS000.mp3`), which the player fetches, caches and decodes like an ayah's file.
public struct AyahRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let surah: Int
    public let ayah: Int

    /// Creates a reference, or throws a usage error naming what is allowed (`surah 2 (Al-Baqara) has 286 ayat`).
    public init(_ surah: Int, _ ayah: Int) throws(TartilError) {
        let surahInfo = try Catalog.surah(surah)
        guard ayah >= 1 else {
            throw .usage("ayah \(surah):\(ayah) does not exist: ayat are numbered from 1")
        }
        guard ayah <= surahInfo.ayahCount else {
            throw .usage("surah \(surahInfo.label) has \(surahInfo.ayahCount) ayat, so there is no ayah \(surah):\(ayah)")
        }
        self.surah = surah
        self.ayah = ayah
    }

    /// For values already known to be valid (the catalog's own tables).
    init(unchecked surah: Int, _ ayah: Int) {
        self.surah = surah
        self.ayah = ayah
    }

    /// The ayah with global number `global` (1…6236), e.g. `#262` is 2:255.
    public init(global: Int) throws(TartilError) {
        guard (1...Catalog.totalAyat).contains(global) else {
            throw .usage("there are \(Catalog.totalAyat) ayat, numbered #1-#\(Catalog.totalAyat), so there is no #\(global)")
        }
        let surah = Catalog.surahs[Catalog.lastIndex(in: Catalog.surahFirstGlobalAyat, atOrBefore: global)]
        self.init(unchecked: surah.number, global - surah.firstGlobalAyah + 1)
    }

    /// The basmala before ayah 1 of `surah` (2…114 but 9) in a recording of one file per surah, as a file key:
    /// `SSS000`. Plans, references and the journal never hold one (a plan's basmala item is for ayah 1).
    public static func basmalaPart(ofSurah surah: Int) -> AyahRef {
        precondition(hasBasmalaPart(surah), "surah \(surah) has no basmala before its first ayah")
        return AyahRef(unchecked: surah, 0)
    }

    /// Whether `surah` is one whose recording has a basmala before ayah 1 (every surah but 1 and 9).
    public static func hasBasmalaPart(_ surah: Int) -> Bool { (2...Catalog.surahCount).contains(surah) && surah != 9 }

    /// True for a `basmalaPart(ofSurah:)`.
    public var isBasmalaPart: Bool { ayah == 0 }

    /// An ayah, or a basmala part (ayah 0 of a surah that has one), from numbers stored with a file (the cache's
    /// index and folder); nil for anything else.
    public init?(fileKeySurah surah: Int, ayah: Int) {
        if ayah == 0 {
            guard Self.hasBasmalaPart(surah) else { return nil }
            self.init(unchecked: surah, 0)
        } else {
            guard let valid = try? AyahRef(surah, ayah) else { return nil }
            self = valid
        }
    }

    /// The ayah or basmala part a cache file's name (`036001.mp3`, `036000.mp3`) names, or nil.
    public init?(fileKeyName name: String) {
        guard let numbers = Self.numbers(inFileName: name) else { return nil }
        self.init(fileKeySurah: numbers.surah, ayah: numbers.ayah)
    }

    /// Global number 1…6236 (1:1 is #1, 114:6 is #6236); for a basmala part, that of its surah's ayah 1.
    public var global: Int { Catalog.surahs[surah - 1].firstGlobalAyah + max(ayah, 1) - 1 }

    /// The everyayah file stem, `SSSAAA` (`036001`).
    public var fileStem: String { Self.pad3(surah) + Self.pad3(ayah) }

    /// The surah and ayah numbers an everyayah file name spells (`036001.mp3` → 36, 1; any case of `.mp3`),
    /// not yet checked against the catalog (`001000.mp3`, a basmala file, gives ayah 0); nil for other names.
    public static func numbers(inFileName name: String) -> (surah: Int, ayah: Int)? {
        guard name.count == 10, name.lowercased().hasSuffix(".mp3") else { return nil }
        let stem = name.prefix(6)
        guard let surah = NumberText.whole(stem.prefix(3), in: 0...999), let ayah = NumberText.whole(stem.suffix(3), in: 0...999)
        else { return nil }
        return (surah, ayah)
    }

    /// The ayah an everyayah file name (`036001.mp3`) names, or nil when it names none.
    public init?(fileName: String) {
        guard let numbers = Self.numbers(inFileName: fileName), let ayah = try? AyahRef(numbers.surah, numbers.ayah)
        else { return nil }
        self = ayah
    }

    /// `2:255`.
    public var description: String { "\(surah):\(ayah)" }

    /// The ayah after this one in mushaf order, or nil after 114:6.
    public var next: AyahRef? {
        global < Catalog.totalAyat ? try? AyahRef(global: global + 1) : nil
    }

    public static func < (lhs: AyahRef, rhs: AyahRef) -> Bool {
        (lhs.surah, lhs.ayah) < (rhs.surah, rhs.ayah)
    }

    /// `value` as three digits (`7` → `007`), as file names spell surahs and ayat.
    public static func pad3(_ value: Int) -> String {
        value >= 100 || value < 0 ? String(value) : value >= 10 ? "0" + String(value) : "00" + String(value)
    }
}

/// A run of consecutive ayat in mushaf order, possibly across surahs (`2:284-3:5`). Never empty or backwards.
public struct AyahRange: Sendable, Hashable, Sequence, CustomStringConvertible {
    public let first: AyahRef
    public let last: AyahRef

    /// Throws a usage error when `last` comes before `first`.
    public init(_ first: AyahRef, _ last: AyahRef) throws(TartilError) {
        guard first <= last else {
            throw .usage("range runs backwards: \(first) comes after \(last) (write the earlier ayah first)")
        }
        self.first = first
        self.last = last
    }

    init(unchecked first: AyahRef, _ last: AyahRef) {
        self.first = first
        self.last = last
    }

    /// How many ayat the range holds.
    public var count: Int { last.global - first.global + 1 }

    public func contains(_ ayah: AyahRef) -> Bool { first <= ayah && ayah <= last }

    /// `2:255`, `2:255-260`, `2:284-3:5`, or `36` / `78-114` for whole surahs.
    public var description: String {
        let wholeSurahs = first.ayah == 1 && last.ayah == Catalog.surahs[last.surah - 1].ayahCount
        if wholeSurahs {
            return first.surah == last.surah ? "\(first.surah)" : "\(first.surah)-\(last.surah)"
        }
        if first == last { return first.description }
        if first.surah == last.surah { return "\(first)-\(last.ayah)" }
        return "\(first)-\(last)"
    }

    public func makeIterator() -> Iterator { Iterator(nextGlobal: first.global, lastGlobal: last.global) }

    public struct Iterator: IteratorProtocol {
        var nextGlobal: Int
        let lastGlobal: Int

        public mutating func next() -> AyahRef? {
            guard nextGlobal <= lastGlobal else { return nil }
            defer { nextGlobal += 1 }
            return try? AyahRef(global: nextGlobal)
        }
    }
}

extension AyahRef: Codable {
    /// Encoded as `[surah, ayah]`; decoding checks it against the catalog like `init(_:_:)`, and also takes
    /// back what encoding a `basmalaPart(ofSurah:)` wrote (`[surah, 0]`, a file's key: a status's buffering file).
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let surah = try container.decode(Int.self)
        let ayah = try container.decode(Int.self)
        if ayah == 0, let part = AyahRef(fileKeySurah: surah, ayah: 0) {
            self = part
            return
        }
        self = try AyahRef(surah, ayah)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(surah)
        try container.encode(ayah)
    }
}
