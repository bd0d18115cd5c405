/// Comparing again a surah a surah-file reciter learned from one mirror only (single-source) with the reciter's
/// other mirrors, by the rule the first learning went by: two mirrors serving the same whole file. The
/// comparison decides whom to ask and when it is settled; `SurahLearning.compareAgain` fetches and reports.
///
/// - A mirror whose URL for the surah is one the file came from (`servedBy`: the URLs its parts record) is the
///   same mirror, whatever its name now: it is never asked. Those URLs count as one mirror that served the file
///   (one mirror's word is what single-source means, however many URLs its parts name).
/// - The others are asked in order, each once for the whole file; one that serves another file is asked once
///   more (a copy damaged on its way is not another file). Asking stops as soon as two mirrors served the file.
/// - For a surah learned before the URL was recorded (`servedBy` empty), two mirrors of this comparison must serve
///   it.
///
/// ```swift
/// var comparison = LearnedComparison(urls: ["a/112.mp3", "b/112.mp3"], servedBy: ["a/112.mp3"], wanted: print)
/// comparison.start()                       // .ask(1)
/// comparison.answered(1, .file(print))     // .settled(.crossChecked(confirmedBy: [1], outvoted: []))
/// ```
public struct LearnedComparison: Sendable, Hashable {
    /// What a mirror answered: a whole file (its size and SHA-256), or none.
    public enum Answer: Sendable, Hashable {
        case file(FileFingerprint)
        case none
    }

    /// How the comparison ended.
    public enum Outcome: Sendable, Hashable {
        /// Two mirrors served the file learned: `confirmedBy` of this comparison (and the one it came from, when
        /// recorded); `outvoted` served another file.
        case crossChecked(confirmedBy: [Int], outvoted: [Int])
        /// Still single-source, and `others` served another file (twice): not taken.
        case anotherFile(others: [Int])
        /// Still single-source: no other mirror served a file (`failed` answered none); `served` served the file
        /// learned (only for a surah whose mirror was not recorded, where one is not enough).
        case unserved(failed: [Int], served: [Int])
    }

    public enum Action: Sendable, Hashable {
        /// Ask mirror `index` (of `urls`) for the whole file.
        case ask(Int)
        case settled(Outcome)
    }

    private let urls: [String]
    private let servedBy: Set<String>
    private let wanted: FileFingerprint
    private var next = 0
    private var agreeing: Int
    private var confirmedBy: [Int] = []
    private var others: [Int] = []
    private var failed: [Int] = []
    /// The mirror that served another file once, asked again now.
    private var askingAgain: Int?

    /// `urls`: each listed mirror's URL of the surah's file, in order; `servedBy`: the URLs the file came from;
    /// `wanted`: the file learned.
    public init(urls: [String], servedBy: Set<String>, wanted: FileFingerprint) {
        self.urls = urls
        self.servedBy = servedBy
        self.wanted = wanted
        agreeing = servedBy.isEmpty ? 0 : 1
    }

    /// The first step.
    public mutating func start() -> Action { step() }

    /// Mirror `mirror` answered `answer` to the last `.ask(mirror)`; the next step.
    public mutating func answered(_ mirror: Int, _ answer: Answer) -> Action {
        let again = askingAgain == mirror
        askingAgain = nil
        switch answer {
        case .file(let print) where print == wanted:
            agreeing += 1
            confirmedBy.append(mirror)
        case .file where !again:
            askingAgain = mirror
            return .ask(mirror)
        case .file:
            others.append(mirror)  // another file twice
        case .none:
            failed.append(mirror)  // none (at first, or after a damaged copy)
        }
        return step()
    }

    private mutating func step() -> Action {
        if agreeing >= 2 { return .settled(.crossChecked(confirmedBy: confirmedBy, outvoted: others)) }
        while next < urls.count {
            let index = next
            next += 1
            if !servedBy.contains(urls[index]) { return .ask(index) }
        }
        if !others.isEmpty { return .settled(.anotherFile(others: others)) }
        return .settled(.unserved(failed: failed, served: confirmedBy))
    }
}
