/// Groq's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token from Groq's pricing page, and its Batch API at 25% off
/// (console.groq.com/docs/batch, read 2026-11-29) for the two models it names for batches.
extension Groq {
    static let prices = """
        {
          "llama-3.1-8b-instant": {
            "input_cost_per_token": 5e-08,
            "output_cost_per_token": 8e-08,
            "input_cost_per_token_batches": 3.75e-08,
            "output_cost_per_token_batches": 6e-08,
            "max_input_tokens": 131072,
            "max_output_tokens": 8192,
            "max_tokens": 8192,
            "litellm_provider": "groq",
            "mode": "chat"
          },
          "llama-3.3-70b-versatile": {
            "input_cost_per_token": 5.9e-07,
            "output_cost_per_token": 7.9e-07,
            "input_cost_per_token_batches": 4.425e-07,
            "output_cost_per_token_batches": 5.925e-07,
            "max_input_tokens": 131072,
            "max_output_tokens": 32768,
            "max_tokens": 32768,
            "litellm_provider": "groq",
            "mode": "chat"
          }
        }
        """
}
