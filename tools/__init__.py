"""netdojo.tools."""
