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
