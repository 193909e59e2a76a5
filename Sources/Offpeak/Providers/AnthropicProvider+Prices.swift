/// Claude's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token from Anthropic's price page; batch prices are half; a search
/// (`search_context_size_medium`, the default size offpeak asks for) $0.01, as LiteLLM lists it.
/// offpeak-sim answers as these models and is priced by them too.
extension AnthropicProvider {
    static let prices = """
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
          }
        }
        """
}
