import TartilControl
import TartilJournal
import TartilSession
import Foundation
import TestSupport
import Testing

@testable import TartilCLI
@testable import TartilCore

/// Every parser of text that people or files give tartil, fed mutated and generated input in-process: no input
/// may trap, hang, or fail with anything but the parser's own typed error; what is accepted must be sane.
///
/// Budget: `TARTIL_FUZZ_BUDGET` inputs in total (default 24,000, split between the targets); `tools/fuzz` runs a
/// larger one. `TARTIL_FUZZ_SEED` replays a run; a failure names its target, seed and input.
@Suite struct ParserFuzzTests {
    /// The longest one input may take (debug build, a shared machine): far beyond any real parse.
    static let deadline: Double = 2.0

    /// One parser under test: its seed inputs and how to run one input.
    struct Target: Sendable, CustomTestStringConvertible {
        let name: String
        /// How many times dearer one input is than a pure parser's (a target that opens SQLite files): it gets
        /// that many times fewer inputs, so the suite's time stays within its budget.
        var cost = 1
        /// The longest one input may take: `ParserFuzzTests.deadline` unless the target's inputs are far larger.
        var deadline = ParserFuzzTests.deadline
        let corpus: @Sendable () -> [[UInt8]]
        /// Runs one input; returns a problem (a wrong error type, an insane result), or nil.
        let run: @Sendable ([UInt8]) -> String?
        var testDescription: String { name }
    }

    static let targets: [Target] = [
        Target(name: "references", corpus: { referenceCorpus }, run: { input in
            do throws(TartilError) {
                let references = try ReferenceParser.parse(input.text.split(separator: " ").map(String.init))
                let ayat = ReferenceParser.uniqueAyat(of: references)
                for ayah in ayat where !(1...Catalog.totalAyat).contains(ayah.global) { return "ayah \(ayah) out of the catalog" }
                return nil
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "seek targets", corpus: { seekCorpus }, run: { input in
            do throws(TartilError) {
                switch try SeekTarget.parse(input.text) {
                case .time(let seconds): return (0...Double(SeekTarget.maximumSeconds)).contains(seconds) ? nil : "time \(seconds)"
                case .offset(let seconds): return abs(seconds) <= Double(SeekTarget.maximumSeconds) ? nil : "offset \(seconds)"
                case .fraction(let share): return (0...1).contains(share) ? nil : "share \(share)"
                case .ayah(let ayah): return (1...Catalog.totalAyat).contains(ayah.global) ? nil : "ayah \(ayah)"
                }
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "hifz plans", corpus: { hifzPlanCorpus }, run: { input in
            // A plan event's note: it reads, or is refused with a failure; what reads writes back to itself.
            do throws(TartilError) {
                let plan = try HifzPlan(encoded: input.text)
                guard (try? HifzPlan(encoded: plan.encoded)) == plan else { return "a plan that does not read back as itself" }
                _ = try plan.sequence()
                return nil
            } catch {
                return error.code == .failure ? nil : "error code \(error.code), not failure"
            }
        }),
        Target(name: "hifz plan options", corpus: { hifzPlanCorpus }, run: { input in
            // `hifz plan --NAME VALUE`: the first word names a field, the rest is its value; a usage error or a
            // plan whose field reads back as what it now says.
            let text = input.text
            let name = HifzPlan.fieldNames[Int(input.first ?? 0) % HifzPlan.fieldNames.count]
            var plan = HifzPlan()
            do throws(TartilError) {
                try plan.set(name, to: text)
                var again = HifzPlan()
                try again.set(name, to: plan.text(of: name))
                return again == plan ? nil : "--\(name) '\(text.prefix(80))' does not read back as '\(plan.text(of: name))'"
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "hifz heard notes", corpus: { hifzHeardCorpus }, run: { input in
            do throws(TartilError) {
                let note = try HifzHeardNote(encoded: input.text)
                guard note.ayat.allSatisfy({ (1...Catalog.totalAyat).contains($0) }) else { return "an ayah out of the catalog" }
                return (try? HifzHeardNote(encoded: note.encoded)).map { Set($0.ayat) == Set(note.ayat) && $0.day == note.day } == true
                    ? nil : "a note that does not read back"
            } catch {
                return error.code == .failure ? nil : "error code \(error.code), not failure"
            }
        }),
        Target(name: "durations", corpus: { durationCorpus }, run: { input in
            // Read in both bare units, then through a range check: a value is finite, in 0…100 h, and in range.
            let text = input.text
            for bare in [DurationText.BareUnit.seconds, .minutes] {
                if case .value(let seconds) = DurationText.seconds(text, bare: bare),
                    !(seconds.isFinite && seconds >= 0 && seconds <= DurationText.maximumSeconds)
                {
                    return "\(bare): \(seconds) s"
                }
            }
            do throws(TartilError) {
                let seconds = try DurationText.parse(text, in: 1...600, for: "--x")
                return (1...600).contains(seconds) ? nil : "parsed \(seconds) outside 1...600"
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "speeds and volumes", corpus: { levelCorpus }, run: { input in
            let text = input.text
            do throws(TartilError) {
                let speed = try PlaybackSpeed.parse(text, for: "--speed")
                guard PlaybackSpeed.range.contains(speed), PlaybackSpeed.stepped(speed, by: 0) == speed else { return "speed \(speed)" }
            } catch {
                if error.code != .usage { return "speed: error code \(error.code), not usage" }
            }
            do throws(TartilError) {
                let level = try PlaybackVolume.parse(text, for: "volume").applied(to: 100)
                guard PlaybackVolume.range.contains(level) else { return "volume \(level)" }
            } catch {
                if error.code != .usage { return "volume: error code \(error.code), not usage" }
            }
            return nil
        }),
        Target(name: "numbers, sizes and dates", corpus: { numberCorpus }, run: { input in
            let text = input.text
            if let value = NumberText.whole(text, in: 0...10_000), !(0...10_000).contains(value) { return "whole \(value)" }
            if let value = NumberText.decimal(text, in: 0...60), !(0...60).contains(value) { return "decimal \(value)" }
            if let size = try? PrefetchCommand.parseSize(text), !(1...PrefetchCommand.maximumSize).contains(size) {
                return "size \(size)"
            }
            _ = try? JournalCommands.parseSince(text, nowMs: 1_764_000_000_000)
            return nil
        }),
        Target(name: "mirrors.json", corpus: { mirrorsCorpus }, run: { input in
            do throws(TartilError) {
                let list = try MirrorList.parse(bytes: input, file: "m.json")
                for reciter in list.reciters {
                    for mirror in reciter.mirrors { _ = mirror.template.url(for: AyahRef(unchecked: 114, 6)) + mirror.template.url(forSurah: 114) }
                    if reciter.timings != nil && reciter.files != .surah { return "timings for a per-ayah reciter" }
                }
                return nil
            } catch {
                return error.code == .invalidData ? nil : "error code \(error.code), not invalid-data"
            }
        }),
        Target(name: "surah timings", corpus: { timingsCorpus }, run: { input in
            // Either shape, any surah: refused as invalid data, or every ayah of the surah with sane times, and sample
            // ranges that are refused the same way or lie in the file, in order and never empty.
            for (format, surah) in [(SurahTimings.Format.quranstatic, 112), (.mp3quran, 112), (.quranstatic, 1), (.mp3quran, 2)] {
                do throws(TartilError) {
                    let timings = try SurahTimings.parse(input, format: format, surah: surah, file: "t.json")
                    guard timings.ayat.count == Catalog.surahs[surah - 1].ayahCount else { return "\(timings.ayat.count) ayat for surah \(surah)" }
                    for span in timings.ayat + [timings.beforeFirst].compactMap({ $0 })
                    where !(0...SurahTimings.maximumMs).contains(span.startMs) || span.endMs.map({ $0 < span.startMs }) ?? false {
                        return "span \(span)"
                    }
                    for (rate, samples) in [(22050, 441_000), (8000, 1), (48000, 48000 * 3600)] {
                        guard let ranges = try? timings.sampleRanges(rate: rate, samples: samples) else { continue }
                        let all = [ranges.beforeFirst].compactMap { $0 } + ranges.ayat
                        for range in all where range.isEmpty || range.lowerBound < 0 || range.upperBound > samples { return "range \(range)" }
                        for (a, b) in zip(all, all.dropFirst()) where a.upperBound > b.lowerBound { return "ranges \(a) then \(b)" }
                    }
                } catch {
                    if error.code != .invalidData { return "error code \(error.code), not invalid-data" }
                }
            }
            return nil
        }),
        Target(name: "reciter tables", corpus: { tableCorpus }, run: { input in reciterTableProblem(input) }),
        Target(name: "surah tables", corpus: { surahTableCorpus }, run: { input in surahTableProblem(input) }),
        // The whole committed table (560 KB, 6,236 rows): a debug build mutates and parses one in ~0.3 s, some 60
        // times what an input of the 20-row table above costs, so it gets 60 times fewer inputs (20 in CI, 400 in
        // tools/fuzz). It had half of one target's inputs and made that the suite's slowest test: 158 s on 2 cores.
        // A whole table is a 560 KB parse, ~0.3 s in a debug build and 2.6 s once on a loaded 2-core machine running
        // the suite in five processes: 10 s is still 30 times a parse, and a hang is not.
        Target(name: "reciter tables, a whole committed table", cost: 60, deadline: 10, corpus: { wholeTableCorpus }, run: { input in
            reciterTableProblem(input)
        }),
        Target(name: "JSON", corpus: { mirrorsCorpus + [Array("[[[[[[[[[[1]]]]]]]]]]".utf8), Array(#"{"a":"\ud800"}"#.utf8)] }, run: { input in
            _ = try? JSONNode.parse(input)
            return nil
        }),
        Target(name: "command lines", corpus: { lineCorpus }, run: { input in
            var settings = Settings(environment: [:], bundledDataDirectory: nil)
            guard let commands = try? CommandLineSplitter.split(input.text) else { return nil }
            for words in commands {
                guard let (command, used) = CommandTable.standard.find(words), command.run != nil else { continue }
                guard let invocation = try? command.parse(Array(words[used...]), settings: &settings) else { continue }
                // The option values every command checks before doing anything.
                for (name, range) in [("--jobs", 1...64), ("--retries", 0...20), ("--repeat", 1...99)] {
                    if let value = try? invocation.integer(name, in: range), !range.contains(value) { return "\(name) \(value)" }
                }
                _ = try? invocation.decimal("--pause", in: 0...60)
            }
            return nil
        }),
        Target(name: "memorisation controls", corpus: { controlsCorpus }, run: { input in
            let text = input.text
            let words = text.split(separator: " ").map(String.init)
            do throws(TartilError) {
                if case .times(let count)? = try? RepeatCount.parse(text, for: "--repeat"), !(1...RepeatCount.maximum).contains(count) {
                    return "repeat \(count)"
                }
                switch try? PauseLength.parse(text, for: "--pause") {
                case .seconds(let seconds)?: if !(0...PauseLength.maximumSeconds).contains(seconds) { return "pause \(seconds)" }
                case .multiple(let multiple)?: if !(0...PauseLength.maximumMultiple).contains(multiple) { return "pause \(multiple)x" }
                case nil: break
                }
                if let stepped = try? Stepped.parse(text, for: "--stepped"), let window = stepped.window, window < 2 { return "window \(window)" }
                switch try? StopAfter.parse(text, for: "--stop-after") {
                case .seconds(let seconds)?: if !(seconds > 0 && seconds <= StopAfter.maximumSeconds) { return "timer \(seconds)" }
                case .ayat(let count)?: if count < 1 { return "ayat \(count)" }
                default: break
                }
                if let request = try? LoopRequest.parse(words) {
                    if let passes = request.passes, passes < 1 { return "passes \(passes)" }
                    // A loop resolved against a real plan: refused cleanly or inside it.
                    var machine = PlaybackMachine(
                        plan: try PlaybackPlan(ayat: (1...4).map { AyahRef(unchecked: 112, $0) }, options: .init()),
                        timeline: Timeline(lengths: Array(repeating: .init(samples: 22050, rate: 22050), count: 5)))
                    _ = machine.start(at: nil)
                    if (try? machine.on(.loop(request))) != nil, let loop = machine.loop, loop.endIndex >= 5 { return "loop end \(loop.endIndex)" }
                }
                if words.count >= 2, let setting = try? PlaybackOptions.Setting.parse(name: words[0], value: words[1]) {
                    _ = try PlaybackPlan(ayat: [AyahRef(unchecked: 112, 1)], options: PlaybackOptions().with(setting))
                }
                return nil
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "sync folder names", corpus: { syncNameCorpus }, run: { input in
            // Whatever the name, size and kind: a decision, and one that merges only DEVICE-ID.tartil-journal.
            let name = input.text
            let size = Int64(input.count * 512 + (input.first.map { Int($0) % 3 } ?? 0))
            for kind in [SyncFolder.EntryKind.regular, .directory, .symbolicLink, .other] {
                let decision = SyncFolder.decide(.init(name: name, kind: kind, size: size), ownDeviceID: "own-device")
                switch decision {
                case .merge(let device):
                    guard kind == .regular, name == device + SyncFolder.suffix, SyncFolder.isDeviceID(Substring(device)),
                        size > 0, size % 512 == 0, device != "own-device"
                    else { return "merges \(name.debugDescription) (\(kind), \(size) bytes)" }
                case .own:
                    guard name == "own-device" + SyncFolder.suffix, kind == .regular else { return "own: \(name.debugDescription)" }
                case .skip(let reason):
                    guard !reason.isEmpty, name.contains("tartil-journal") else { return "skip without reason or not ours: \(name.debugDescription)" }
                case .ignore:
                    guard !name.contains("tartil-journal") else { return "ignores \(name.debugDescription)" }
                }
            }
            return nil
        }),
        Target(name: "config files", corpus: { configCorpus }, run: { input in
            do throws(TartilError) {
                let config = try ConfigFile.parse(input.text, file: "config")
                for key in config.entries.keys where !ConfigFile.keys.contains(key) { return "key \(key) accepted" }
                return nil
            } catch {
                return error.code == .usage ? nil : "error code \(error.code), not usage"
            }
        }),
        Target(name: "MPEG heads, whole streams and length estimates", corpus: { mpegCorpus }, run: { input in
            // The frame walker refuses or accepts; what it accepts stops being one stream with bytes appended.
            if MPEGStream.problem(in: input) == nil, MPEGStream.problem(in: input + [0x00, 0x01, 0x02, 0x03, 0x04]) == nil {
                return "a stream with 5 bytes appended is accepted"
            }
            if let problem = Self.frameIndexProblem(input) { return problem }
            let head = MPEGHead.parse(input)
            let whole = MPEGHead.parse(input, isWholeFile: true)
            guard head.id3v2Bytes >= 0, whole.trailerBytes.map({ $0 == 0 || $0 == 128 }) ?? false else { return "tags \(head)" }
            if let offset = head.frameOffset, offset < head.id3v2Bytes || offset + 4 > input.count { return "frame at \(offset)" }
            if let frame = head.frame, !(8000...48000).contains(frame.sampleRate) || frame.bytes < 4 { return "frame \(frame)" }
            for size in [0, 1, input.count, input.count * 7 + 3, 1 << 40, Int.max] {
                if let estimate = LengthEstimate.samples(fileBytes: size, head: head, reference: whole),
                    estimate.samples < 0 || !(8000...48000).contains(estimate.rate)
                {
                    return "estimate \(estimate) for \(size) bytes"
                }
            }
            return nil
        }),
        Target(name: "control socket requests", corpus: { controlRequestCorpus }, run: { input in
            // What a client sends, as the server reads it: the protocol's line, then the typed request. Whatever
            // happens, the reply the server would send is one line of JSON that a client decodes to the same code.
            let reply: String
            do throws(ControlProtocol.RequestError) {
                let request = try ControlProtocol.request(input.text)
                do throws(TartilError) {
                    _ = try ControlRequest.parse(words: request.words)
                    reply = ControlProtocol.reply(id: request.id, code: 0, data: nil, error: nil, result: nil)
                } catch {
                    guard error.code == .usage else { return "error code \(error.code), not usage" }
                    reply = ControlProtocol.reply(id: request.id, code: 64, data: nil, error: error.message, result: nil)
                }
            } catch {
                reply = ControlProtocol.reply(id: error.id, code: 64, data: nil, error: error.message, result: nil)
            }
            return Self.problem(inReply: reply)
        }),
        Target(name: "control socket replies and status output", corpus: { controlReplyCorpus }, run: { input in
            // What a client reads (a hostile or broken server included); a reply it accepts, Foundation's
            // JSONDecoder reads the same (the reader over JSONNode is never more lenient than the Decodable
            // conformances it replaced); a result it accepts renders as the status JSON and a reply again, and that
            // decodes to the same result.
            guard let reply = ControlProtocol.reply(input.text) else { return nil }
            if let problem = Self.differsFromJSONDecoder(reply, input) { return problem }
            guard let result = reply.result else { return nil }
            let again = ControlProtocol.reply(
                id: .null, code: reply.exitCode, data: SessionJSON.data(result), error: reply.error, result: result)
            if let problem = Self.problem(inReply: again) { return problem }
            guard let decoded = ControlProtocol.reply(again), decoded.exitCode == reply.exitCode, decoded.result != nil else {
                return "a rendered reply does not decode again: \(again.prefix(200))"
            }
            return nil
        }),
        Target(name: "HTTP header lines", cost: 3, corpus: { headerCorpus }, run: { input in
            // What libcurl hands the header callback, as Transfer and Probe read it: numbers bounded, ranges sane.
            let line = input.withUnsafeBytes { HTTPHeaderLine.parse($0) }
            guard line == HTTPHeaderLine.parse(input) else { return "the raw buffer and the array read differently" }
            switch line {
            case .status(let code?, _): return (100...999).contains(code) ? nil : "status \(code)"
            case .contentLength(let length?): return (0...HTTPHeaderLine.largestSize).contains(length) ? nil : "length \(length)"
            case .contentRange(let range?):
                let sizes = [range.first, range.last, range.total].compactMap { $0 }
                guard sizes.allSatisfy({ (0...HTTPHeaderLine.largestSize).contains($0) }), (range.first == nil) == (range.last == nil),
                    range.first.map({ $0 <= range.last! }) ?? (range.total != nil),
                    range.last.map({ last in range.total.map { last < $0 } ?? true }) ?? true
                else { return "range \(range)" }
                return nil
            default: return nil
            }
        }),
        Target(name: "mirrors.json numbers", cost: 3, corpus: { mirrorNumberCorpus }, run: { input in
            // Numbers of every size in every numeric field (max_speed: 1e308 once trapped): a message or a sane value.
            do throws(TartilError) {
                let list = try MirrorList.parse(bytes: input, file: "m.json")
                for reciter in list.reciters {
                    if let speed = reciter.maximumSpeed, !(1...PlaybackSpeed.range.upperBound).contains(speed) { return "max_speed \(speed)" }
                    if let bitrate = reciter.bitrateKbps, !(8...320).contains(bitrate) { return "bitrate \(bitrate)" }
                }
            } catch {
                if error.code != .invalidData { return "error code \(error.code), not invalid-data" }
            }
            // Every number of the document, as any field would read it.
            guard let root = try? JSONNode.parse(input) else { return nil }
            var pending = [root]
            while let node = pending.popLast() {
                switch node {
                case .array(let items): pending += items
                case .object(let members): pending += members.values
                case .number(let value):
                    guard value.isFinite else { return "a number that is not finite: \(value)" }
                    if let whole = node.integer, abs(whole) > JSONNode.largestInteger { return "integer \(whole)" }
                    if let speed = try? PlaybackSpeed.checked(value, for: "max_speed"), !PlaybackSpeed.range.contains(speed) { return "speed \(speed)" }
                    _ = PlaybackSpeed.text(value) + NumberText.format(value)
                default: break
                }
            }
            return nil
        }),
        Target(name: "notes", cost: 3, corpus: { noteCorpus }, run: { input in
            // A note as `bookmark --note` takes it, at the prompt and on the control socket: refused with a usage
            // error, or kept within the rules (at most 4096 bytes, no control characters).
            for words in [["bookmark", "2:255", "--note", input.text], ["bookmark", "--note=" + input.text]] {
                do throws(TartilError) {
                    guard case .bookmark(let request) = try ControlRequest.parse(words: words) else { return "not a bookmark" }
                    if let note = request.note, let problem = Self.noteProblem(note) { return "note kept: \(problem)" }
                } catch {
                    if error.code != .usage { return "error code \(error.code), not usage" }
                }
            }
            return nil
        }),
        Target(name: "sync-folder files", cost: 60, corpus: { syncFileCorpus }, run: { input in
            // Another device's journal file in the sync folder, damaged or hostile: `journal sync` merges it or skips
            // it with a reason, never fails, and nothing invalid reaches this device's journal.
            Self.syncFolderProblem(input)
        }),
        Target(name: "surah names and file names", corpus: { referenceCorpus }, run: { input in
            _ = SurahNames.match(input.text)
            if let ayah = AyahRef(fileName: input.text), !(1...Catalog.totalAyat).contains(ayah.global) { return "file name \(ayah)" }
            return nil
        }),
    ]

    @Test(arguments: targets)
    func noInputTrapsHangsOrMisreports(target: Target) {
        let count = max(100 / target.cost, FuzzBudget.inputs / Self.targets.count / target.cost)
        var mutator = Mutator(seed: FuzzBudget.seed &+ UInt64(target.name.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xFFFF))
        let corpus = target.corpus()
        var slowest = 0.0
        for index in 0..<count {
            let input: [UInt8]
            switch index % 10 {
            case 0: input = mutator.noise(maxLength: 64)
            case 1 where index % 1000 == 1: input = mutator.mutate(mutator.pick(corpus), corpus: corpus) + Array(repeating: UInt8(ascii: "9"), count: 60_000)
            default: input = mutator.mutate(mutator.pick(corpus), corpus: corpus)
            }
            let start = DispatchTime.now().uptimeNanoseconds
            let problem = target.run(input)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            slowest = max(slowest, seconds)
            let shown = input.count > 200 ? Array(input.prefix(200)).text.debugDescription + "… (\(input.count) bytes)" : input.text.debugDescription
            if let problem {
                Issue.record("\(target.name): input #\(index) (seed \(FuzzBudget.seed)): \(shown): \(problem)")
                return
            }
            if seconds > target.deadline {
                Issue.record("\(target.name): input #\(index) (seed \(FuzzBudget.seed)) took \(seconds) s: \(shown)")
                return
            }
        }
    }

    /// The corpora were parsed: every seed input of the valid kind is accepted (so the mutations start from real
    /// inputs, not from text the parser refuses at its first byte).
    @Test func seedInputsAreValid() throws {
        #expect(throws: Never.self) { try MirrorList.parse(bytes: Self.mirrorsCorpus[0], file: "mirrors.json") }
        #expect(throws: Never.self) { try ReciterTable.parse(bytes: Self.tableCorpus[0], file: "t.tsv") }
        #expect(throws: Never.self) { try SurahTable.parse(bytes: Self.surahTableCorpus[0], file: "s.tsv") }
        #expect(throws: Never.self) { try SurahTimings.parse(Self.timingsCorpus[0], format: .quranstatic, surah: 112, file: "t.json") }
        #expect(throws: Never.self) { try SurahTimings.parse(Self.timingsCorpus[1], format: .mp3quran, surah: 112, file: "t.json") }
        #expect(throws: Never.self) { try SurahTimings.parse(Self.timingsCorpus[2], format: .quranstatic, surah: 1, file: "t.json") }
        #expect(throws: Never.self) { try ReciterTable.parse(bytes: Self.wholeTableCorpus[0], file: "ibrahim-alakhdar.tsv") }
        // The replies: read where JSONDecoder reads them (the first is a status of a build before PlanItem's `files`,
        // which neither reads), with their results.
        for line in Self.controlReplyCorpus.map(\.text) {
            let decoded = try? JSONDecoder().decode(DecodedReply.self, from: Data(line.utf8))
            let reply = ControlProtocol.reply(line)
            #expect((reply != nil) == (decoded != nil) && (reply?.result != nil) == (decoded?.result != nil), "\(line.prefix(120))")
        }
        #expect(Self.controlReplyCorpus.compactMap { ControlProtocol.reply($0.text)?.result }.count == 4)
        for duration in Self.durationCorpus {
            #expect(DurationText.seconds(duration.text) != .notANumber, "\(duration.text)")
        }
        for reference in ["36", "2:255", "2:255-260", "2:284-3:5", "juz 30", "page 1-3", "#262", "yasin"] {
            #expect(throws: Never.self) { try ReferenceParser.parse(reference.split(separator: " ").map(String.init)) }
        }
    }

    // MARK: - Corpora

    /// What is wrong with a note a bookmark kept, or nil (the README: at most 4096 bytes, no control characters).
    /// The frame walk gives the same answer from an array and from memory the caller holds (a mapped file), and an
    /// index it makes finds every frame from its checkpoints: frames back to back, each as long as its header says,
    /// from the first audio frame to the stream's end.
    static func frameIndexProblem(_ input: [UInt8]) -> String? {
        let problem = MPEGStream.problem(in: input)
        let (mappedProblem, mappedIndex) = input.withUnsafeBytes { buffer in
            (MPEGStream.problem(in: buffer), try? MPEGStream.frameIndex(of: buffer).get())
        }
        guard mappedProblem == problem else { return "in memory: \(String(describing: mappedProblem)), from an array: \(String(describing: problem))" }
        guard let index = try? MPEGStream.frameIndex(of: input).get() else { return nil }
        guard problem == nil, mappedIndex == index, index.count > 0, index.end <= input.count else { return "index \(index) of a stream refused" }
        var offset = index.offset(of: 0, in: input) ?? -1
        for frame in 0..<index.count {
            guard let range = index.byteRange(frames: frame...frame, in: input), range.lowerBound == offset, range.upperBound < index.end,
                MPEGHead.Frame(input[offset], input[offset + 1], input[offset + 2], input[offset + 3])?.bytes == range.count
            else { return "frame \(frame) of \(index.count) is not at \(offset)" }
            offset = range.upperBound + 1
        }
        guard offset == index.end, index.offset(of: index.count + 1, in: input) == nil else { return "the frames end at \(offset), not \(index.end)" }
        return nil
    }

    static func noteProblem(_ note: String) -> String? {
        if note.utf8.count > 4096 { return "\(note.utf8.count) bytes" }
        if let control = note.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "control character U+\(String(control.value, radix: 16))" }
        return nil
    }

    /// A journal and its sync folder, kept for every input of the sync-folder target (a journal made and a
    /// snapshot written per input cost 100 ms of fsyncs each): an input that merges nothing writes nothing, and
    /// what one merges must leave the journal valid for all the rest. Removed when the test process exits.
    final class SyncWorld: @unchecked Sendable {
        // @unchecked: used by the sync-folder target alone, whose inputs run one after another.
        let home = TestPaths.makeTemporaryDirectory()
        var folder: String { home + "/sync" }
        let journal: Journal

        init() {
            try? FileManager.default.createDirectory(atPath: home + "/sync", withIntermediateDirectories: true)
            do throws(JournalError) { journal = try Journal(path: home + "/journal.sqlite") } catch {
                fatalError("cannot make the sync-folder target's journal: \(error.message)")
            }
            atexit { try? FileManager.default.removeItem(atPath: ParserFuzzTests.syncWorld.home) }
        }
    }

    static let syncWorld = SyncWorld()

    /// Runs `journal sync` on the folder with `input` as another device's journal file.
    static func syncFolderProblem(_ input: [UInt8]) -> String? {
        let world = syncWorld
        let name = world.folder + "/" + SyncFolder.fileName(deviceID: syncSource.deviceID)
        unlink(name)
        guard FileManager.default.createFile(atPath: name, contents: Data(input)) else { return "cannot write the input" }
        do throws(JournalError) {
            let report = try world.journal.sync(folder: world.folder)
            guard report.merged.count + report.skipped.count == 1 else { return "the file was neither merged nor skipped: \(report)" }
            let problems = try world.journal.problems()
            if !problems.isEmpty { return "merged events that cannot be true: \(problems.prefix(3))" }
            for bookmark in try world.journal.bookmarks() {
                if let note = bookmark.note, let problem = noteProblem(note) { return "a merged note: \(problem)" }
            }
            return nil
        } catch {
            return "journal sync failed (\(error.code)): \(error.message)"
        }
    }

    /// A real journal with positions, sessions and bookmarks with notes, as another device's snapshot.
    static let syncSource: (deviceID: String, snapshot: [UInt8]) = {
        let home = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        do throws(JournalError) {
            let journal = try Journal(path: home + "/source.sqlite")
            defer { journal.close() }
            for ayah in 1...5 {
                _ = try journal.append(.position(reciter: "fixture", surah: 36, ayah: ayah, offsetSamples: ayah * 1000, sampleRate: 22050, reason: .pause))
            }
            let bookmark = try journal.append(EventDraft(kind: .bookmark, reciter: "fixture", surah: 2, ayah: 255, note: "آية الكرسي — Ayat al-Kursi"))
            _ = try journal.append(EventDraft(kind: .bookmark, surah: 112, ayah: 1, note: "a \"quoted\", note"))
            _ = try journal.editBookmarkNote(id: bookmark.eventID, note: "edited 😀")
            try? FileManager.default.createDirectory(atPath: home + "/sync", withIntermediateDirectories: true)
            _ = try journal.sync(folder: home + "/sync")
            let bytes = FileManager.default.contents(atPath: home + "/sync/" + SyncFolder.fileName(deviceID: journal.deviceID))
            return (journal.deviceID, bytes.map { Array($0) } ?? [])
        } catch {
            fatalError("cannot make the sync-folder corpus: \(error.message)")
        }
    }()

    /// The source journal's snapshot, and the same cut short and with a page's worth of noise at its end.
    static let syncFileCorpus: [[UInt8]] = {
        let snapshot = syncSource.snapshot
        return [snapshot, Array(snapshot.prefix(snapshot.count / 2)), Array(snapshot.prefix(4096)) + Array(repeating: 0, count: 4096)]
    }()

    static let headerCorpus: [[UInt8]] = [
        "HTTP/1.1 200 OK\r\n", "HTTP/1.1 206 Partial Content\r\n", "HTTP/2 200\r\n", "HTTP/2 302 \r\n", "HTTP/1.0 503 Service Unavailable\r\n",
        "Content-Range: bytes 0-1023/5000\r\n", "content-range: bytes 4984-5000/5001\r\n", "Content-Range: bytes */5000\r\n",
        "CONTENT-RANGE: bytes 0-1023/*\r\n", "Content-Length: 5000\r\n", "content-length:0\r\n", "Retry-After: 1\r\n",
        "Location: https://h/x.mp3\r\n", "\r\n", "HTTP/1.1 200000000000000000000000000000 OK\r\n",
        "Content-Range: bytes 99999999999999999999-99999999999999999999/99999999999999999999\r\n",
    ].map { Array($0.utf8) }

    static let mirrorNumberCorpus: [[UInt8]] = [
        #"{"version": 1, "reciters": [{"id": "a", "name": "A", "style": "murattal", "bitrate_kbps": 64, "max_speed": 1.25, "mirrors": [{"name": "m", "url": "http://h/{global}.mp3"}]}]}"#,
        #"{"version": 1.0, "reciters": [{"id": "a", "name": "A", "style": "mujawwad", "bitrate_kbps": 6.4e1, "max_speed": 2, "mirrors": [{"name": "m", "url": "http://h/{global}.mp3"}]}]}"#,
        #"{"version": 1e0, "reciters": [{"id": "a", "name": "A", "style": "muallim", "bitrate_kbps": 320, "max_speed": 1e308, "mirrors": [{"name": "m", "url": "http://h/{global}.mp3"}]}]}"#,
        #"{"version": 1, "reciters": [{"id": "a", "name": "A", "style": "murattal", "bitrate_kbps": -0, "max_speed": 1.0000001, "mirrors": [{"name": "m", "url": "http://h/{global}.mp3"}]}]}"#,
        #"[1e308, -1e308, 5e-324, 9007199254740993, -9223372036854775809, 18446744073709551616, 0.1e-400, 1E+2, -0.0]"#,
    ].map { Array($0.utf8) }

    static let hifzPlanCorpus: [[UInt8]] = {
        var plan = HifzPlan()
        try? plan.set("direction", to: "67, 78-114")
        try? plan.set("memorised", to: "juz 30, 1")
        try? plan.set("sabaq-options", to: "stepped=window=3 repeat=3 pause=1.5x")
        return [
            HifzPlan().encoded, plan.encoded, #"{"v":1}"#, #"{"v":1,"daily":"0.5 pages","sabqi":"2 juz","day-start":"04:30"}"#,
            #"{"v":2,"daily":"5"}"#, ##"{"v":1,"direction":"#262-#300"}"##, "5 ayat", "7 lines", "0.25p", "2.5x", "off", "23:59",
            "repeat=99 repeat-range=2 cycle-pause=1:30 basmala=off", "juz 30, page 1-3, hizb 2", "an-nas",
        ].map { Array($0.utf8) }
    }()

    static let hifzHeardCorpus: [[UInt8]] = [
        HifzHeardNote(day: HifzDay(number: 20_790), part: .sabaq, ayat: [1, 2, 3, 6236]).encoded,
        #"{"v":1,"day":"2026-02-28","part":"manzil","heard":"2:255-3:5, 112-114"}"#, #"{"v":1,"day":"2026-02-29","part":"sabqi","heard":""}"#,
        #"{"v":1,"day":"9999-12-31","part":"sabqi","heard":"juz 30"}"#,
    ].map { Array($0.utf8) }

    static let noteCorpus: [[UInt8]] = [
        "Ayat al-Kursi", "آية الكرسي", "a \"quoted\" note, with commas", "=1+1", "+44", "-x", "@sum", "😀 ١٢", "",
        "tab\there", "bell\u{7}", "del\u{7F}", "c1\u{85}next line", "\u{202E}reversed\u{202C}", "\u{2066}isolate\u{2069}", "zero\u{200B}width",
        String(repeating: "ن", count: 2048), String(repeating: "a", count: 4097),
    ].map { Array($0.utf8) }

    /// A reply line is one line of JSON with an integer `exit_code`, which a client decodes to that code.
    static func problem(inReply reply: String) -> String? {
        guard reply.hasSuffix("\n"), !reply.dropLast().contains("\n") else { return "a reply that is not one line" }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            return "a reply that is not a JSON object: \(reply.prefix(200))"
        }
        guard let code = object["exit_code"] as? Int else { return "a reply without exit_code" }
        guard ControlProtocol.reply(reply).map({ Int($0.exitCode) == code }) ?? false else { return "a reply that does not decode" }
        return nil
    }

    /// The reply as `ControlProtocol.reply` read it before it read with `JSONNode`: Foundation's `JSONDecoder`
    /// over the result's synthesized `Decodable` conformances.
    struct DecodedReply: Decodable {
        let exitCode: Int32
        let error: String?
        let result: ControlResult?

        enum CodingKeys: String, CodingKey {
            case exitCode = "exit_code"
            case error, result
        }
    }

    /// What differs between `reply` and `JSONDecoder`'s reading of the same input, or nil. A clock's nanoseconds
    /// above 2^53 are compared as the nearest Doubles (see `JSONNode.uint64(_:)`).
    static func differsFromJSONDecoder(_ reply: ControlProtocol.Reply, _ input: [UInt8]) -> String? {
        guard let decoded = try? JSONDecoder().decode(DecodedReply.self, from: Data(input.text.utf8)) else {
            return "read a reply JSONDecoder refuses"
        }
        func rounded(_ result: ControlResult?) -> ControlResult? {
            func round(_ status: PlayerStatus) -> PlayerStatus {
                var status = status
                if let motion = status.motion {
                    let nanoseconds = Double(motion.since.nanoseconds)
                    let since = nanoseconds >= 18_446_744_073_709_551_616.0 ? UInt64.max : UInt64(nanoseconds)
                    status.motion = PlayerStatus.Motion(since: ClockInstant(nanoseconds: since), limitSamples: motion.limitSamples)
                }
                return status
            }
            switch result {
            case .status(let status)?: return .status(round(status))
            case .started(let started)?: return .started(PlayStarted(status: round(started.status), resumed: started.resumed, notes: started.notes))
            default: return result
            }
        }
        guard decoded.exitCode == reply.exitCode, decoded.error == reply.error, rounded(decoded.result) == rounded(reply.result) else {
            return "read otherwise than JSONDecoder: \(reply.exitCode) \(reply.error ?? "-") \(String(describing: reply.result).prefix(300)) against \(decoded.exitCode) \(decoded.error ?? "-") \(String(describing: decoded.result).prefix(300))"
        }
        return nil
    }

    static let controlRequestCorpus: [[UInt8]] = [
        "status", "status --json", "seek 1:00", "seek +5", "pause", "play 36:1-5 --repeat 3 --pause 1x", "set repeat inf",
        "loop 0:05 0:10 3", "sleep 20m", "stop-after 5 ayat", "volume +10", "speed 1.25", "bookmark 2:255 --note 'a \"note\"'",
        "watch --follow", "wait", "play 112 --reciter fixture --from 0:02", "quit", "",
        #"{"command": "seek 1:00", "request_id": 7}"#, #"{"command": ["play", "112", "--repeat", "inf"], "request_id": "a"}"#,
        #"{"command": ["status"], "request_id": null}"#, #"{"command": "status", "request_id": {"nested": [1, 2.5, true]}}"#,
        #"{"command": ["bookmark", "--note", "\u00e9\ud83d\ude00"], "request_id": -1e308}"#,
    ].map { Array($0.utf8) }

    static let controlReplyCorpus: [[UInt8]] = [
        #"{"request_id":7,"exit_code":0,"data":{"state":"playing","reciter":"fixture","surah":112,"ayah":1,"item":{"index":0,"surah":112,"ayah":1,"kind":"basmala","repetition":1,"cycle":1,"review_for":null},"items":5,"position_ms":1000,"position_samples":22050,"duration_ms":7931,"duration_samples":316926,"sample_rate":22050,"estimated":false,"speed":1.0,"volume":100,"buffering":null,"skipped":[],"options":"","cycle":1,"loop":null,"stop_after":null,"sleep_left_ms":null},"result":{"status":{"_0":{"totalSamples":316926,"durationSamples":316926,"maximumSpeed":2,"options":{"cyclePauseSeconds":0,"basmala":"auto","repeatEach":{"times":{"_0":1}},"repeatRange":{"times":{"_0":1}},"pause":{"seconds":{"_0":0}}},"cycle":1,"isEstimated":false,"durationSeconds":7.931020408163265,"positionSeconds":1,"positionSamples":22050,"ayahStarts":[0,3.1314285714285717,4.6997732426303855,6.317641723356009],"state":"playing","item":{"ayah":[112,1],"repetition":1,"group":1,"cycle":1,"kind":{"basmala":{}}},"sampleRate":22050,"writtenFrames":30720,"volume":100,"hasNext":true,"index":0,"skipped":[],"surah":112,"speed":1,"reciter":"fixture","itemCount":5,"writtenSeconds":1.3931972789115645,"motion":{"since":{"nanoseconds":5796420586503},"limitSamples":22050}}}}}"#,
        #"{"request_id":null,"exit_code":0,"data":{"event_id":"a96dd0c2-c450-448f-8ab2-873b88c87fbc","surah":112,"ayah":1,"reciter":"fixture","note":"x","ts_ms":1796179201660,"device_id":"2d947d31-11e6-4e97-9c8b-8e6887542b03"},"result":{"bookmark":{"_0":{"eventID":"a96dd0c2-c450-448f-8ab2-873b88c87fbc","surah":112,"ayah":1,"note":"x","timeMs":1796179201660,"reciter":"fixture","deviceID":"2d947d31-11e6-4e97-9c8b-8e6887542b03"}}}}"#,
        #"{"request_id":null,"exit_code":3,"data":{"state":"stopped"},"result":"stopped"}"#,
        #"{"request_id":null,"exit_code":3,"data":{"state":"stopped"},"result":{"stopped":{}}}"#,
        // A play that resumed, with every optional part of a status set (the forms of each enum's other cases).
        #"{"request_id":2,"exit_code":0,"result":{"started":{"_0":{"notes":["single-source: 112:2"],"resumed":{"reciter":"fixture","ayah":[112,2],"offsetSamples":22050,"offsetMs":1000,"reason":"pause","recordedMs":1796179201660,"after":[112,1]},"status":{"state":"buffering","reciter":"fixture","index":7,"item":{"kind":{"pause":{"_0":{"multiple":{"_0":1.5}}}},"ayah":[112,2],"repetition":2,"group":3,"cycle":2,"reviewOf":[112,1],"files":"surah"},"itemCount":20,"surah":112,"positionSeconds":2.5,"positionSamples":55125,"durationSeconds":7.9,"durationSamples":174195,"sampleRate":22050,"isEstimated":true,"ayahStarts":[0,3.13,4.7],"bufferingAyah":[112,3],"skipped":[[112,4],"every mirror failed"],"skippedBasmala":[[112,1],"1:1 failed"],"totalSamples":348390,"writtenFrames":60000,"writtenSeconds":2.72,"endMessage":"x\"y\/\u00e9","options":{"basmala":"off","repeatEach":{"forever":{}},"repeatRange":{"times":{"_0":2}},"pause":{"seconds":{"_0":0.5}},"cyclePauseSeconds":5,"stepped":{"window":3}},"cycle":2,"loop":{"startSeconds":1,"endSeconds":3.5,"passesLeft":2},"loopMarkSeconds":0.25,"stopAfter":{"seconds":{"_0":1200}},"sleepSecondsLeft":1199.5,"speed":1.25,"volume":80,"maximumSpeed":1.5,"hasNext":false,"motion":{"since":{"nanoseconds":9007199254740993},"limitSamples":61000}}}}}}"#,
        #"{"request_id":3,"exit_code":0,"result":{"status":{"_0":{"state":"paused","reciter":"fixture","index":0,"item":{"kind":{"cyclePause":{"seconds":5}},"ayah":[1,7],"repetition":1,"group":7,"cycle":1,"files":"ayah"},"itemCount":8,"surah":1,"positionSeconds":0,"positionSamples":0,"durationSeconds":0,"durationSamples":0,"sampleRate":44100,"isEstimated":false,"ayahStarts":[],"skipped":[],"totalSamples":0,"writtenFrames":0,"writtenSeconds":0,"options":{"basmala":"auto","repeatEach":{"times":{"_0":1}},"repeatRange":{"times":{"_0":1}},"pause":{"seconds":{"_0":0}},"cyclePauseSeconds":0,"stepped":{}},"cycle":1,"stopAfter":{"ayat":{"_0":5}},"speed":1,"volume":100,"maximumSpeed":2,"hasNext":true}}}}"#,
        #"{"request_id":1,"exit_code":64,"error":"seek: 1:39:00 is past the end"}"#,
    ].map { Array($0.utf8) }

    static let referenceCorpus: [[UInt8]] = [
        "36", "2:255", "2:255-260", "2:284-3:5", "juz 30", "juz 1-2", "page 1-3", "hizb 60", "#262", "#1-#7", "yasin",
        "al-mulk:1-5", "the cow:255", "78-114", "1,2,3", "para 30", "1:1-1:7", "114:6", "Aal-i-Imraan", "ar-rahman",
    ].map { Array($0.utf8) }

    static let syncNameCorpus: [[UInt8]] = [
        "3f2a9c1e-28f3-49f7-b007-da4e6477c012.tartil-journal", "own-device.tartil-journal", ".syncthing.a.tartil-journal.tmp",
        "~syncthing~a.tartil-journal.tmp", "a.sync-conflict-20261201-000000-ABCDEFG.tartil-journal",
        "a (Someone's conflicted copy 2026-12-01).tartil-journal", "a (conflicted copy 2026-12-01 001122).tartil-journal",
        ".a.tartil-journal.~1a2b", "a.tartil-journal.1a2b3c4d.partial", "a.tartil-journal.conflict1", "a.tartil-journal..path1",
        "~$a.tartil-journal", "a.tartil-journal.tmp-1a2b3c4d", "a.tartil-journal-wal", "a.tartil-journal.part", "notes.txt",
        "a.b.tartil-journal", ".tartil-journal", "tartil-journal",
    ].map { Array($0.utf8) }

    static let seekCorpus: [[UInt8]] = [
        "3:20", "1:02:03", "95", "95.5s", "+30", "-10", "+1:30", "-1:00", "45%", "100%", "2:255", "ayah 3:20",
        "yasin:12", "0", "0:00", "100:00:00",
    ].map { Array($0.utf8) }

    static let configCorpus: [[UInt8]] = [
        "# tartil\nreciter=ibrahim-alakhdar\noutput=silent\n", "speed=1.25\nvolume=80\r\nbasmala=off\n", "mpris=no\n\n--device=hw:0\n",
        "cache-dir = /tmp/c\njournal=/tmp/j.sqlite\nsocket=/tmp/s\n", "mirrors=/m.json\ntables=/t\n",
    ].map { Array($0.utf8) }

    static let controlsCorpus: [[UInt8]] = [
        "3", "inf", "99", "1.5x", "2.25x", "0.5s", "window=3", "off", "20m", "1h30m", "1:30:00", "5 ayat", "surah", "juz",
        "36:12+3.5-36:12+9", "1:05 1:12 5", "ayah 2:255 ayah 2:256 inf", "112:2+0.5 112:3", "0:01-0:03", "repeat inf",
        "pause 1x", "stepped window=2", "cycle-pause 5s", "repeat-range 3",
    ].map { Array($0.utf8) }

    static let numberCorpus: [[UInt8]] = [
        "8", "500M", "2G", "1.5G", "800K", "1024T", "1KiB", "2026-11-29", "2026-11-29T08:00", "2026-11-29T08:00:05Z",
        "2026-11-29 08:00", "7d", "12h", "30m", "0.3333", "60",
    ].map { Array($0.utf8) }

    static let durationCorpus: [[UInt8]] = [
        "1.5", "1.5s", "90s", "1:30", "2m", "1h", "500ms", "1h30m", "1m30.5s", "1:02:03", "1:30.5", "2min", "0", ".5",
        "100:00:00", "360000", "45",
    ].map { Array($0.utf8) }

    static let levelCorpus: [[UInt8]] = [
        "1", "1.25", "0.5", "2", "1.5x", ".95", "80", "+5", "-5", "150", "100%", "0",
    ].map { Array($0.utf8) }

    static let lineCorpus: [[UInt8]] = [
        "play 36 --speed 1.25 --volume 120; speed 0.9; volume -5; status --json",
        "play 36 --reciter ibrahim-alakhdar --repeat 3 --pause 2; wait", "seek 1:00; status --json",
        "prefetch 'juz 30' --jobs 8 --retries 3 --max-size 2G", "history --since 7d", "bookmark 2:255 --note \"a note\"",
        "journal export --since 2026-11-01 --format csv", "cache verify --repair # comment", "render 112 -o x.wav --from 45%",
        "resolve 36:1-5 --reciter=ibrahim-alakhdar", "table build dir --reciter x -o out.tsv", "positions --surah 36 --csv",
        "play 1 --from 1:00 --basmala off --output wav:/tmp/x.wav --device null --events",
        "play 78:1-11 --stepped window=3 --pause 1x --repeat-range inf --cycle-pause 5 --stop-after 20m",
        "play 36 --loop 36:12+3.5-36:12+9 --repeat inf; set repeat 3; loop off; sleep 20m; stop-after 5 ayat",
        "prefetch 1 -j4 --connect-timeout=2.5s --stall-timeout 1m; render 36 -o/tmp/a.wav --to=b.wav -- 37",
        "play 36 --pause 500ms --cycle-pause 1:30; seek -2m; positions --surah=yasin",
    ].map { Array($0.utf8) }

    /// The first 1 KiB of each fixture and of one file per real reciter (ID3v2, Info/LAME, tagless, ID3v1), and the
    /// two fixtures whole (whole streams of more than 64 frames, for the frame index).
    static let mpegCorpus: [[UInt8]] = {
        var paths = [TestPaths.fixtures + "/fixture/001001.mp3", TestPaths.fixtures + "/fixture/112001.mp3"]
        if let real = TestPaths.sharedReal {
            for reciter in ["ibrahim-alakhdar", "ahmed-allhdan", "minshawi-mujawwad", "ali-alhudhaifi"] {
                paths.append(real + "/audio/\(reciter)/001001.mp3")
            }
        }
        let files = paths.compactMap { try? Data(contentsOf: URL(fileURLWithPath: $0)) }.map { Array($0) }
        return files.map { Array($0.prefix(1024)) } + files.prefix(1).map { Array($0.suffix(1024)) } + [[0xFF, 0xFB, 0x90, 0x64]]
            + files.prefix(2)
    }()

    static let mirrorsCorpus: [[UInt8]] = {
        let committed = (try? Data(contentsOf: URL(fileURLWithPath: TestPaths.repository + "/mirrors.json"))).map { Array($0) } ?? []
        let small = #"""
            {"version": 1, "reciters": [{"id": "a", "name": "A", "style": "murattal", "bitrate_kbps": 64, "table": "a.tsv",
             "mirrors": [{"name": "m", "url": "http://127.0.0.1:8080/{surah3}{ayah3}.mp3"}, {"name": "n", "url": "https://h/{global}.mp3"}]},
             {"id": "s", "name": "S", "style": "murattal", "files": "surah", "timings": "https://t/s_{surah}.json", "timings_format": "quranstatic",
             "mirrors": [{"name": "m", "url": "https://h/{surah3}.mp3"}, {"name": "n", "url": "https://g/{surah}.mp3"}]}]}
            """#
        return [Array(small.utf8), committed]
    }()

    /// Timing files of both shapes: Quran Static's (real rows of ../shared/real/timings, the placeholder end
    /// included) and mp3quran's, for surah 112, and a Quran Static file of surah 1.
    static let timingsCorpus: [[UInt8]] = [
        Array(#"{"Type":"surah","Number":112,"TotalDurationMs":null,"Segments":[{"I":0,"S":112,"V":1,"StartMs":6531,"EndMs":9718,"DurationMs":3187},{"I":1,"S":112,"V":2,"StartMs":9718,"EndMs":12591,"DurationMs":2873},{"I":2,"S":112,"V":3,"StartMs":12591,"EndMs":16065,"DurationMs":3474},{"I":3,"S":112,"V":4,"StartMs":16065,"EndMs":196065,"DurationMs":null}]}"#.utf8),
        Array(#"[{"ayah":0,"start_time":0,"end_time":5216},{"ayah":1,"start_time":5216,"end_time":8456},{"ayah":2,"start_time":8456,"end_time":10952},{"ayah":3,"start_time":10952,"end_time":13928},{"ayah":4,"start_time":13928,"end_time":18029}]"#.utf8),
        Array(#"{"Number":1,"TotalDurationMs":51199,"Segments":[{"S":1,"V":1,"StartMs":4093,"EndMs":8421},{"S":1,"V":2,"StartMs":8421,"EndMs":14214},{"S":1,"V":3,"StartMs":14214,"EndMs":18237},{"S":1,"V":4,"StartMs":18237,"EndMs":22333},{"S":1,"V":5,"StartMs":22333,"EndMs":28558},{"S":1,"V":6,"StartMs":28558,"EndMs":33901},{"S":1,"V":7,"StartMs":33901,"EndMs":51199}]}"#.utf8),
    ]

    /// A reciter table's rows as `ReciterTable.parse` reads them: refused as invalid data, or every row sane; and
    /// read for some surahs (two, chosen by the input), refused as invalid data or every row sane and one of those
    /// surahs', and exactly the whole table's rows of them when the whole table reads.
    static func reciterTableProblem(_ input: [UInt8]) -> String? {
        func insane(_ table: ReciterTable) -> String? {
            for (ayah, file) in table.files where file.bytes <= 0 || file.samples <= 0 || !(1...Catalog.totalAyat).contains(ayah.global) {
                return "row \(ayah) accepted with \(file)"
            }
            return nil
        }
        var whole: ReciterTable?
        do throws(TartilError) {
            whole = try ReciterTable.parse(bytes: input, file: "t.tsv")
            if let problem = insane(whole!) { return problem }
        } catch {
            if error.code != .invalidData { return "error code \(error.code), not invalid-data" }
        }
        let surahs: Set<Int> = [1, input.count % Catalog.surahCount + 1]
        do throws(TartilError) {
            let some = try ReciterTable.parse(bytes: input, file: "t.tsv", surahs: Array(surahs))
            if let problem = insane(some) { return "read for surahs \(surahs.sorted()): " + problem }
            if let stray = some.files.first(where: { !surahs.contains($0.0.surah) }) { return "read for surahs \(surahs.sorted()): row \(stray.0) kept" }
            if let whole, Array(some.files.map(\.0)) != whole.files.map(\.0).filter({ surahs.contains($0.surah) }) {
                return "read for surahs \(surahs.sorted()): not the whole table's rows of them"
            }
            return nil
        } catch {
            if whole != nil { return "read for surahs \(surahs.sorted()): refused (\(error.message)) where the whole table reads" }
            return error.code == .invalidData ? nil : "error code \(error.code), not invalid-data"
        }
    }

    /// A surah table's rows as `SurahTable.parse` reads them: refused as invalid data, or every file's rows valid
    /// by the format's own rules (which the parser must have checked, not assumed).
    static func surahTableProblem(_ input: [UInt8]) -> String? {
        do throws(TartilError) {
            let table = try SurahTable.parse(bytes: input, file: "s.tsv")
            for file in table.files {
                if let problem = file.problem() { return "surah \(file.surah) accepted with: \(problem)" }
            }
            if Set(table.files.map(\.surah)).count != table.files.count { return "a surah accepted twice" }
            return nil
        } catch {
            return error.code == .invalidData ? nil : "error code \(error.code), not invalid-data"
        }
    }

    /// The committed surah table fixture (four surahs, one without a basmala).
    static let surahTableCorpus: [[UInt8]] = [
        Array((try? Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/surah-table.tsv"))) ?? Data())
    ]

    static let committedTable = (try? String(contentsOfFile: TestPaths.repository + "/reciter-tables/ibrahim-alakhdar.tsv", encoding: .utf8))

    /// The first 20 rows of a committed table under its header, and the same table cut to two rows (splice material).
    static let tableCorpus: [[UInt8]] = {
        let header = "# tartil-table: 1\n# reciter: ibrahim-alakhdar\n# source: test\n"
        let rows = (committedTable ?? header).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return [Array((header + rows.prefix(20).joined(separator: "\n") + "\n").utf8), Array((header + rows.prefix(2).joined(separator: "\n") + "\n").utf8)]
    }()

    /// The whole committed table, as shipped.
    static let wholeTableCorpus: [[UInt8]] = [Array((committedTable ?? "").utf8)]
}
