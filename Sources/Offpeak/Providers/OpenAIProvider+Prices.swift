/// OpenAI's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token from OpenAI's price page; batch prices are half; a search
/// (`search_context_size_medium`, the default size offpeak asks for) costs what each search model
/// lists (`gpt-4o-search-preview` $0.035, `gpt-4o-mini-search-preview` $0.0275), as LiteLLM lists it.
extension OpenAIProvider {
    static let prices = """
        {
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
          }
        }
        """
}
