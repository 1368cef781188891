"""Training: cold-start demonstrations (``training.demos``), SFT (``training.sft``) and shared config plumbing."""
