"""netdojo.servers."""
