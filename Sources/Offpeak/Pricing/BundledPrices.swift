/// The prices offpeak ships with, in LiteLLM's format, as a string literal so the library needs
/// no resource bundle. Dollars per token, from the providers' price pages; batch prices are half.
/// A newer LiteLLM file named by `offpeak.yaml` (`prices:`) overrides these entry by entry.
/// Gemini's `cache_creation_input_token_cost` is what making an explicit context cache costs a
/// token (`GeminiContextCaches`): its storage for the cache's 10 minutes (2.5 Flash and
/// Flash-Lite $1.00, Pro $4.50 per million tokens an hour) plus the read by the call that made it.
/// A search costs `search_context_size_medium` (offpeak asks for the default context size): Claude
/// $0.01, Gemini $0.035, OpenAI's search models their own (`gpt-4o-search-preview` $0.035,
/// `gpt-4o-mini-search-preview` $0.0275), as LiteLLM lists them.
enum BundledPrices {
    static let json = """
        {
          "claude-haiku-4-5": {
            "input_cost_per_token": 1e-06,
            "output_cost_per_token": 5e-06,
            "cache_creation_input_token_cost": 1.25e-06,
            "cache_read_input_token_cost": 1e-07,
            "input_cost_per_token_batches": 5e-07,
            "output_cost_per_token_batches": 2.5e-06,
            "max_input_tokens": 200000,
            "max_output_tokens": 64000,
            "max_tokens": 64000,
            "litellm_provider": "anthropic",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.01,
              "search_context_size_medium": 0.01,
              "search_context_size_high": 0.01
            },
            "mode": "chat"
          },
          "claude-sonnet-4-5": {
            "input_cost_per_token": 3e-06,
            "output_cost_per_token": 1.5e-05,
            "cache_creation_input_token_cost": 3.75e-06,
            "cache_read_input_token_cost": 3e-07,
            "input_cost_per_token_batches": 1.5e-06,
            "output_cost_per_token_batches": 7.5e-06,
            "max_input_tokens": 200000,
            "max_output_tokens": 64000,
            "max_tokens": 64000,
            "litellm_provider": "anthropic",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.01,
              "search_context_size_medium": 0.01,
              "search_context_size_high": 0.01
            },
            "mode": "chat"
          },
          "claude-opus-4-1": {
            "input_cost_per_token": 1.5e-05,
            "output_cost_per_token": 7.5e-05,
            "cache_creation_input_token_cost": 1.875e-05,
            "cache_read_input_token_cost": 1.5e-06,
            "input_cost_per_token_batches": 7.5e-06,
            "output_cost_per_token_batches": 3.75e-05,
            "max_input_tokens": 200000,
            "max_output_tokens": 32000,
            "max_tokens": 32000,
            "litellm_provider": "anthropic",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.01,
              "search_context_size_medium": 0.01,
              "search_context_size_high": 0.01
            },
            "mode": "chat"
          },
          "claude-opus-4-5": {
            "input_cost_per_token": 5e-06,
            "output_cost_per_token": 2.5e-05,
            "cache_creation_input_token_cost": 6.25e-06,
            "cache_read_input_token_cost": 5e-07,
            "input_cost_per_token_batches": 2.5e-06,
            "output_cost_per_token_batches": 1.25e-05,
            "max_input_tokens": 200000,
            "max_output_tokens": 64000,
            "max_tokens": 64000,
            "litellm_provider": "anthropic",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.01,
              "search_context_size_medium": 0.01,
              "search_context_size_high": 0.01
            },
            "mode": "chat"
          },
          "gpt-4o-mini": {
            "input_cost_per_token": 1.5e-07,
            "output_cost_per_token": 6e-07,
            "cache_read_input_token_cost": 7.5e-08,
            "input_cost_per_token_batches": 7.5e-08,
            "output_cost_per_token_batches": 3e-07,
            "max_input_tokens": 128000,
            "max_output_tokens": 16384,
            "max_tokens": 16384,
            "litellm_provider": "openai",
            "mode": "chat"
          },
          "gpt-4o-search-preview": {
            "input_cost_per_token": 2.5e-06,
            "output_cost_per_token": 1e-05,
            "cache_read_input_token_cost": 1.25e-06,
            "input_cost_per_token_batches": 1.25e-06,
            "output_cost_per_token_batches": 5e-06,
            "max_input_tokens": 128000,
            "max_output_tokens": 16384,
            "max_tokens": 16384,
            "litellm_provider": "openai",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.03,
              "search_context_size_medium": 0.035,
              "search_context_size_high": 0.05
            },
            "mode": "chat"
          },
          "gpt-4o-mini-search-preview": {
            "input_cost_per_token": 1.5e-07,
            "output_cost_per_token": 6e-07,
            "cache_read_input_token_cost": 7.5e-08,
            "input_cost_per_token_batches": 7.5e-08,
            "output_cost_per_token_batches": 3e-07,
            "max_input_tokens": 128000,
            "max_output_tokens": 16384,
            "max_tokens": 16384,
            "litellm_provider": "openai",
            "search_context_cost_per_query": {
              "search_context_size_low": 0.025,
              "search_context_size_medium": 0.0275,
              "search_context_size_high": 0.03
            },
            "mode": "chat"
          },
          "gpt-4.1": {
            "input_cost_per_token": 2e-06,
            "output_cost_per_token": 8e-06,
            "cache_read_input_token_cost": 5e-07,
            "input_cost_per_token_batches": 1e-06,
            "output_cost_per_token_batches": 4e-06,
            "max_input_tokens": 1047576,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "openai",
            "mode": "chat"
          },
          "gpt-4.1-mini": {
            "input_cost_per_token": 4e-07,
            "output_cost_per_token": 1.6e-06,
            "cache_read_input_token_cost": 1e-07,
            "input_cost_per_token_batches": 2e-07,
            "output_cost_per_token_batches": 8e-07,
            "max_input_tokens": 1047576,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "openai",
            "mode": "chat"
          },
          "o3": {
            "input_cost_per_token": 2e-06,
            "output_cost_per_token": 8e-06,
            "cache_read_input_token_cost": 5e-07,
            "input_cost_per_token_batches": 1e-06,
            "output_cost_per_token_batches": 4e-06,
            "input_cost_per_token_flex": 1e-06,
            "output_cost_per_token_flex": 4e-06,
            "cache_read_input_token_cost_flex": 2.5e-07,
            "max_input_tokens": 200000,
            "max_output_tokens": 100000,
            "max_tokens": 100000,
            "litellm_provider": "openai",
            "mode": "chat"
          },
          "gpt-5": {
            "input_cost_per_token": 1.25e-06,
            "output_cost_per_token": 1e-05,
            "cache_read_input_token_cost": 1.25e-07,
            "input_cost_per_token_batches": 6.25e-07,
            "output_cost_per_token_batches": 5e-06,
            "input_cost_per_token_flex": 6.25e-07,
            "output_cost_per_token_flex": 5e-06,
            "cache_read_input_token_cost_flex": 6.25e-08,
            "max_input_tokens": 272000,
            "max_output_tokens": 128000,
            "max_tokens": 128000,
            "litellm_provider": "openai",
            "mode": "chat"
          },
          "gpt-5-mini": {
            "input_cost_per_token": 2.5e-07,
            "output_cost_per_token": 2e-06,
            "cache_read_input_token_cost": 2.5e-08,
            "input_cost_per_token_batches": 1.25e-07,
            "output_cost_per_token_batches": 1e-06,
            "input_cost_per_token_flex": 1.25e-07,
            "output_cost_per_token_flex": 1e-06,
            "cache_read_input_token_cost_flex": 1.25e-08,
            "max_input_tokens": 272000,
            "max_output_tokens": 128000,
            "max_tokens": 128000,
            "litellm_provider": "openai",
            "mode": "chat"
          },
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
