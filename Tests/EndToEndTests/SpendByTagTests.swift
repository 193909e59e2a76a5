import Foundation
import OffpeakTestSupport
import Testing

/// Issue 48, item 5, through the built binary: a job's tags and each submitted request's own are
/// kept with the ledger rows of its calls; requests with other tags never share a batched prompt,
/// so each call's spend is wholly its tags'; `costs --by tag` sums them, a call under each of its
/// tags; a tag that is not one is refused with its line and field.
@Suite(.ownThreads) struct SpendByTagTests {
    @Test func submittedRequestsAreCountedUnderTheirOwnTagsAndTheirJobs() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/inbox.yaml",
            """
            kind: prompt
            queue: true
            system: >-
              You are the helpdesk's triage assistant. Read the ticket, decide which team takes it (billing,
              shipping, accounts or support), and answer in one sentence that names the team and says why, in
              plain words a customer would understand, without promising anything the team has not agreed to.
              Never ask for passwords or card numbers; never guess an order's status.
            template: "{{item}}"
            max_tokens: 60
            tags: [project:helpdesk]

            """)
        let lines = [
            #"{"id": "a1", "vars": {"item": "My card was charged twice."}, "tags": ["customer:acme"]}"#,
            #"{"id": "a2", "vars": {"item": "Where is my invoice?"}, "tags": ["customer:acme"]}"#,
            #"{"id": "b1", "vars": {"item": "The parcel never arrived."}, "tags": ["customer:globex"]}"#,
            #"{"id": "n1", "vars": {"item": "How do I reset my password?"}}"#,
            #"{"id": "x1", "vars": {"item": "Hello?"}, "tags": ["two words"]}"#,
        ]
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: lines.joined(separator: "\n"))
        #expect(submitted.status == 65)
        #expect(submitted.stdout.split(separator: "\n").count == 4)
        #expect(
            submitted.stderr
                == "offpeak: stdin:5: tags[1]: tag two words holds a character other than letters, digits and ._:/@-\n"
        )

        let run = try workspace.offpeak(
            ["run", "inbox"],
            environment: [
                "OFFPEAK_SYSFS_ROOT": BuiltBinaries.packageRoot.appendingPathComponent(
                    "Tests/Fixtures/sysfs/ac-wifi"
                )
                .path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        // acme's two requests in one batched prompt; globex's and the untagged one alone.
        #expect(
            run.stdout == """
                job inbox: 4 of 4 items answered (4 now)
                outputs: out/inbox/
                cost: $0.001659 for 3 calls, 363 input and 38 output tokens (naive $0.001668, saved $0.000009)

                """)
        let costs = try workspace.offpeak(["costs", "--by", "tag"])
        #expect(
            costs.stdout == """
                TAG               CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                project:helpdesk  3      363    0           38      $0.001659  $0.001668  $0.000009
                customer:acme     1      169    0           20      $0.000807  $0.000816  $0.000009
                customer:globex   1      97     0           9       $0.000426  $0.000426  $0.00
                total             3      363    0           38      $0.001659  $0.001668  $0.000009
                (a call made with several tags is in each of their lines)

                """)
    }
}
