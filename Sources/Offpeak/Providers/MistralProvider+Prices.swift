/// Mistral's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token from Mistral's pricing page (mistral.ai/pricing, read
/// 2026-11-29), and its batch jobs at half price.
extension Mistral {
    static let prices = """
        {
          "mistral-small-latest": {
            "input_cost_per_token": 1e-07,
            "output_cost_per_token": 3e-07,
            "input_cost_per_token_batches": 5e-08,
            "output_cost_per_token_batches": 1.5e-07,
            "max_input_tokens": 128000,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "mistral",
            "mode": "chat"
          },
          "mistral-medium-latest": {
            "input_cost_per_token": 4e-07,
            "output_cost_per_token": 2e-06,
            "input_cost_per_token_batches": 2e-07,
            "output_cost_per_token_batches": 1e-06,
            "max_input_tokens": 128000,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "mistral",
            "mode": "chat"
          },
          "mistral-large-latest": {
            "input_cost_per_token": 2e-06,
            "output_cost_per_token": 6e-06,
            "input_cost_per_token_batches": 1e-06,
            "output_cost_per_token_batches": 3e-06,
            "max_input_tokens": 128000,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "mistral",
            "mode": "chat"
          }
        }
        """
}
