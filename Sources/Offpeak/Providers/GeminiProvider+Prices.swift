/// Gemini's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token from Google's price page; batch prices are half; a search
/// $0.035, as LiteLLM lists it. `cache_creation_input_token_cost` is what making an explicit
/// context cache costs a token (`GeminiContextCaches`): its storage for the cache's 10 minutes
/// (2.5 Flash and Flash-Lite $1.00, Pro $4.50 per million tokens an hour) plus the read by the
/// call that made it.
extension GeminiProvider {
    static let prices = """
        {
          "gemini-2.5-flash-lite": {
            "input_cost_per_token": 1e-07,
            "output_cost_per_token": 4e-07,
            "cache_creation_input_token_cost": 1.7667e-07,
            "cache_read_input_token_cost": 1e-08,
            "input_cost_per_token_batches": 5e-08,
            "output_cost_per_token_batches": 2e-07,
            "max_input_tokens": 1048576,
            "max_output_tokens": 65536,
            "max_tokens": 65536,
            "litellm_provider": "gemini",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.035,
              "search_context_size_medium": 0.035,
              "search_context_size_high": 0.035
            },
            "mode": "chat"
          },
          "gemini-2.5-flash": {
            "input_cost_per_token": 3e-07,
            "output_cost_per_token": 2.5e-06,
            "cache_creation_input_token_cost": 1.9667e-07,
            "cache_read_input_token_cost": 3e-08,
            "input_cost_per_token_batches": 1.5e-07,
            "output_cost_per_token_batches": 1.25e-06,
            "max_input_tokens": 1048576,
            "max_output_tokens": 65536,
            "max_tokens": 65536,
            "litellm_provider": "gemini",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.035,
              "search_context_size_medium": 0.035,
              "search_context_size_high": 0.035
            },
            "mode": "chat"
          },
          "gemini-2.5-pro": {
            "input_cost_per_token": 1.25e-06,
            "output_cost_per_token": 1e-05,
            "cache_creation_input_token_cost": 8.75e-07,
            "cache_read_input_token_cost": 1.25e-07,
            "input_cost_per_token_batches": 6.25e-07,
            "output_cost_per_token_batches": 5e-06,
            "max_input_tokens": 1048576,
            "max_output_tokens": 65536,
            "max_tokens": 65536,
            "litellm_provider": "gemini",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.035,
              "search_context_size_medium": 0.035,
              "search_context_size_high": 0.035
            },
            "mode": "chat"
          }
        }
        """
}
