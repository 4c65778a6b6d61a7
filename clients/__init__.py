"""netdojo.clients."""
