"""netdojo.scenarios."""
