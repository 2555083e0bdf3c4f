"""Rule ablation: each hand-written rule (qa/rules.toml) turned off in turn, measured through the
product's answer path on the hand-written set and on RealTime QA 2025, the model's replies replayed."""
