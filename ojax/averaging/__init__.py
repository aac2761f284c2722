"""Iterate averaging: Polyak-Ruppert, geometric, tail; the regularization path; the chunk merge."""
