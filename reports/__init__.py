"""netdojo.reports: what is made of results; the result records sit at its bottom."""
