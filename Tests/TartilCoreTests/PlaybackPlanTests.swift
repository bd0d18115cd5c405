import Testing

@testable import TartilCore

@Suite struct PlaybackPlanTests {
    func ayat(_ surah: Int, _ range: ClosedRange<Int>) -> [AyahRef] { range.map { AyahRef(unchecked: surah, $0) } }

    @Test func basmalaComesBeforeAyahOneExceptInSurahsOneAndNine() throws {
        let plan = try PlaybackPlan(ayat: ayat(1, 1...2) + ayat(9, 1...1) + ayat(112, 1...2) + ayat(113, 2...3), options: .init())
        #expect(plan.items.map(\.description) == ["1:1", "1:2", "9:1", "basmala before 112:1", "112:1", "112:2", "113:2", "113:3"])
        #expect(plan.items[3].file == AyahRef(unchecked: 1, 1))
        let off = try PlaybackPlan(ayat: ayat(112, 1...2), options: .init(basmala: .off))
        #expect(off.items.map(\.description) == ["112:1", "112:2"])
    }

    @Test func repeatsAndPausesForMemorisation() throws {
        let plan = try PlaybackPlan(ayat: ayat(2, 255...256), options: .init(repeatEach: .times(2), pause: .seconds(1.5)))
        #expect(plan.items.map(\.description) == [
            "2:255", "pause 1.5 s after 2:255", "2:255 (×2)", "pause 1.5 s after 2:255",
            "2:256", "pause 1.5 s after 2:256", "2:256 (×2)", "pause 1.5 s after 2:256",
        ])
        #expect(plan.group(containing: 2) == 0..<4)
    }

    @Test func theScrubberSpansTheCurrentSurahsItems() throws {
        let plan = try PlaybackPlan(ayat: ayat(112, 3...4) + ayat(113, 1...5), options: .init())
        #expect(plan.surahSpan(containing: 1) == 0..<2)
        #expect(plan.surahSpan(containing: 2) == 2..<8)  // the basmala belongs to 113
        #expect(plan.firstItem(of: AyahRef(unchecked: 113, 1)) == 2)
        #expect(plan.firstItem(of: AyahRef(unchecked: 114, 1)) == nil)
        #expect(plan.rangeDescription == "112:3-113:5")
    }
}

@Suite struct PlaylistOrderTests {
    /// A plan plays the references in the order written, like a playlist; an ayah named twice plays once, first.
    @Test func referencesPlayInTheOrderWritten() throws {
        let ayat = ReferenceParser.uniqueAyat(of: try ReferenceParser.parse(["114:5-6", "1:7", "114:6"]))
        #expect(ayat.map(\.description) == ["114:5", "114:6", "1:7"])
        let plan = try PlaybackPlan(ayat: try ReferenceParser.uniqueAyat(of: ReferenceParser.parse(["114", "1"])), options: .init())
        #expect(plan.items.first?.ayah == AyahRef(unchecked: 114, 1))
        #expect(plan.items.last?.ayah == AyahRef(unchecked: 1, 7))
    }
}

@Suite struct TimelineTests {
    let timeline = Timeline(lengths: [
        .init(samples: 44100, rate: 22050), .init(samples: 0, rate: 22050), .init(samples: 22050, rate: 22050),
        .init(samples: 1000, rate: 22050, isEstimated: true),
    ])

    @Test func locatesSamplesByPrefixSums() throws {
        #expect(timeline.totalSamples == 67150)
        #expect(timeline.position(atSample: 0) == PlanPosition(index: 0))
        #expect(timeline.position(atSample: 44099) == PlanPosition(index: 0, offset: 44099))
        #expect(timeline.position(atSample: 44100) == PlanPosition(index: 2))  // the empty item is passed over
        #expect(timeline.position(atSample: 66149) == PlanPosition(index: 2, offset: 22049))
        #expect(timeline.position(atSample: 66150) == PlanPosition(index: 3))
        #expect(timeline.position(atSample: 67150) == timeline.end)
        #expect(timeline.position(atSample: -5) == PlanPosition(index: 0))
    }

    @Test func timeIsRoundedToTheNearestSample() throws {
        #expect(timeline.position(atSeconds: 2.5, from: 0) == PlanPosition(index: 2, offset: 11025))
        #expect(timeline.position(atSeconds: 1.0 / 44100, from: 0) == PlanPosition(index: 0, offset: 1))  // 0.5 rounds away from zero
        #expect(timeline.position(atSeconds: 1, from: 2) == PlanPosition(index: 3, offset: 0))
        #expect(timeline.position(atSeconds: 4, from: 0) == nil, "the end is not a place to play")
        #expect(timeline.seconds(at: PlanPosition(index: 2, offset: 22050)) == 3)
        #expect(timeline.position(atShare: 0.5, of: 0..<4) == PlanPosition(index: 0, offset: 33575))
    }

    @Test func mixedRatesCountEachItemAtItsOwnRate() throws {
        let mixed = Timeline(lengths: [.init(samples: 44100, rate: 44100), .init(samples: 22050, rate: 22050), .init(samples: 8000, rate: 8000)])
        #expect(mixed.seconds(in: 0..<3) == 3)
        #expect(mixed.position(atSeconds: 1.5, from: 0) == PlanPosition(index: 1, offset: 11025))
        #expect(mixed.position(atSeconds: 2.25, from: 0) == PlanPosition(index: 2, offset: 2000))
        #expect(mixed.position(atShare: 0.5, of: 0..<3) == PlanPosition(index: 1, offset: 11025))
    }

    @Test func estimatesAreReplacedWhenMeasured() throws {
        var copy = timeline
        #expect(copy.isEstimated(in: 0..<4))
        #expect(!copy.isEstimated(in: 0..<3))
        copy.setLength(.init(samples: 2000, rate: 22050), of: 3)
        #expect(!copy.isEstimated(in: 0..<4))
        #expect(copy.totalSamples == 68150)
        #expect(copy.samples(in: 2..<4) == 24050)
    }
}

@Suite struct SeekTargetTests {
    @Test(arguments: [
        ("3:20", SeekTarget.time(seconds: 200)),
        ("1:02:03", .time(seconds: 3723)),
        ("95", .time(seconds: 95)),
        ("95.5s", .time(seconds: 95.5)),
        ("0:00", .time(seconds: 0)),
        ("+30", .offset(seconds: 30)),
        ("-10", .offset(seconds: -10)),
        ("-1:00", .offset(seconds: -60)),
        ("45%", .fraction(0.45)),
        ("100%", .fraction(1)),
        ("100:00:00", .time(seconds: 360_000)),
        ("0000000000000000000000095", .time(seconds: 95)),
        ("2:255", .ayah(AyahRef(unchecked: 2, 255))),
        ("36:1", .ayah(AyahRef(unchecked: 36, 1))),
        ("ayah 3:20", .ayah(AyahRef(unchecked: 3, 20))),
        ("yasin:12", .ayah(AyahRef(unchecked: 36, 12))),
    ])
    func parses(text: String, target: SeekTarget) throws {
        #expect(try SeekTarget.parse(text) == target)
    }

    @Test(arguments: [
        ("", "seek needs a target"),
        ("+", "is not a time to move by"),
        ("+abc", "is not a time to move by"),
        ("150%", "is not a share of the surah"),
        ("-5%", "is not a time to move by"),
        ("1:75", "surah 1 (Al-Faatiha) has 7 ayat, so there is no ayah 1:75"),
        ("1:2:3", "is not an ayah number"),
        ("2:255-257", "names more than one ayah"),
        ("soon", "soon"),
        ("999999999999999999:00", "is longer than any recitation: times go up to 100:00:00 (360000 s)"),
        ("99999999999999999999", "is longer than any recitation"),
        ("99999999999999999999999999999999999999:00:00", "is longer than any recitation"),
        ("+99999999999999999999", "is longer than any recitation"),
        ("-9223372036854775808", "is longer than any recitation"),
        ("100:00:01", "is longer than any recitation"),
        ("360000.5", "is longer than any recitation"),
        ("1e300", "is not a reference"),
        ("nan", "nan"),
        ("inf%", "is not a share of the surah"),
    ])
    func refuses(text: String, message: String) {
        #expect {
            try SeekTarget.parse(text)
        } throws: { error in
            guard let error = error as? TartilError else { return false }
            return error.code == .usage && error.message.contains(message)
        }
    }
}
