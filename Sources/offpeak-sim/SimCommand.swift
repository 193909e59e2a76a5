import ArgumentParser
import Foundation
import OffpeakSimKit

/// `offpeak-sim`: parses flags into `SimOptions` and runs `SimServer`; the work lives in
/// OffpeakSimKit.
@main
struct SimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offpeak-sim",
        abstract: "A local simulated LLM provider (Anthropic Messages and OpenAI chat completions).",
        discussion: """
            Serves POST /v1/messages and POST /v1/chat/completions on loopback with deterministic \
            answers and real usage accounting, and prints one line once listening:
              offpeak-sim listening on http://HOST:PORT

            Tokens: tokens(text) = (UTF-8 bytes + 3) / 4. Input tokens are the sum over the system \
            text and every message's text blocks (no per-message overhead); output tokens are \
            tokens(answer). offpeak's own estimator uses the identical rule.

            Answers: a last user message holding <document>...</document> gets an extractive \
            summary (the document's first sentences, about --summary-tokens long); any other gets \
            "Answer: " and its first sentence (at most --answer-tokens of it). An answer over \
            max_tokens is cut to max_tokens*4 bytes and reported as max_tokens / length.

            Batched prompts: a last user message holding <item id="ID">...</item> blocks (as \
            offpeak packs small requests) gets one compact JSON object {"ID":"answer",...} in the \
            items' order, each answer exactly what that item's text would get sent alone. With \
            --damage-rate P each item is damaged with chance P (repeatable under --seed), by one \
            kind drawn from --damage: drop (left out), duplicate (key written twice, the second \
            time wrong), garble (null, a number or ""), reorder (moved), wrap (the whole object \
            in prose or a ```json fence, once per answer). Damaged text is billed as output; \
            max_tokens cuts the whole text.

            Degrading models: with --degrading-model NAME:KIND:AFTER (repeatable, one per model; \
            NAME is all before the last two colons), batched prompts to model NAME keep their \
            shape but get the items after position AFTER (1-based, in prompt order) wrong; with \
            NAME:KIND:slope=RATE (like slope=1.5%) the item at position p is wrong with a chance \
            of p times RATE, drawn from --seed, its text and its place. A wrong item gets \
            wrong-label ("Answer: " and one of billing, bug, feature, account, shipping, other, \
            never the right answer, the same for the same item text under --seed), neighbour \
            (the right answer of the item before it) or cut (its answer cut to half its tokens). \
            Single prompts, other models and /sim/expected are answered right; structured forms \
            hold the shape, not the content; --weak-model and damage apply after. \
            degraded_items in /sim/stats counts the items so answered.

            Prompt caching: a system prefix of at least the model's minimum is cached for \
            --cache-ttl seconds (refreshed on use): Anthropic when marked with cache_control \
            (cache_creation/cache_read_input_tokens beside input_tokens), OpenAI automatically \
            (cached_tokens inside prompt_tokens). The minimum is Anthropic's documented one for \
            the Claude models it lists (4096 for claude-haiku-4-5, claude-opus-4-5 and -4-6; \
            2048 for claude-3-5-haiku and claude-3-haiku; 1024 for the other Sonnet and Opus \
            models); for any other model, and on the OpenAI endpoint, --cache-min-tokens. A \
            marked prefix below the minimum is billed as plain input.

            Faults (\(SimFault.allNames)): per request with the header x-sim-fault: NAME, at \
            random with --fault-rate, or queued for the next calls with POST /sim/faults \
            {"next": ["429", "truncate"]} (DELETE /sim/faults clears the queue); with \
            --fault-rate NAME=1 every call gets that fault.

            Echo faults (echo400, echo429, echo500, echo502, echo529) answer that status, in the \
            endpoint's error shape, with {"error":{"message":"echo: <every request header, one \
            per line> body=<request body>"}}, as proxies that echo the request do: the API key \
            comes back in the error. echo429 sends --retry-after; echo529 is 503 on the OpenAI \
            endpoint.

            Latency: each answer waits (--latency-ms + --ms-per-output-token x its output tokens) \
            x (1 + --jitter x u), u uniform in [-1, 1): the mean is the sum, every delay is within \
            +/- jitter of it, its standard deviation jitter/sqrt(3) of it; repeatable under --seed. \
            Errors (faults, 429s of the rate limiter) answer at once.

            Rate limits (--rpm, --input-tpm, --output-tpm, --tpm; none by default): per minute, \
            for each endpoint apart, as a token bucket that holds a minute's allowance, starts \
            full and refills continuously. Requests cost 1; input tokens as each API counts them \
            (Anthropic leaves cache reads out, OpenAI does not); output tokens are reserved from \
            max_tokens and the unused part given back when the answer is done; --tpm counts \
            input + output. A call over any limit gets 429 in the endpoint's error shape \
            (rate_limit_error; OpenAI type requests or tokens) with retry-after in whole seconds, \
            and takes nothing from the limits nor a fault draw. Every answer of an endpoint \
            carries its API's headers for the limits set: Anthropic \
            anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset} \
            (reset: RFC 3339 time when full again; token counts remaining rounded to the nearest \
            thousand; tokens = --tpm, else input and output summed), OpenAI \
            x-ratelimit-{limit,remaining,reset}-{requests,tokens} (reset: time until full, as \
            1s, 6m0s, 20ms; tokens = --tpm, else the tighter of the input and output limits).

            Research sources: GET /sources/NAME serves a deterministic document (ETag, \
            Last-Modified, 304); POST /sim/sources {"name", "content", "content_type", "status"} \
            sets one, and a status of 400-599 makes it an error page served with that status.

            Control: GET /sim/stats (calls, faults, billed tokens, batched_calls, batched_items, \
            degraded_items, damage by kind; only fully sent 200 answers are billed and counted, a truncated answer \
            never is; rate_limited: calls the rate limiter answered 429, rate_limited_by: by limit, \
            in_flight and max_in_flight: API calls being answered now and at most at once), \
            POST /sim/reset (counters, prompt cache, fault queue, random sequences and limits), GET /sim/health, POST /sim/expected {"texts": [...]} -> \
            {"answers": [...]} (each text's answer sent alone: no damage, no max_tokens cut), \
            POST /sim/results-status {"status": 404 | null} (results downloads answer that status, or are served).
            """)

    @Option(help: "Address to listen on.")
    var host = SimOptions().host

    @Option(help: "Port to listen on; 0 picks a free port (the listening line reports it).")
    var port = SimOptions().port

    @Option(help: "About how many tokens a document summary may use.")
    var summaryTokens = SimOptions().summaryTokens

    @Option(help: "At most how many tokens of the prompt's first sentence a plain answer repeats.")
    var answerTokens = SimOptions().answerTokens

    @Option(
        help:
            "Smallest system prefix, in tokens, that prompt caching applies to (OpenAI, and models Anthropic's table does not list)."
    )
    var cacheMinTokens = SimOptions().cacheMinTokens

    @Option(help: "Seconds a cached prompt prefix lives after its last use.")
    var cacheTtl = SimOptions().cacheTTLSeconds

    @Option(help: "Milliseconds to wait before every answer.")
    var latencyMs = SimOptions().latencyMs

    @Option(help: "Extra milliseconds to wait per output token.")
    var msPerOutputToken = SimOptions().msPerOutputToken

    @Option(help: "How far, in 0...1, each delay may stray from its mean (e.g. 0.2 for +/-20 %).")
    var jitter = SimOptions().jitter

    @Option(help: "Requests per minute each endpoint accepts before answering 429.")
    var rpm: Int?

    @Option(help: "Input tokens per minute each endpoint accepts (Anthropic's ITPM).")
    var inputTpm: Int?

    @Option(help: "Output tokens per minute each endpoint accepts (Anthropic's OTPM).")
    var outputTpm: Int?

    @Option(help: "Input plus output tokens per minute each endpoint accepts (OpenAI's TPM).")
    var tpm: Int?

    @Option(
        help: ArgumentHelp(
            "Random faults per API call, e.g. 429=0.1,500=0.05; echo400=1 for every call.",
            valueName: "name=p,..."))
    var faultRate = ""

    @Option(help: "Chance, in 0...1, that each item of a batched answer is damaged.")
    var damageRate = 0.0

    @Option(help: ArgumentHelp("Kinds of damage to draw from.", valueName: "kind,..."))
    var damage = DamagePolicy.Kind.allNames

    @Flag(
        help: ArgumentHelp(
            "Answer batched prompts as small models do (prose, keys of their own, stopped half way) unless "
                + "a JSON schema or a forced tool holds the answer to its shape."))
    var weakModel = false

    @Option(
        help: ArgumentHelp(
            "Batched prompts to model NAME get the items after position AFTER wrong (or, with "
                + "slope=RATE, the item at position p with a chance of p times RATE), KIND one of "
                + "wrong-label, neighbour, cut; repeatable.",
            valueName: "name:kind:after|slope=rate"))
    var degradingModel: [String] = []

    @Flag(
        name: .customLong("no-structured-output"),
        help:
            "Refuse requests that ask for a structured answer (response_format json_schema, a forced tool) with a 400."
    )
    var refuseStructuredOutput = false

    @Flag(
        help: ArgumentHelp(
            "Refuse response_format json_schema alone, as llama-cpp-python's server does (with "
                + "--structured-refusal-status 500), and hold json_object with a schema to its shape."))
    var refuseJsonSchema = false

    @Option(
        help: ArgumentHelp(
            "The status of a refusal: 400, or 500 as llama-cpp-python's server answers json_schema.",
            valueName: "400|500"))
    var structuredRefusalStatus = 400

    @Option(help: "Seed of the random fault, damage and latency sequences, to make them repeatable.")
    var seed: UInt64?

    @Option(help: "Seconds in the retry-after header of a 429 fault (the rate limiter computes its own).")
    var retryAfter = SimOptions().retryAfterSeconds

    @Option(help: "Seconds in the retry-after header of a 529 fault (503 at OpenAI); none by default.")
    var overloadedRetryAfter: Int?

    @Option(help: "Seconds a timeout fault waits before answering.")
    var timeoutDelay = SimOptions().timeoutDelaySeconds

    @Option(help: "Seconds from creating a provider batch until it has ended (0: on the first retrieve).")
    var batchDelay = SimOptions().batchDelaySeconds

    @Option(
        help:
            "Seconds of the provider's clock a batch's requests are answered over, evenly, as the prompt cache sees them (0: at once)."
    )
    var batchSpread = SimOptions().batchSpreadSeconds

    @Option(
        help:
            "Chance, in 0...1, that a provider batch request ends errored (repeatable per custom_id under --seed)."
    )
    var batchErrorRate = 0.0

    @Option(help: "Chance, in 0...1, that a provider batch request ends expired.")
    var batchExpireRate = 0.0

    @Option(help: "Chance, in 0...1, that a provider batch request ends canceled.")
    var batchCancelRate = 0.0

    @Option(
        help:
            "Chance, in 0...1, that a flex call (service_tier flex) is refused for capacity: a 429 resource_unavailable, not billed."
    )
    var flexRefuseRate = 0.0

    @Option(
        help:
            "Chance, in 0...1, that a flex call taken is answered at the default tier (service_tier default), billed at the live prices."
    )
    var flexAsDefaultRate = 0.0

    @Option(help: "How many times longer a flex call takes than a live one.")
    var flexSlowdown = SimOptions().flexSlowdown

    @Option(
        help: ArgumentHelp(
            "Exit at once, as a crash would, when API call N+1 arrives (after N calls).", valueName: "N"))
    var crashAfter: Int?

    @Option(help: "Require this API key (x-api-key for Anthropic, Authorization: Bearer for OpenAI).")
    var requireKey: String?

    @Option(help: "Serve the provider APIs under this path (/anthropic), as a proxy mounting them does.")
    var pathPrefix = SimOptions().pathPrefix

    @Flag(help: "Anthropic batches give results_url as a path, with no scheme or host.")
    var relativeResultsUrl = false

    @Option(help: "The origin Anthropic batches' results_url names instead of the sim's own.")
    var resultsOrigin: String?

    @Option(help: "Every batch results download answers this status (400-599).")
    var resultsStatus: Int?

    // Unconditional: the value may be negative (`--clock-offset -3600`), which would otherwise read
    // as an option.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds the sim's clock runs ahead of this machine's (negative: behind): the time answers "
                + "are made at, and DeepSeek's peak hours are read by.", valueName: "seconds"))
    var clockOffset = SimOptions().clockOffsetSeconds

    @Option(help: "Server log level on stderr (trace, debug, info, notice, warning, error, critical).")
    var logLevel = SimOptions().logLevel

    func validate() throws {
        do {
            try makeOptions().validate()
        } catch let error as SimConfigError {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let host = host
        let server = try SimServer(options: try makeOptions())
        try await server.run { port in
            // FileHandle writes straight to the descriptor: nothing waits in a buffer, so a test
            // reading stdout through a pipe sees the line at once.
            let line = "offpeak-sim listening on http://\(host):\(port)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }

    private func makeOptions() throws -> SimOptions {
        var options = SimOptions()
        options.host = host
        options.port = port
        options.summaryTokens = summaryTokens
        options.answerTokens = answerTokens
        options.cacheMinTokens = cacheMinTokens
        options.cacheTTLSeconds = cacheTtl
        options.latencyMs = latencyMs
        options.msPerOutputToken = msPerOutputToken
        options.jitter = jitter
        options.rateLimits = RateLimits(
            requestsPerMinute: rpm, inputTokensPerMinute: inputTpm, outputTokensPerMinute: outputTpm,
            tokensPerMinute: tpm)
        options.faultRates = try FaultRates(parsing: faultRate)
        options.damage = try DamagePolicy(rate: damageRate, parsing: damage)
        options.weakModel = weakModel
        options.degradingModels = try Degradation.models(parsing: degradingModel)
        options.structuredOutput = !refuseStructuredOutput
        options.jsonSchema = !refuseJsonSchema
        guard [400, 500].contains(structuredRefusalStatus) else {
            throw ValidationError(
                "--structured-refusal-status must be 400 or 500, got \(structuredRefusalStatus)")
        }
        options.structuredRefusalStatus = structuredRefusalStatus
        options.seed = seed
        options.retryAfterSeconds = retryAfter
        options.timeoutDelaySeconds = timeoutDelay
        options.overloadedRetryAfterSeconds = overloadedRetryAfter
        options.requireKey = requireKey
        options.batchDelaySeconds = batchDelay
        options.batchSpreadSeconds = batchSpread
        options.batchErrorRate = batchErrorRate
        options.batchExpireRate = batchExpireRate
        options.batchCancelRate = batchCancelRate
        options.flexRefuseRate = flexRefuseRate
        options.flexAsDefaultRate = flexAsDefaultRate
        options.flexSlowdown = flexSlowdown
        options.crashAfterCalls = crashAfter
        options.pathPrefix = pathPrefix
        options.relativeResultsURL = relativeResultsUrl
        options.resultsOrigin = resultsOrigin
        options.resultsStatus = resultsStatus
        options.logLevel = logLevel
        options.clockOffsetSeconds = clockOffset
        return options
    }
}
