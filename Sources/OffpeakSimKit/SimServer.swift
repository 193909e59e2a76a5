import Hummingbird
import Logging

/// The simulated provider: the Anthropic and OpenAI routes, the `/sim/*` control routes, and
/// the Hummingbird server that serves them until SIGTERM or SIGINT.
public struct SimServer: Sendable {
    public let options: SimOptions
    let state: SimState
    let logger: Logger

    /// - Parameter logger: where the server logs (stderr by default, at `options.logLevel`).
    /// - Throws: `SimConfigError` when an option is out of range.
    public init(options: SimOptions, logger: Logger? = nil) throws {
        try options.validate()
        self.options = options
        self.state = SimState(options: options)
        if let logger {
            self.logger = logger
        } else {
            var fallback = Logger(label: "offpeak-sim")
            fallback.logLevel = Logger.Level(rawValue: options.logLevel) ?? .info
            self.logger = fallback
        }
    }

    /// Every route, behind a middleware that answers errors as JSON.
    public func buildRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: JSONErrorMiddleware())
        let pipeline = CompletionPipeline(state: state)
        AnthropicRoutes().register(on: router, pipeline: pipeline)
        OpenAIRoutes().register(on: router, pipeline: pipeline)
        ResponsesRoutes().register(on: router, pipeline: pipeline)
        DeepSeekRoutes().register(on: router, pipeline: pipeline)
        MistralRoutes().register(on: router, pipeline: pipeline)
        GeminiRoutes.register(on: router, pipeline: pipeline)
        AnthropicBatchRoutes(state: state).register(on: router)
        OpenAIBatchRoutes(state: state).register(on: router)
        OpenAIFileRoutes(state: state).register(on: router)
        OpenAIFileRoutes(state: state, mistral: true).register(on: router)
        MistralBatchRoutes(state: state).register(on: router)
        ControlRoutes(state: state).register(on: router)
        SourceRoutes(state: state).register(on: router)
        return router
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully.
    /// - Parameter onListening: called once with the bound port (the real one for `--port 0`).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        let port = options.port
        let shutdown = state.shutdown
        let app = Application(
            responder: PathPrefixResponder(prefix: options.pathPrefix, inner: buildRouter().buildResponder()),
            configuration: .init(address: .hostname(options.host, port: port), serverName: "offpeak-sim"),
            onServerRunning: { channel in
                // The listening channel closes first thing in a graceful shutdown.
                channel.closeFuture.whenComplete { _ in shutdown.begin() }
                onListening(channel.localAddress?.port ?? port)
            },
            logger: logger)
        try await app.runService()
    }
}
