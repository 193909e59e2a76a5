/// DeepSeek's prices, in LiteLLM's format (`PriceTable`), as a string literal so the library needs no
/// resource bundle: dollars per token at the list (peak) price from DeepSeek's pricing page
/// (api-docs.deepseek.com/quick_start/pricing, read 2026-11-29): cache-miss input, cache-hit input
/// (`cache_read_input_token_cost`) and output. Peak hours are 01:00–04:00 and 06:00–10:00 UTC,
/// Monday to Friday; every other hour, weekends whole, bills at half (`price_windows`). DeepSeek has
/// no batch API.
extension DeepSeek {
    static let prices = """
        {
          "deepseek-flash": {
            "input_cost_per_token": 3e-07,
            "output_cost_per_token": 1.2e-06,
            "cache_read_input_token_cost": 6e-09,
            "litellm_provider": "deepseek",
            "mode": "chat",
            "price_windows": \(offPeak)
          },
          "deepseek-v4-pro": {
            "input_cost_per_token": 1.32e-06,
            "output_cost_per_token": 3.96e-06,
            "cache_read_input_token_cost": 4.4e-08,
            "litellm_provider": "deepseek",
            "mode": "chat",
            "price_windows": \(offPeak)
          }
        }
        """

    /// Half price off-peak: the hours of a weekday outside 01:00–04:00 and 06:00–10:00 UTC, and all
    /// of Saturday and Sunday.
    static let offPeak = """
        {
              "source": "api-docs.deepseek.com/quick_start/pricing, read 2026-11-29",
              "time_zone": "UTC",
              "outside": "peak",
              "windows": [
                {"name": "off-peak", "days": "mon-fri", "hours": ["00:00-01:00", "04:00-06:00", "10:00-24:00"], "factor": 0.5},
                {"name": "off-peak", "days": ["sat", "sun"], "factor": 0.5}
              ]
            }
        """
}
