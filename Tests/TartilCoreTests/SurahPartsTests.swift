import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// What playing a reciter of one file per surah stands on: basmala parts as file keys, plans that recite each
/// surah's own basmala, a surah table's parts as pinned files, and the cut of a whole body to a window.
@Suite struct SurahPartsTests {
    @Test func basmalaPartsAreFileKeysOfSurahsThatHaveOne() throws {
        let part = AyahRef.basmalaPart(ofSurah: 36)
        #expect(part.isBasmalaPart && part.fileStem == "036000" && part.description == "36:0")
        #expect(part < (try AyahRef(36, 1)))
        #expect(part.global == (try AyahRef(36, 1)).global)
        #expect(AyahRef(fileKeyName: "036000.mp3") == part)
        #expect(AyahRef(fileKeyName: "036001.mp3") == (try AyahRef(36, 1)))
        for name in ["001000.mp3", "009000.mp3", "115000.mp3", "036084.mp3", "36000.mp3"] { #expect(AyahRef(fileKeyName: name) == nil, "\(name)") }
        #expect(AyahRef(fileName: "036000.mp3") == nil, "an everyayah basmala file is still not an ayah")
        #expect(!(try AyahRef(36, 1)).isBasmalaPart)
        #expect(AyahRef.hasBasmalaPart(2) && !AyahRef.hasBasmalaPart(1) && !AyahRef.hasBasmalaPart(9) && !AyahRef.hasBasmalaPart(115))
    }

    /// The same plan for both layouts, item for item, but the basmala's file: 1:1, or the surah's own part.
    @Test(arguments: [["112"], ["113:5-114:2"], ["9:129-10:1"], ["1"]])
    func aSurahFileReciterRecitesEachSurahsOwnBasmala(references: [String]) throws {
        let ayat = ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(references))
        var options = PlaybackOptions()
        options.repeatEach = .times(2)
        let perAyah = try PlaybackPlan(ayat: ayat, options: options)
        let perSurah = try PlaybackPlan(ayat: ayat, options: options, files: .surah)
        #expect(perSurah.items.count == perAyah.items.count)
        for (a, s) in zip(perAyah.items, perSurah.items) {
            #expect(a.kind == s.kind && a.ayah == s.ayah && a.repetition == s.repetition && a.group == s.group)
            if a.kind == .basmala {
                #expect(a.file == PlayFiles.basmala)
                #expect(s.file == AyahRef.basmalaPart(ofSurah: s.ayah.surah))
            } else {
                #expect(a.file == s.file)
            }
        }
        // A relaid plan (a `set` while playing) keeps its layout.
        var machine = PlaybackMachine(plan: perSurah, timeline: PlaybackMachine.timeline(for: perSurah, table: nil))
        _ = machine.start(at: nil)
        _ = try machine.on(.set(.repeatEach(.times(1))))
        #expect(machine.plan.files == .surah)
    }

    /// A skipped basmala is named by where it is recited from: 1:1, or the surah's own recording.
    @Test func aSkippedBasmalaIsNamedByItsLayout() throws {
        let ayah = try AyahRef(36, 1)
        #expect(PlaybackMachine.skippedBasmalaLine(before: ayah, reason: "why") == "skipped the basmala (1:1) of surah 36: why")
        #expect(PlaybackMachine.skippedBasmalaLine(before: ayah, reason: "why", files: .surah) == "skipped the basmala of surah 36: why")
        #expect(
            PlaybackMachine.skippedMessage([], basmala: [(ayah, "why"), (try AyahRef(67, 1), "why")], files: .surah)
                == "the basmala of surahs 36, 67 could not be played: why")
    }

    @Test func aSurahTablesPartsArePinnedFilesWithTheirWindowsAndRanges() throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/surah-table.tsv")))
        let table = try SurahTable.parse(bytes: bytes, file: "surah-table.tsv")
        let parts = table.playableParts()
        #expect(parts.pinned.files.count == 22 + 3)
        #expect(parts.pinned.coverage == 22, "basmala parts are not ayat")
        for file in table.files {
            for part in file.parts {
                let key = part.ayah == 0 ? AyahRef.basmalaPart(ofSurah: file.surah) : try AyahRef(file.surah, part.ayah)
                let pinned = try #require(parts.pinned.files[key])
                #expect(pinned.bytes == part.bytes.count && pinned.digest == part.digest)
                #expect(pinned.samples == part.sampleCount && pinned.sampleRate == file.sampleRate)
                #expect(parts.windows[key] == SampleWindow(skip: part.skip, count: part.sampleCount))
                #expect(parts.byteRanges[key] == part.bytes)
            }
        }
        #expect(parts.pinned.files[AyahRef.basmalaPart(ofSurah: 36)] == nil)
        // The scrubber's surah span is exactly the file: basmala and ayat, no gap.
        let plan = try PlaybackPlan(ayat: (1...4).map { try AyahRef(112, $0) }, options: PlaybackOptions(), files: .surah)
        let timeline = PlaybackMachine.timeline(for: plan, table: parts.pinned)
        #expect(timeline.lengths.map(\.samples).reduce(0, +) == table.file(surah: 112)?.samples)
        #expect(timeline.lengths.allSatisfy { !$0.isEstimated })
    }

    /// Any cutting of a whole body into chunks keeps exactly the window's bytes, and says it is whole exactly at
    /// the chunk that completes it (seeded).
    @Test(arguments: 0..<300)
    func cuttingAWholeBodyKeepsExactlyTheWindow(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let size = 1 + random.below(5000)
        let body = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let first = random.below(size)
        let window = first...(first + random.below(size - first))
        var kept: [UInt8] = []
        var offset = 0
        var completed = false
        while offset < body.count && !completed {
            let chunk = min(body.count - offset, 1 + random.below(random.below(2) == 0 ? 16 : 2000))
            let (keep, complete) = WindowCut.cut(chunk: chunk, bodyOffset: offset, window: window, kept: kept.count)
            kept += body[(offset + keep.lowerBound)..<(offset + keep.upperBound)]
            completed = complete
            offset += chunk
        }
        #expect(kept == Array(body[window]))
        #expect(completed)
        #expect(WindowCut.cut(chunk: 10, bodyOffset: offset, window: window, kept: window.count) == (0..<0, true))
    }

    @Test func windowCutTable() {
        let rows: [(chunk: Int, offset: Int, window: ClosedRange<Int>, kept: Int, keep: Range<Int>, complete: Bool)] = [
            (100, 0, 30...59, 0, 30..<60, true),
            (100, 0, 130...159, 0, 0..<0, false),
            (100, 100, 130...159, 0, 30..<60, true),
            (40, 0, 30...59, 0, 30..<40, false),
            (40, 40, 30...59, 10, 0..<20, true),
            (5, 45, 30...59, 15, 0..<5, false),
            (100, 0, 0...0, 0, 0..<1, true),
        ]
        for row in rows {
            let cut = WindowCut.cut(chunk: row.chunk, bodyOffset: row.offset, window: row.window, kept: row.kept)
            #expect(cut.keep == row.keep && cut.complete == row.complete, "\(row)")
        }
    }
}
