"""Parameter-free learners: KT and ONS coin betting, direction-magnitude reduction."""
