import TestSupport
import Testing

@testable import TartilCore

@Suite struct DownloadPlanTests {
    let policy = DownloadPolicy(maxAttempts: 6, baseDelay: 1, maxDelay: 8, maxRetryAfter: 30, failuresToDemote: 2, demotionSeconds: 60)

    @Test func startsOnTheFirstMirrorAndFailsOverAtOnce() {
        var plan = DownloadPlan(mirrorCount: 3, policy: policy)
        let health = MirrorHealth(mirrorCount: 3, policy: policy)
        #expect(plan.begin(health: health, now: 0) == .start(mirror: 0, delay: 0))
        #expect(plan.failed(.transient("HTTP 503", retryAfter: nil), on: 0, health: health, now: 0, random: { 0.5 })
            == .start(mirror: 1, delay: 0))
        #expect(plan.failed(.mirrorUnusable("HTTP 404"), on: 1, health: health, now: 0, random: { 0.5 })
            == .start(mirror: 2, delay: 0))
        // Back to mirror 0 (tried once): back off; mirror 1 is unusable for this file.
        #expect(plan.failed(.transient("reset", retryAfter: nil), on: 2, health: health, now: 0, random: { 0.5 })
            == .start(mirror: 0, delay: 0.5))
        #expect(plan.unusable == [1])
    }

    @Test func aLoneMirrorBacksOffExponentiallyWithJitterThenGivesUp() {
        var plan = DownloadPlan(mirrorCount: 1, policy: policy)
        let health = MirrorHealth(mirrorCount: 1, policy: policy)
        #expect(plan.begin(health: health, now: 0) == .start(mirror: 0, delay: 0))
        var delays: [Double] = []
        for _ in 0..<5 {
            guard case .start(0, let delay) = plan.failed(.transient("HTTP 500", retryAfter: nil), on: 0, health: health, now: 0, random: { 1 }) else {
                Issue.record("expected a retry")
                return
            }
            delays.append(delay)
        }
        #expect(delays == [1, 2, 4, 8, 8])  // capped at maxDelay; random() = 1 is the ceiling
        #expect(plan.failed(.transient("HTTP 500", retryAfter: nil), on: 0, health: health, now: 0, random: { 1 })
            == .giveUp(reason: "mirror 1: HTTP 500"))
        #expect(plan.attempts == 6)
    }

    @Test func retryAfterIsHonouredUpToTheCap() {
        var plan = DownloadPlan(mirrorCount: 1, policy: policy)
        let health = MirrorHealth(mirrorCount: 1, policy: policy)
        _ = plan.begin(health: health, now: 0)
        #expect(plan.failed(.transient("HTTP 503", retryAfter: 7), on: 0, health: health, now: 0, random: { 0 })
            == .start(mirror: 0, delay: 7))
        #expect(plan.failed(.transient("HTTP 503", retryAfter: 3600), on: 0, health: health, now: 0, random: { 0 })
            == .giveUp(reason: "mirror 1: HTTP 503"))
    }

    @Test func everyMirrorUnusableGivesUpWithEachReason() {
        var plan = DownloadPlan(mirrorCount: 2, policy: policy)
        let health = MirrorHealth(mirrorCount: 2, policy: policy)
        _ = plan.begin(health: health, now: 0)
        _ = plan.failed(.mirrorUnusable("sha256 mismatch"), on: 0, health: health, now: 0, random: { 0 })
        #expect(plan.failed(.mirrorUnusable("HTTP 404"), on: 1, health: health, now: 0, random: { 0 })
            == .giveUp(reason: "mirror 1: sha256 mismatch; mirror 2: HTTP 404"))
    }

    @Test func demotedMirrorsAreTriedLast() {
        var health = MirrorHealth(mirrorCount: 2, policy: policy)
        health.recordFailure(0, now: 0)
        #expect(!health.isDemoted(0, now: 1))
        health.recordFailure(0, now: 1)
        #expect(health.isDemoted(0, now: 2))
        #expect(!health.isDemoted(1, now: 2))
        var plan = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(plan.begin(health: health, now: 2) == .start(mirror: 1, delay: 0))
        #expect(!health.isDemoted(0, now: 62))
        health.recordSuccess(0)
        #expect(!health.isDemoted(0, now: 2))
    }

    @Test func aDemotedMirrorIsStillUsedWhenItIsTheOnlyOneLeft() {
        var health = MirrorHealth(mirrorCount: 1, policy: policy)
        health.recordFailure(0, now: 0)
        health.recordFailure(0, now: 0)
        var plan = DownloadPlan(mirrorCount: 1, policy: policy)
        #expect(plan.begin(health: health, now: 1) == .start(mirror: 0, delay: 0))
    }

    /// The cross-check may send a file to a mirror of its choosing: an attempt counted like the others.
    @Test func switchingToAMirrorIsAnAttemptWithinTheLimit() {
        var plan = DownloadPlan(mirrorCount: 3, policy: DownloadPolicy(maxAttempts: 2))
        let health = MirrorHealth(mirrorCount: 3, policy: policy)
        #expect(plan.begin(health: health, now: 0) == .start(mirror: 0, delay: 0))
        #expect(plan.switchTo(2) == .start(mirror: 2, delay: 0))
        #expect(plan.attempts == 2)
        guard case .giveUp = plan.switchTo(1) else {
            Issue.record("a third attempt was allowed")
            return
        }
    }
}

/// A certificate that does not verify: no retry, the next mirror at once, and the mirror given up for the run.
@Suite struct UntrustedMirrorTests {
    let policy = DownloadPolicy(maxAttempts: 6, baseDelay: 1, maxDelay: 8, maxRetryAfter: 30, failuresToDemote: 2, demotionSeconds: 60)
    let tls = DownloadFailure.untrusted("TLS: the server's certificate does not verify: unable to get local issuer certificate")

    /// (mirrors, retries, untrusted mirrors before the file starts, the plan's first action)
    @Test(arguments: [
        (2, 5, [Int](), DownloadPlan.Action.start(mirror: 0, delay: 0)),
        (2, 5, [0], .start(mirror: 1, delay: 0)),
        (3, 5, [0, 1], .start(mirror: 2, delay: 0)),
        (3, 0, [1], .start(mirror: 0, delay: 0)),
        (2, 5, [0, 1], .giveUp(reason: "mirror 1: TLS: no; mirror 2: TLS: no")),
        (1, 5, [0], .giveUp(reason: "mirror 1: TLS: no")),
    ])
    func aFileNeverStartsOnAMirrorGivenUpForTheRun(mirrors: Int, retries: Int, untrusted: [Int], first: DownloadPlan.Action) {
        var health = MirrorHealth(mirrorCount: mirrors, policy: policy)
        for mirror in untrusted { health.recordFailure(mirror, .untrusted("TLS: no"), now: 0) }
        var plan = DownloadPlan(mirrorCount: mirrors, policy: DownloadPolicy(maxAttempts: 1 + retries))
        #expect(plan.begin(health: health, now: 0) == first)
    }

    @Test func anUntrustedMirrorFailsOverAtOnceEvenWithNoRetriesLeft() {
        var health = MirrorHealth(mirrorCount: 3, policy: policy)
        var plan = DownloadPlan(mirrorCount: 3, policy: DownloadPolicy(maxAttempts: 1))
        #expect(plan.begin(health: health, now: 0) == .start(mirror: 0, delay: 0))
        health.recordFailure(0, tls, now: 0)
        #expect(health.abandonedReason(0) == tls.reason)
        #expect(plan.failed(tls, on: 0, health: health, now: 0, random: { 0.5 }) == .start(mirror: 1, delay: 0))
        health.recordFailure(1, tls, now: 0)
        #expect(plan.failed(tls, on: 1, health: health, now: 0, random: { 0.5 }) == .start(mirror: 2, delay: 0))
        // An ordinary failure on the last mirror spends the one attempt: the summary names all three.
        #expect(plan.failed(.transient("HTTP 503", retryAfter: nil), on: 2, health: health, now: 0, random: { 0.5 })
            == .giveUp(reason: "mirror 1: \(tls.reason); mirror 2: \(tls.reason); mirror 3: HTTP 503"))
    }

    /// Other failures never give a mirror up for the run, only demote it.
    @Test(arguments: [DownloadFailure.transient("reset", retryAfter: nil), .mirrorUnusable("HTTP 404")])
    func otherFailuresNeverGiveAMirrorUp(failure: DownloadFailure) {
        var health = MirrorHealth(mirrorCount: 2, policy: policy)
        for _ in 0..<5 { health.recordFailure(0, failure, now: 0) }
        #expect(health.abandonedReason(0) == nil)
        #expect(health.isDemoted(0, now: 1))
        var plan = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(plan.begin(health: health, now: 1) == .start(mirror: 1, delay: 0))
    }

    /// Seeded property: whatever happens, no attempt ever starts on a mirror given up for the run, and every
    /// file ends (start actions are finite).
    @Test func noAttemptStartsOnAnAbandonedMirror() {
        var random = SeededRandom(seed: 0x7e57_16)
        for _ in 0..<500 {
            let mirrors = 1 + Int(random.next() % 4)
            var health = MirrorHealth(mirrorCount: mirrors, policy: policy)
            var plan = DownloadPlan(mirrorCount: mirrors, policy: DownloadPolicy(maxAttempts: 1 + Int(random.next() % 6)))
            var action = plan.begin(health: health, now: 0)
            var steps = 0
            while case .start(let mirror, _) = action {
                #expect(health.abandonedReason(mirror) == nil)
                steps += 1
                #expect(steps < 50)
                let failure: DownloadFailure = switch random.next() % 3 {
                case 0: tls
                case 1: .mirrorUnusable("HTTP 404")
                default: .transient("reset", retryAfter: nil)
                }
                health.recordFailure(mirror, failure, now: 0)
                action = plan.failed(failure, on: mirror, health: health, now: 0, random: { 0.5 })
            }
        }
    }
}

/// A mirror that cannot be reached, and one whose bytes are wrong: what play's policy and prefetch's decide.
@Suite struct UnreachableMirrorTests {
    /// Each row: the policy (prefetch retries unreachable mirrors, play passes over them), the mirrors, the failures
    /// in turn (each on the mirror the plan chose), and the actions the plan answers with.
    @Test(arguments: [
        // play: a mirror that cannot be reached is passed over at once; with none left the file is given up.
        ("play", 2, ["unreachable"], ["start 0", "start 1"]),
        ("play", 2, ["unreachable", "unreachable"], ["start 0", "start 1", "giveUp mirror 1: timed out; mirror 2: timed out"]),
        ("play", 1, ["unreachable"], ["start 0", "giveUp mirror 1: timed out"]),
        // prefetch: retried on the same mirror with backoff, within its attempts.
        ("prefetch", 1, ["unreachable"], ["start 0", "start 0 after 0.25"]),
        ("prefetch", 2, ["unreachable", "unreachable"], ["start 0", "start 1", "start 0 after 0.25"]),
        // wrong bytes: once more from the same mirror at once, then the next mirror; either policy.
        ("play", 2, ["wrong", "wrong"], ["start 0", "start 0", "start 1"]),
        ("prefetch", 2, ["wrong", "wrong", "wrong", "wrong"], ["start 0", "start 0", "start 1", "start 1", "giveUp mirror 1: size or hash mismatch; mirror 2: size or hash mismatch"]),
        ("play", 1, ["wrong", "wrong"], ["start 0", "start 0", "giveUp mirror 1: size or hash mismatch"]),
        ("play", 2, ["wrong", "503", "wrong"], ["start 0", "start 0", "start 1", "start 1"]),
        // A transient failure (a 503) is still retried by play: the server answered.
        ("play", 1, ["503"], ["start 0", "start 0 after 0.25"]),
    ])
    func unreachableAndWrongBytes(policy name: String, mirrors: Int, failures: [String], expected: [String]) {
        let policy = name == "play" ? DownloadPolicy.playback : DownloadPolicy()
        var plan = DownloadPlan(mirrorCount: mirrors, policy: policy)
        var health = MirrorHealth(mirrorCount: mirrors, policy: policy)
        func text(_ action: DownloadPlan.Action) -> String {
            switch action {
            case .start(let mirror, let delay): delay == 0 ? "start \(mirror)" : "start \(mirror) after \(delay)"
            case .giveUp(let reason): "giveUp \(reason)"
            }
        }
        var actions = [text(plan.begin(health: health, now: 0))]
        var current = 0
        for failure in failures {
            let value: DownloadFailure = switch failure {
            case "unreachable": .unreachable("timed out")
            case "wrong": .wrongBytes("size or hash mismatch")
            default: .transient("HTTP 503", retryAfter: nil)
            }
            health.recordFailure(current, value, now: 1)
            let action = plan.failed(value, on: current, health: health, now: 1, random: { 1 })
            actions.append(text(action))
            if case .start(let mirror, _) = action { current = mirror }
        }
        #expect(actions == expected)
    }

    /// With play's policy a mirror that could not be reached is not asked by the next files either, for
    /// `unreachableSeconds`: a file begun then is given up at once, naming why; after that (or once the mirror
    /// served a file) it is asked again.
    @Test func anUnreachableMirrorIsPassedOverByTheNextFilesForAWhile() {
        let policy = DownloadPolicy.playback
        var health = MirrorHealth(mirrorCount: 2, policy: policy)
        health.recordFailure(0, .unreachable("cannot connect: Connection refused"), now: 10)
        var second = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(second.begin(health: health, now: 11) == .start(mirror: 1, delay: 0))
        health.recordFailure(1, .unreachable("timed out"), now: 12)
        var third = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(
            third.begin(health: health, now: 13)
                == .giveUp(reason: "mirror 1: cannot connect: Connection refused; mirror 2: timed out"))
        var later = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(later.begin(health: health, now: 10 + policy.unreachableSeconds) == .start(mirror: 0, delay: 0))
        health.recordSuccess(1)
        var healed = DownloadPlan(mirrorCount: 2, policy: policy)
        #expect(healed.begin(health: health, now: 13) == .start(mirror: 1, delay: 0))
        // Prefetch's policy remembers nothing of the kind: every file tries the mirror.
        var patient = MirrorHealth(mirrorCount: 1, policy: DownloadPolicy())
        patient.recordFailure(0, .unreachable("timed out"), now: 10)
        var next = DownloadPlan(mirrorCount: 1, policy: DownloadPolicy())
        #expect(next.begin(health: patient, now: 11) == .start(mirror: 0, delay: 0))
    }
}
