"""netdojo.judges."""
