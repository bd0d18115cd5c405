import Testing

@testable import TartilCore

@Suite struct SpeedVolumeTests {
    @Test(arguments: [
        ("1", 1.0), ("1.25", 1.25), ("0.5", 0.5), ("2", 2.0), ("2.0", 2.0), (".9", 0.9), ("1.15", 1.15), ("1.5x", 1.5),
        ("0.95", 0.95),
    ])
    func speedsOnTheGridAreRead(text: String, expected: Double) throws {
        #expect(try PlaybackSpeed.parse(text, for: "--speed") == expected)
    }

    @Test(arguments: ["0.45", "2.05", "1.23", "", "x", "-1", "1e0", "nan", "inf", "1,5", "99999999999999999999", " 1"])
    func otherSpeedsAreUsageErrorsNamingTheRange(text: String) {
        #expect(throws: TartilError.usage("--speed takes a number from 0.5 to 2 in steps of 0.05, not '\(text)'")) {
            try PlaybackSpeed.parse(text, for: "--speed")
        }
    }

    @Test(arguments: [(1.0, 1, 1.05), (1.0, -1, 0.95), (1.95, 1, 2.0), (2.0, 1, 2.0), (0.5, -1, 0.5), (0.55, -1, 0.5)])
    func keysStepByOneTwentiethWithinTheRange(from: Double, steps: Int, to: Double) {
        #expect(PlaybackSpeed.stepped(from, by: steps) == to)
    }

    @Test func stepsNeverDrift() {
        var speed = 1.0
        for _ in 0..<40 { speed = PlaybackSpeed.stepped(speed, by: 1) }
        for _ in 0..<10 { speed = PlaybackSpeed.stepped(speed, by: -1) }
        #expect(speed == 1.5)
        #expect(PlaybackSpeed.text(speed) == "1.5" && PlaybackSpeed.text(1.05) == "1.05" && PlaybackSpeed.text(2) == "2")
    }

    @Test(arguments: [
        ("80", PlaybackVolume.Change.to(80)), ("0", .to(0)), ("150", .to(150)), ("+5", .by(5)), ("-5", .by(-5)), ("100%", .to(100)),
    ])
    func volumesAreRead(text: String, expected: PlaybackVolume.Change) throws {
        #expect(try PlaybackVolume.parse(text, for: "volume") == expected)
    }

    @Test(arguments: ["151", "-", "+", "abc", "", "1.5", "+151", "99999999999999999999", "--5"])
    func otherVolumesAreUsageErrors(text: String) {
        #expect(throws: TartilError.usage("volume takes a whole number from 0 to 150 (percent), or +N/-N to change it, not '\(text)'")) {
            try PlaybackVolume.parse(text, for: "volume")
        }
    }

    @Test func theOptionTakesNoRelativeLevel() {
        #expect(throws: TartilError.usage("--volume takes a whole number from 0 to 150 (percent), not '+5'")) {
            try PlaybackVolume.parse("+5", relative: false, for: "--volume")
        }
    }

    @Test(arguments: [(100, 5, 105), (148, 5, 150), (150, 5, 150), (3, -5, 0), (0, -5, 0), (50, Int.max, 150), (50, Int.min + 1, 0)])
    func relativeChangesStopAtTheEnds(from: Int, points: Int, to: Int) throws {
        #expect(try PlaybackVolume.Change.by(points).applied(to: from) == to)
    }

    @Test(arguments: [
        ([(1000, 1.0)], 400, 400), ([(1000, 2.0)], 400, 800), ([(1000, 2.0), (500, 1.0)], 800, 1100),
        ([(1000, 0.5), (10, 1.5)], 0, 0), ([(100, 1.25)], 500, 125),
    ])
    func theLedgerConvertsWhatTheDeviceHolds(writes: [(Int, Double)], unplayed: Int, recording: Int) {
        var ledger = SpeedLedger()
        for (frames, speed) in writes { ledger.wrote(frames, at: speed) }
        #expect(ledger.recordingFrames(unplayed: unplayed) == recording)
        #expect(ledger.recordingFrames(unplayed: unplayed) == recording)  // forgetting the heard runs changes nothing
    }

    @Test func theMachineKeepsSpeedAndVolumeAndRefusesBadOnes() throws {
        let plan = try PlaybackPlan(ayat: [try AyahRef(112, 1)], options: PlaybackOptions())
        var machine = PlaybackMachine(plan: plan, timeline: PlaybackMachine.timeline(for: plan, table: nil))
        _ = machine.start(at: nil)
        #expect(try machine.on(.setSpeed(1.25)) == [.setSpeed(1.25)])
        #expect(try machine.on(.setVolume(.by(60))) == [.setVolume(150)])
        #expect(try machine.on(.setVolume(.to(40))) == [.setVolume(40)])
        #expect(throws: TartilError.usage("speed takes a number from 0.5 to 2 in steps of 0.05, not '2.5'")) { try machine.on(.setSpeed(2.5)) }
        #expect(throws: TartilError.usage("volume takes a whole number from 0 to 150 (percent), not '151'")) {
            try machine.on(.setVolume(.to(151)))
        }
        machine.maximumSpeed = 1.5
        #expect(throws: TartilError.usage("speed takes a number from 0.5 to 1.5 in steps of 0.05, not '1.75'")) { try machine.on(.setSpeed(1.75)) }
        #expect(machine.speed == 1.25 && machine.volume == 40)
        #expect(machine.heard == PlanPosition(index: 0))  // positions stay where they were
    }
}
