import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `CronExpression.next` against Python's croniter on thousands of generated expressions and instants,
/// in zones with and without daylight saving time, many instants close to a clock change.
///
/// Deliberate differences, handled explicitly:
/// - An equal range written as such (`5-5`, `SUN-SUN`) is that one value here, as in POSIX cron;
///   croniter reads it as the whole cycle. Expressions containing one are left out of the comparison.
/// - A wall-clock time repeated when clocks go back fires once here (the first time); croniter fires
///   it twice. Where croniter's answer is such a second occurrence, the expected answer is croniter's
///   next one that is not (`first_pass` from `scripts/croniter_next.py`); these cases are counted.
@Suite(.ownThreads) struct CronCroniterTests {
    static let zones = [
        "UTC", "Europe/Berlin", "America/New_York", "Europe/London", "Australia/Lord_Howe",
        "America/Havana", "Pacific/Chatham", "Asia/Kolkata", "America/Sao_Paulo", "Asia/Tokyo",
    ]

    static let fixed = [
        "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 29 2 *", "30 2 * * *", "0 2 * * *", "*/20 0-3 * * *",
        "0 0 * * *", "15,45 1,2 * * SUN", "* 2 * * *",
    ]

    struct Case {
        var expression: String
        var from: Int
        var zone: String
    }

    struct Answer: Decodable {
        var raw: Int?
        var firstPass: Int?
        var error: String?
    }

    @Test func agreesWithCroniterOnThousandsOfExpressions() throws {
        try Croniter.install()
        var generator = CronGenerator(seed: 0x0FF_BEA7)
        var cases: [Case] = []
        var excluded = 0
        for _ in 0..<3_000 {
            let expression = generator.expression()
            let zone = generator.pick(Self.zones)
            guard !generator.madeEqualRange else {
                excluded += 3
                continue
            }
            for instant in generator.instants(near: zone) {
                cases.append(Case(expression: expression, from: instant, zone: zone))
            }
        }
        // Rare shapes the generator seldom makes: never firing, leap days, fixed times in DST gaps.
        for expression in Self.fixed {
            for zone in Self.zones {
                for instant in generator.instants(near: zone) {
                    cases.append(Case(expression: expression, from: instant, zone: zone))
                }
            }
        }
        let answers = try Croniter.answers(for: cases)
        try #require(answers.count == cases.count, "croniter answered \(answers.count) of \(cases.count)")

        var mismatches: [String] = []
        var repeatedWallTimes = 0
        var noFireTime = 0
        for (check, answer) in zip(cases, answers) {
            #expect(answer.error == nil, "croniter rejected '\(check.expression)': \(answer.error ?? "")")
            let zone = try #require(TimeZone(identifier: check.zone))
            let expression = try CronExpression(check.expression)
            let ours = expression.next(after: Date(timeIntervalSince1970: TimeInterval(check.from)), in: zone)
                .map { Int($0.timeIntervalSince1970) }
            if answer.raw != answer.firstPass { repeatedWallTimes += 1 }
            if answer.firstPass == nil { noFireTime += 1 }
            if ours != answer.firstPass {
                mismatches.append(
                    "'\(check.expression)' \(check.zone) from \(check.from): ours \(ours.map(String.init) ?? "nil"), "
                        + "croniter \(answer.firstPass.map(String.init) ?? "nil") (raw \(answer.raw.map(String.init) ?? "nil"))"
                )
            }
        }
        print(
            "croniter comparison: \(cases.count) cases compared, \(excluded) excluded (equal ranges), "
                + "\(repeatedWallTimes) where croniter fires a repeated wall-clock time twice, "
                + "\(noFireTime) with no fire time, \(mismatches.count) mismatches")
        #expect(cases.count >= 8_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(15))")
    }
}

/// Runs `scripts/croniter_next.py`, installing croniter first when it is missing.
enum Croniter {
    static var script: URL { BuiltBinaries.packageRoot.appendingPathComponent("scripts/croniter_next.py") }

    /// Installs croniter when it is missing; throws (the test fails) when it cannot.
    static func install() throws {
        try PythonPackages.require(["croniter"], packages: ["croniter"], for: "check cron evaluation")
    }

    static func answers(for cases: [CronCroniterTests.Case]) throws -> [CronCroniterTests.Answer] {
        var input = ""
        for check in cases {
            let line = try JSONSerialization.data(
                withJSONObject: ["expr": check.expression, "from": check.from, "tz": check.zone])
            input += String(decoding: line, as: UTF8.self) + "\n"
        }
        let result = try python([script.path], stdin: Data(input.utf8))
        guard result.status == 0 else {
            throw PythonPackages.Unavailable(
                description: "croniter_next.py failed: \(result.stderr.suffix(2_000))")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try result.stdout.split(separator: "\n").map {
            try decoder.decode(CronCroniterTests.Answer.self, from: Data($0.utf8))
        }
    }

    private static func python(_ arguments: [String], stdin: Data? = nil) throws -> CommandResult {
        try PythonPackages.python(arguments, stdin: stdin)
    }
}
