"""One module per screen: runs → leaderboard → failures → prompt detail, and curves, help."""
