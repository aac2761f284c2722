"""Parameter-free learners: KT and ONS coin betting, direction-magnitude reduction."""

from ojax.parameter_free.betting import (
    BETTORS,
    BettorState,
    CoinBettingParams,
    CoinBettingState,
    DirectionMagnitudeParams,
    DirectionMagnitudeState,
    bettor_bet,
    bettor_init,
    bettor_update,
    bettor_wealth,
    coin_betting,
    direction_magnitude,
    direction_update,
    dm_init,
    dm_iterate,
    dm_update,
)

__all__ = [
    "BETTORS",
    "BettorState",
    "CoinBettingParams",
    "CoinBettingState",
    "DirectionMagnitudeParams",
    "DirectionMagnitudeState",
    "bettor_bet",
    "bettor_init",
    "bettor_update",
    "bettor_wealth",
    "coin_betting",
    "direction_magnitude",
    "direction_update",
    "dm_init",
    "dm_iterate",
    "dm_update",
]
