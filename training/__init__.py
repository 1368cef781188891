"""Training: cold-start demos (``training.demos``), SFT (``training.sft``), RL, config plumbing."""
