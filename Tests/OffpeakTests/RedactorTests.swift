import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `Redactor`: every credential shape and every form of a known key is replaced; text that only
/// resembles one (prose, ids, hashes) comes back byte for byte.
@Suite(.ownThreads) struct RedactorTests {
    static let redactor = Redactor(environment: [
        "ANTHROPIC_API_KEY": "sk-ant-MARKERanthropic", "OPENAI_API_KEY": "plainword-7key",
        "GITHUB_TOKEN": "NOTSHAPED4242value", "DB_PASSWORD": "s3cr/et+pass=",
        "HTTPS_PROXY": "http://proxyuser:pr0xy-pass@proxy.local:3128", "HOME": "/home/someone1",
        "TOKENIZERS_PARALLELISM": "false-but-long-1", "SHORT_TOKEN": "abc12", "PLAIN_SECRET": "required",
    ])

    @Test(arguments: [
        // Headers as echoing proxies print them.
        ("x-api-key: sk-ant-api03-AbCdEf0123456789xyz", "x-api-key: [redacted]"),
        ("X-Api-Key: abcdefghij", "X-Api-Key: [redacted]"),
        ("authorization: Bearer sk-proj-abc123DEF456ghi789", "authorization: Bearer [redacted]"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [redacted]"),
        ("Proxy-Authorization: Bearer opaquetoken", "Proxy-Authorization: Bearer [redacted]"),
        ("Authorization: token ghx_notaknownprefix", "Authorization: token [redacted]"),
        ("api-key: 0123456789abcdef0123456789abcdef", "api-key: [redacted]"),
        ("X-Goog-Api-Key: AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "X-Goog-Api-Key: [redacted]"),
        ("Ocp-Apim-Subscription-Key: 1f2e3d4c5b6a", "Ocp-Apim-Subscription-Key: [redacted]"),
        ("x-auth-token: a1b2c3d4e5f6g7h8", "x-auth-token: [redacted]"),
        (
            "echo: host: 127.0.0.1:8089 x-api-key: abcdefghijkl anthropic-version: 2023-06-01",
            "echo: host: 127.0.0.1:8089 x-api-key: [redacted] anthropic-version: 2023-06-01"
        ),
        // JSON, Python and query-string fields.
        (#"{"api_key": "abcd"}"#, #"{"api_key": "[redacted]"}"#),
        (#"{"apiKey":"with spaces inside"}"#, #"{"apiKey":"[redacted]"}"#),
        (#"{\"api_key\":\"zzzz1234\",\"model\":\"m\"}"#, #"{\"api_key\":\"[redacted]\",\"model\":\"m\"}"#),
        (#"{"password": "hunter"}"#, #"{"password": "[redacted]"}"#),
        (#"{"client_secret":"abc"}"#, #"{"client_secret":"[redacted]"}"#),
        (#"{"access_token": "ya29.a0AfH6SMBx-y_z"}"#, #"{"access_token": "[redacted]"}"#),
        (#"{"token": "abc123def456"}"#, #"{"token": "[redacted]"}"#),
        ("{'authorization': 'Bearer abc.def-123'}", "{'authorization': 'Bearer [redacted]'}"),
        ("https://h/p?api_key=abc123xyz&page=2", "https://h/p?api_key=[redacted]&page=2"),
        ("https://h/p?access_token=0123456789&x=1", "https://h/p?access_token=[redacted]&x=1"),
        ("client_secret=s3cr3t-value;", "client_secret=[redacted];"),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=[redacted]"
        ),
        ("api_key => 'abcdef'", "api_key => '[redacted]'"),
        ("Password: hunter2.", "Password: [redacted]."),
        (
            #"{"X-Api-Key": ["abcdef"], "Accept": ["*/*"]}"#,
            #"{"X-Api-Key": ["[redacted]"], "Accept": ["*/*"]}"#
        ),
        ("[('x-api-key', 'abcdef'), ('accept', '*/*')]", "[('x-api-key', '[redacted]'), ('accept', '*/*')]"),
        ("next=%2Fcb%3Fapi_key%3Dabc123%26x%3D1", "next=%2Fcb%3Fapi_key%3D[redacted]"),
        ("offpeak --api-key=abc123 run", "offpeak --api-key=[redacted] run"),
        ("Authorization: Bearer sk-1234", "Authorization: Bearer [redacted]"),
        // Keys with a vendor's prefix, anywhere.
        ("key sk-ant-api03-AbCdEf0123456789xyz here", "key [redacted] here"),
        ("OPENAI_API_KEY=sk-abcdefghijklmnop1234", "OPENAI_API_KEY=[redacted]"),
        ("use sk-proj-Ab12Cd34Ef56Gh78, then", "use [redacted], then"),
        ("the key was sk-ant-MARKER.", "the key was [redacted]."),
        ("\"sk-or-v1-0123456789abcdef\"", "\"[redacted]\""),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[redacted]"),
        ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "[redacted]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[redacted]"),
        ("glpat-xxxxXXXX1234yyyy", "[redacted]"),
        ("AKIAIOSFODNN7EXAMPLE is an access key id", "[redacted] is an access key id"),
        ("xoxb-1234567890-abcdefghij", "[redacted]"),
        ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", "[redacted]"),
        ("gsk_AbCdEfGhIjKlMnOpQrStUv12", "[redacted]"),
        ("xai-AbCdEfGhIjKlMnOpQrStUv12", "[redacted]"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U.",
            "jwt [redacted]."
        ),
        ("Bearer 8f14e45fceea167a5a36dedd4bea2543", "Bearer [redacted]"),
        // URL user-info, plain and JSON-escaped.
        ("https://user:hunter2@example.com/path", "https://[redacted]@example.com/path"),
        ("fetch http://tok3n@host:8080/x failed", "fetch http://[redacted]@host:8080/x failed"),
        (#"{"url":"https:\/\/u:p4ss@h\/x"}"#, #"{"url":"https:\/\/[redacted]@h\/x"}"#),
        // Private keys.
        (
            "k=-----BEGIN RSA PRIVATE KEY-----\nMIIEow+IBAA/KCAQ=\n-----END RSA PRIVATE KEY----- end",
            "k=[redacted] end"
        ),
        (
            #"{"k":"-----BEGIN PRIVATE KEY-----\nMIIEvQ\nIBADAN\n-----END PRIVATE KEY-----\n"}"#,
            #"{"k":"[redacted]\n"}"#
        ),
    ])
    func redactsCredentialShapes(text: String, expected: String) {
        #expect(Redactor.shapes.redact(text) == expected)
        #expect(Self.redactor.redact(text) == expected)
    }

    @Test(arguments: [
        ("error: sk-ant-MARKERanthropic!", "error: [redacted]!"),
        ("got plainword-7key from you", "got [redacted] from you"),
        ("idNOTSHAPED4242valueX", "id[redacted]X"),
        (#"{"x":"s3cr\/et+pass="}"#, #"{"x":"[redacted]"}"#),
        ("q=s3cr%2Fet%2Bpass%3D&a=1", "q=[redacted]&a=1"),
        ("q=s3cr%2fet%2bpass%3d&a=1", "q=[redacted]&a=1"),
        ("proxy said pr0xy-pass", "proxy said [redacted]"),
        ("echo plainword-7key plainword-7key", "echo [redacted] [redacted]"),
    ])
    func redactsTheKeysOfTheEnvironmentInEveryForm(text: String, expected: String) {
        #expect(Self.redactor.redact(text) == expected)
    }

    @Test func choosesWhichVariablesHoldSecrets() {
        #expect(Redactor.isCredentialVariable("ANTHROPIC_API_KEY"))
        #expect(Redactor.isCredentialVariable("github_token"))
        #expect(Redactor.isCredentialVariable("AWS_SECRET_ACCESS_KEY"))
        #expect(Redactor.isCredentialVariable("PGPASSWORD"))
        #expect(Redactor.isCredentialVariable("HF_TOKEN"))
        #expect(!Redactor.isCredentialVariable("TOKENIZERS_PARALLELISM"))
        #expect(!Redactor.isCredentialVariable("HOME"))
        #expect(!Redactor.isCredentialVariable("KEYBOARD_LAYOUT"))
        #expect(Redactor.isSecretValue("sk-1234", held: true))
        #expect(!Redactor.isSecretValue("sk-1234", held: false))
        #expect(!Redactor.isSecretValue("required", held: false))
        #expect(!Redactor.isSecretValue("two words", held: true))
        #expect(Redactor.isSecretValue("onlylettersbutlong", held: false))
        // Ordinary words in the environment are not hunted for in every text.
        #expect(
            Self.redactor.redact("false-but-long-1 is required; abc12 too")
                == "false-but-long-1 is required; abc12 too")
    }

    @Test(arguments: [
        "The task-scheduler asks skeptical users to risk-assess their desk-bound skills.",
        "sk-learn and scikit-learn are the same library; sk-learn-compatible estimators work too.",
        "cache key 3f786850e387550fdab836ed7e6dc881de23001b (SHA-1), request r3f9c0a1b2c3d4e5f6",
        "ids: msg_01XFDUDYJgAACzvnptvVoYEL, chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT, req_011CXYZabc123",
        "He was the bearer of bad news; bearer bonds and a Bearer token go in the Authorization header.",
        "Authorization: required. Authorization: Bearer <token>. Authorization: Bearer $OPENAI_API_KEY",
        "Send the header Authorization: Bearer token, or Authorization: Basic creds.",
        "[('accept', '*/*'), ('user-agent', 'curl/8.5.0')] and [\"password\", \"username\"] fields",
        "The secret: practice. The password is stored in a vault. Password: (see below)",
        "max_tokens: 1024, eos_token: </s>, token: 5, input tokens: 123, \"token\": \"Hello\"",
        "Visit https://example.com/path?page=2#top or mail user@example.com, mailto:a@b.c",
        "UUID 123e4567-e89b-12d3-a456-426614174000 at 2024-01-01T10:00:00Z, sha256:e3b0c44298fc1c149afb",
        "## API keys\n\nSet `ANTHROPIC_API_KEY` in your shell, then run `offpeak run docs`.",
        "Größe: 12 – naïve café, 東京 is a city; emoji 🙂 and AKIA is a word.",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "{\"model\":\"claude-haiku-4-5\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
        "provider answered HTTP 400: echo: x-api-key: [redacted] body=[redacted]",
        "",
    ])
    func leavesOrdinaryTextAlone(text: String) {
        #expect(Self.redactor.redact(text) == text)
    }

    @Test func aNULWouldCutTheStoredTextSoItIsReplaced() throws {
        let answer = Self.redactor.redact("before\u{0}after")
        #expect(answer == "before\u{FFFD}after")
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        let run = StoreTests.run("j-1")
        let request = StoreTests.request("a", run: "j-1", position: 0)
        try store.runs.insert(run: run, requests: [request])
        for text in [answer, "before\u{0}after"] {
            try store.execute("DELETE FROM results")
            let insert = {
                try store.execute(
                    """
                    INSERT INTO results (request_id, run_id, text, finish_reason, model, from_cache, ledger_id,
                        input_tokens, output_tokens, dollars, created_at)
                    VALUES (?, 'j-1', ?, 'stop', 'm', ?, NULL, 1, 1, 0, ?)
                    """, [request.id, text, false, Date()])
            }
            if text != answer, TestStore.onPostgres {
                #expect(throws: OffpeakError.self, "PostgreSQL refuses a NUL in text") { try insert() }
                continue
            }
            try insert()
            let stored = try #require(try store.runs.results(runID: "j-1")[request.id]).text
            #expect(stored == (text == answer ? answer : "before"), "SQLite keeps text up to a NUL only")
        }
    }

    @Test func redactingTwiceChangesNothingMore() {
        let text = "x-api-key: sk-ant-api03-AbC123 authorization: Bearer abc123def456 https://u:p@h"
        let once = Self.redactor.redact(text)
        #expect(once == "x-api-key: [redacted] authorization: Bearer [redacted] https://[redacted]@h")
        #expect(Self.redactor.redact(once) == once)
    }

    /// Hostile pages go through in one linear pass. A release build redacts 2 MiB of any of these
    /// in 2-40 ms; a debug build takes about 1 s for these 512 KiB on a busy machine, and a
    /// quadratic pass would take minutes: the bound is ten times what was measured.
    @Test(arguments: [
        String(repeating: "sk-", count: 175_000),
        String(repeating: "-sk-a", count: 105_000),
        String(repeating: "eyJ-", count: 130_000),
        String(repeating: "password: \"", count: 48_000),
        String(repeating: "Bearer ", count: 75_000),
        String(repeating: "https://a", count: 58_000),
        String(repeating: "-----BEGIN PRIVATE KEY-----", count: 19_000),
        String(repeating: "token=abc ", count: 52_000),
        String(repeating: "a", count: 512 * 1024),
        String(
            repeating: "The quick brown fox jumps over the lazy dog; sk-ant-api03-X1 is a key. ", count: 7_000
        ),
    ])
    func largeHostileTextsTakeOneLinearPass(text: String) {
        let started = ContinuousClock.now
        _ = Self.redactor.redact(text)
        #expect(started.duration(to: .now) < .seconds(10))
    }
}
