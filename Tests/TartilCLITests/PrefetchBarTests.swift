import TartilCore
import Testing

@testable import TartilCLI

/// The progress bar `prefetch` redraws on a terminal: at most width - 1 columns, whole fields only (the files
/// done kept longest), and a bar that shrinks.
@Suite struct PrefetchBarTests {
    static func progress(problem: String? = "HTTP 503 (again in 0.4 s)", failed: Bool = true) -> PrefetchProgress {
        var progress = PrefetchProgress(requested: 6236)
        progress.downloaded = 1200
        progress.alreadyCached = 34
        if failed { progress.failed = [.init(ayah: try! AyahRef(2, 255), reason: "HTTP 404"), .init(ayah: try! AyahRef(2, 256), reason: "HTTP 404")] }
        if let problem { progress.mirrorProblems = ["m1": problem] }
        return progress
    }

    /// `progress` with `bytes` received.
    static func with(_ progress: PrefetchProgress, bytes: Int) -> PrefetchProgress {
        var progress = progress
        progress.bytes = bytes
        return progress
    }

    static func fields(_ line: String) -> [String] { line.components(separatedBy: "  ").filter { !$0.isEmpty } }
    static func isBar(_ field: String) -> Bool {
        field.count >= 2 && field.first == "[" && field.last == "]"
            && field.dropFirst().dropLast().allSatisfy { $0 == "#" || $0 == "-" }
    }

    @Test(arguments: [200, 80, 60, 40, 30, 20, 12])
    func theBarFitsTheWidth(width: Int) {
        let progress = Self.progress()
        let all = Self.fields(PrefetchCommand.bar(Self.with(progress, bytes: 123_456_789), seconds: 60, width: 10_000))
        #expect(all.count == 7 && Self.isBar(all[0]) && all[0].count == 26, "\(all)")
        let line = PrefetchCommand.bar(Self.with(progress, bytes: 123_456_789), seconds: 60, width: width)
        #expect(TerminalText.columns(line) <= width - 1, "\(width): \(line)")
        let shown = Self.fields(line)
        var next = 0
        for field in shown {
            // In their order, each whole (the bar whatever its width).
            let found = all[next...].firstIndex { $0 == field || Self.isBar($0) && Self.isBar(field) }
            #expect(found != nil, "\(width): '\(field)' is not a whole field in order: \(line)")
            next = (found ?? next) + 1
        }
        if width > 15 { #expect(shown.contains("1236/6236 files"), "the files done are kept longest: \(line)") }
        if width >= 200 { #expect(shown == all) }
        if width == 80 { #expect(!line.contains("(m1:"), "the mirror's problem goes first: \(line)") }
        if width == 40 {
            #expect(shown.contains { Self.isBar($0) && $0.count < 26 }, "a shorter bar: \(line)")
            #expect(!line.contains("/s"), "no rate: \(line)")
        }
    }

    @Test func withoutFailuresTheWholeBarFitsIn80() {
        let line = PrefetchCommand.bar(Self.with(Self.progress(problem: nil, failed: false), bytes: 123_456_789), seconds: 60, width: 80)
        let shown = Self.fields(line)
        #expect(Self.isBar(shown[0]) && shown[0].count == 26, "\(line)")
        #expect(shown.count == 5, "bar, files, bytes, rate, ETA: \(line)")
    }

    /// Ctrl-C after the last file does not claim "0 files not fetched".
    @Test func anInterruptSaysWhatIsLeft() {
        #expect(PrefetchCommand.interruptedMessage(notFetched: 0) == "prefetch stopped after every file was fetched or found cached")
        #expect(PrefetchCommand.interruptedMessage(notFetched: 1) == "prefetch stopped; 1 file not fetched (run it again to resume)")
        #expect(PrefetchCommand.interruptedMessage(notFetched: 2512) == "prefetch stopped; 2512 files not fetched (run it again to resume)")
    }
}
