"""Private helpers shared by the mechanisms, metrics and attacks."""
