import Foundation
import TestSupport
import Testing

@testable import TartilCore

/// The journal's small text formats and checks, fed mutated input in-process: the repair list
/// (`repairs-pending.tsv`), notes (`JournalNote`) and the sync folder's names (`SyncFolder`, including the
/// names of files moved aside). No input may trap or hang; what is accepted must be sane. Budget: a share of
/// `TARTIL_FUZZ_BUDGET`; `TARTIL_FUZZ_SEED` replays.
@Suite struct JournalTextFuzzTests {
    static let repairCorpus: [[UInt8]] = [
        Array("fixture\t001001\nalafasy-128\t112004\n".utf8), Array("a\t036012\n".utf8), Array("x.y_z-1\t002255".utf8),
    ]
    static let noteCorpus: [[UInt8]] = [
        Array("Ayat al-Kursi".utf8), Array("آية الكرسي \u{200F}".utf8), Array("=HYPERLINK(\"x\")".utf8), Array("a\u{202E}b".utf8),
    ]
    static let nameCorpus: [[UInt8]] = [
        Array("3f2a9c1e-28f3-49f7-b007-da4e6477c012.tartil-journal".utf8),
        Array(SyncIdentity.asideName(deviceID: "9c1e", timeMs: 1_700_000_000_000).utf8),
        Array(".syncthing.9c1e.tartil-journal.tmp".utf8), Array("9c1e.tartil-journal.tmp-0a1b2c3d".utf8),
    ]

    @Test func noInputTrapsOrIsAcceptedWrongly() {
        var mutator = Mutator(seed: FuzzBudget.seed &+ 0x10A7)
        let count = max(300, FuzzBudget.inputs / 20)
        for index in 0..<count {
            let repair = index % 10 == 0 ? mutator.noise(maxLength: 64) : mutator.mutate(mutator.pick(Self.repairCorpus), corpus: Self.repairCorpus)
            let text = String(decoding: repair, as: UTF8.self)
            let entries = RepairList.parse(text)
            for entry in entries where (try? ReciterID(entry.reciter)) == nil || !(1...Catalog.totalAyat).contains(entry.ayah.global) {
                Issue.record("repair list (seed \(FuzzBudget.seed), #\(index)): accepted \(entry) from \(text.debugDescription)")
                return
            }
            // What is written parses back to the same entries.
            if Set(RepairList.parse(RepairList.render(entries))) != Set(entries) {
                Issue.record("repair list (seed \(FuzzBudget.seed), #\(index)): render does not parse back: \(text.debugDescription)")
                return
            }

            let note = String(decoding: mutator.mutate(mutator.pick(Self.noteCorpus), corpus: Self.noteCorpus), as: UTF8.self)
            let refused = note.unicodeScalars.contains(where: JournalNote.isRefused)
            if (JournalNote.problem(note) == nil) == refused || JournalNote.problem(JournalNote.cleaned(note)) != nil {
                Issue.record("note (seed \(FuzzBudget.seed), #\(index)): \(note.debugDescription) judged wrongly")
                return
            }

            let name = String(decoding: mutator.mutate(mutator.pick(Self.nameCorpus), corpus: Self.nameCorpus), as: UTF8.self)
            if case .merge(let device) = SyncFolder.decide(.init(name: name, kind: .regular, size: 4096), ownDeviceID: "9c1e"),
                !SyncFolder.isDeviceID(Substring(device)) || name != SyncFolder.fileName(deviceID: device)
            {
                Issue.record("sync folder (seed \(FuzzBudget.seed), #\(index)): would merge \(name.debugDescription) as \(device)")
                return
            }
        }
    }
}
