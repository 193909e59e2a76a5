import Foundation

/// How a provider reaches its server: timeouts, retries, cancellation, and the HTTP client.
///
/// Kept apart from the providers so the factory, the executor and tests set these once, the
/// same way for every API shape.
struct ProviderOptions: Sendable {
    /// Seconds to wait for a connection.
    var connectTimeout: TimeInterval
    /// Seconds one attempt may take in all.
    var requestTimeout: TimeInterval
    var retryPolicy: RetryPolicy
    /// When raised, the call in flight is aborted and no retry follows.
    var cancellation: CancellationFlag?
    /// Shared between providers to share its pooled connections.
    var httpClient: HTTPClient
    /// Waits between retries; `nil` sleeps for real, waking early when `cancellation` is raised.
    /// Tests pass a closure that only records the wait.
    var sleep: (@Sendable (TimeInterval) -> Void)?
    /// Cleans what the server sends back (answers, ids, error messages) of credentials before
    /// offpeak keeps or shows any of it; by default, of this process's keys and every key shape.
    var redactor: Redactor
    /// Which of OpenAI's APIs the `openai` provider speaks (`openai_api` in offpeak.yaml).
    var openAIWire: OpenAIWire = .auto

    init(
        connectTimeout: TimeInterval = 10, requestTimeout: TimeInterval = 120,
        retryPolicy: RetryPolicy = RetryPolicy(),
        cancellation: CancellationFlag? = nil, httpClient: HTTPClient = HTTPClient(),
        sleep: (@Sendable (TimeInterval) -> Void)? = nil,
        redactor: Redactor = Redactor(environment: ProcessInfo.processInfo.environment)
    ) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.retryPolicy = retryPolicy
        self.cancellation = cancellation
        self.httpClient = httpClient
        self.sleep = sleep
        self.redactor = redactor
    }
}
