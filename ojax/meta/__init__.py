"""Online multi-task / meta-learning of a bias: Aggressive, Lazy, ITL, Oracle, tuned-OGD baselines."""
