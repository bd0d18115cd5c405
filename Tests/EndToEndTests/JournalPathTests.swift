import Foundation
import TestSupport
import Testing

/// A user's path is a file name, never an SQLite URI: `--journal 'file:x.db'` is the file `file:x.db` in the
/// working directory (SQLite would otherwise read it as the URI of `x.db`), and `?` or `#` in a name are part of
/// it. Journal, merge source and backup destination alike.
@Suite struct JournalPathTests {
    func run(_ arguments: [String], in directory: String) throws -> BoundedRunResult {
        try runTartilBounded(arguments, home: directory, directory: directory, deadline: 30)
    }

    @Test(arguments: ["file:x.db", "x?mode=ro", "x#part.db", "file:x.db?mode=memory", "file:///x.db"])
    func aJournalNameThatLooksLikeAURIIsAFileName(name: String) throws {
        let directory = TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let added = try run(["bookmark", "1:1", "--journal", name], in: directory)
        #expect(added.status == 0, "\(name): \(String(decoding: added.stderr, as: UTF8.self))")
        let journal = directory + "/" + name
        // The journal is the file of that name (in a folder `file:` for `file:///x.db`, as the name says), and
        // nothing else was made or opened.
        let made = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        #expect(FileManager.default.fileExists(atPath: journal), "\(name): \(made)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/x.db"), "\(name): x.db was opened instead")
        let listed = try run(["bookmarks", "--json", "--journal", name], in: directory)
        #expect(String(decoding: listed.stdout, as: UTF8.self).contains("\"surah\":1"), "\(name)")

        // Merged from, and backed up to, under names like it.
        let other = directory + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        #expect(try run(["bookmark", "2:255", "--journal", "j.sqlite"], in: other).status == 0)
        let merged = try run(["journal", "merge", "../" + name, "--journal", "j.sqlite"], in: other)
        #expect(merged.status == 0, "\(name): \(String(decoding: merged.stderr, as: UTF8.self))")
        let copy = "file:copy?mode=ro#.db"
        let backup = try run(["journal", "backup", copy, "--journal", "j.sqlite"], in: other)
        #expect(backup.status == 0, "\(String(decoding: backup.stderr, as: UTF8.self))")
        #expect(FileManager.default.fileExists(atPath: other + "/" + copy))
        let fromCopy = try run(["bookmarks", "--json", "--journal", copy], in: other)
        let text = String(decoding: fromCopy.stdout, as: UTF8.self)
        #expect(text.contains("\"surah\":1") && text.contains("\"surah\":2"), "\(text)")
    }
}
