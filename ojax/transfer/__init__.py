"""Online transfer learning: kernels, kernel PA, PAIO, OTL, COTL and their baselines."""
