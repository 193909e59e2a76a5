import Foundation
import Testing

@testable import Offpeak

/// `store: postgresql://…` as libpq reads it, and the password kept out of every text.
struct PostgresURLTests {
    func parse(_ text: String) throws(PostgresURL.Problem) -> PostgresURL {
        try PostgresURL.parse(text, defaultUser: "alice")
    }

    func problem(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        do {
            _ = try parse(text)
            Issue.record("expected '\(text)' to be refused", sourceLocation: sourceLocation)
            return ""
        } catch {
            return error.description
        }
    }

    @Test func readsEveryPart() throws {
        let url = try parse(
            "postgresql://bob:s3cret@db.example.org:6543/ledger?sslmode=require&application_name=offpeak-h1&connect_timeout=7"
        )
        #expect(url.user == "bob")
        #expect(url.password?.revealed == "s3cret")
        #expect(url.host == "db.example.org")
        #expect(url.port == 6543)
        #expect(url.database == "ledger")
        #expect(url.sslMode == .require)
        #expect(url.applicationName == "offpeak-h1")
        #expect(url.connectTimeout == 7)
        #expect(url.endpoint == "db.example.org:6543")
    }

    @Test func fillsTheDefaultsAsLibpqDoes() throws {
        let url = try parse("postgres://db.example.org")
        #expect(url.user == "alice")
        #expect(url.password == nil)
        #expect(url.port == 5432)
        #expect(url.database == "alice")
        #expect(url.sslMode == .prefer)
        #expect(url.applicationName == "offpeak")
        #expect(url.connectTimeout == nil)
        let named = try parse("postgresql://bob@/")
        #expect(named.host == "localhost")
        #expect(named.database == "bob")
        #expect(try parse("POSTGRESQL://h/d").database == "d")
    }

    @Test func percentDecodesEveryPart() throws {
        let url = try parse("postgresql://b%40b:p%3Aw%2Fd%40x@h%2Dx:5433/my%20db?application_name=off%20peak")
        #expect(url.user == "b@b")
        #expect(url.password?.revealed == "p:w/d@x")
        #expect(url.host == "h-x")
        #expect(url.database == "my db")
        #expect(url.applicationName == "off peak")
        #expect(url.description == "postgresql://b%40b@h-x:5433/my%20db?application_name=off%20peak")
    }

    @Test func takesIPv6Hosts() throws {
        let url = try parse("postgresql://u@[::1]:5433/d")
        #expect(url.host == "::1")
        #expect(url.port == 5433)
        #expect(url.endpoint == "[::1]:5433")
        #expect(try parse("postgresql://u@[fe80::1]/d").port == 5432)
    }

    @Test func readsEverySSLModeAndConnectTimeout() throws {
        for mode in PostgresURL.SSLMode.allCases {
            #expect(try parse("postgresql://h/d?sslmode=\(mode.rawValue)").sslMode == mode)
        }
        #expect(try parse("postgresql://h/d?connect_timeout=0").connectTimeout == 86_400)
        #expect(try parse("postgresql://h/d?connect_timeout=1").connectTimeout == 2)
    }

    @Test func refusesWhatItCannotRead() {
        #expect(problem("mysql://h/d") == "expected a postgresql:// or postgres:// URL")
        #expect(
            problem("postgresql://h/d?sslmode=allow")
                == "sslmode 'allow' is not one of disable, prefer, require, verify-ca, verify-full")
        #expect(
            problem("postgresql://h/d?sslmod=disable")
                == "unknown parameter 'sslmod' (offpeak takes sslmode, application_name, connect_timeout)")
        #expect(
            problem("postgresql://h/d?connect_timeout=soon")
                == "connect_timeout 'soon' is not a whole number of seconds from 0 to 86400")
        #expect(problem("postgresql://h:99999/d") == "the port '99999' is not a number from 1 to 65535")
        #expect(problem("postgresql://h:/d") == "the port '' is not a number from 1 to 65535")
        #expect(problem("postgresql://h1,h2/d") == "several hosts are not supported; name one")
        #expect(problem("postgresql://h/d#frag") == "a fragment (#…) has no meaning in a PostgreSQL URL")
        #expect(problem("postgresql://[::1/d") == "'[' opens an IPv6 address that ']' never closes")
        #expect(problem("postgresql://h/a%2Fb") == "the database name 'a/b' contains a '/'")
        #expect(
            problem("postgresql://h/d?application_name=")
                == "application_name must be 1 to 63 ASCII characters on one line")
    }

    @Test func theP4sswordIsInNoText() throws {
        let secret = "Sup3r-s3cret-pw"
        let url = try parse("postgresql://bob:\(secret)@h:5432/d?sslmode=disable")
        var dumped = ""
        dump(url, to: &dumped)
        let texts = [
            url.description, String(describing: url), String(reflecting: url), "\(url)", dumped,
            String(describing: url.password), String(reflecting: url.password as Any),
            StoreLocation.postgres(url).description,
        ]
        for text in texts { #expect(!text.contains(secret), "\(text)") }
        #expect(url.description == "postgresql://bob@h:5432/d?sslmode=disable")
        // A malformed escape in the password is reported without the password's text.
        #expect(problem("postgresql://bob:\(secret)%zz@h/d") == "the password has a malformed %-escape")
    }

    @Test func storeLocationAndTheVariable() throws {
        #expect(try StoreLocation.parse("sqlite", defaultUser: "a") == .sqlite)
        let url = try PostgresURL.parse("postgresql://u@h/d", defaultUser: "a")
        #expect(try StoreLocation.parse(" postgresql://u@h/d ", defaultUser: "a") == .postgres(url))
        #expect(throws: PostgresURL.Problem.self) { try StoreLocation.parse("mysql", defaultUser: "a") }
        // The environment wins; empty is unset.
        let resolved = try StoreLocation.resolve(
            configured: .sqlite, environment: ["OFFPEAK_STORE": "postgresql://u@h/d"], defaultUser: "a")
        #expect(resolved == .postgres(url))
        #expect(
            try StoreLocation.resolve(configured: .postgres(url), environment: ["OFFPEAK_STORE": "sqlite"])
                == .sqlite)
        #expect(
            try StoreLocation.resolve(configured: .postgres(url), environment: ["OFFPEAK_STORE": ""])
                == .postgres(url))
        do {
            _ = try StoreLocation.resolve(
                configured: .sqlite, environment: ["OFFPEAK_STORE": "postgresql://u:hunter22@h/d?ssl=1"])
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .configuration)
            #expect(
                error.description
                    == "OFFPEAK_STORE: unknown parameter 'ssl' (offpeak takes sslmode, application_name, connect_timeout)"
            )
        }
    }

    @Test func offpeakYAMLStoreKey() throws {
        let config = try WorkspaceConfigParser.parse(
            yaml: "provider: sim\nstore: postgresql://u@h:5433/d?sslmode=disable\n", path: "offpeak.yaml")
        #expect(
            config.store
                == .postgres(
                    try PostgresURL.parse("postgresql://u@h:5433/d?sslmode=disable", defaultUser: "x")))
        #expect(
            try WorkspaceConfigParser.parse(yaml: "store: sqlite\n", path: "offpeak.yaml").store == .sqlite)
        #expect(
            try WorkspaceConfigParser.parse(yaml: "provider: sim\n", path: "offpeak.yaml").store == .sqlite)
        for (yaml, message) in [
            (
                "provider: sim\nstore: postgresql://u:pw-hidden@h/d?sslmode=nope\n",
                "offpeak.yaml:2:8: store: sslmode 'nope' is not one of disable, prefer, require, verify-ca, verify-full"
            ),
            (
                "store: redis://h\n",
                "offpeak.yaml:1:8: store: expected 'sqlite' or a postgresql://USER@HOST:PORT/DATABASE URL"
            ),
        ] {
            do {
                _ = try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
                Issue.record("expected an error for \(yaml)")
            } catch {
                #expect(error.status == .configuration)
                #expect(error.description == message)
                #expect(!error.description.contains("pw-hidden"))
            }
        }
    }
}
