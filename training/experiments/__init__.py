"""Experiment analysis: the RL ablation, held-out scoring, pooled evaluations, gradient probes.

The lab notebook beside the library: these modules compare and report runs of the trainer (their
results are in ``docs/results/``). They import the library; ``training.algo``, ``.demos``, ``.sft``
and ``.rl`` never import them. The ``paraagent train rl ablation|pool|probe`` commands load them
on demand.
"""
